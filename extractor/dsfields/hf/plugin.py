"""accelerate's YAML config ↔ the ds_config its ``DeepSpeedPlugin`` builds, per release (``dsfields convert``).

``accelerate launch --config_file X.yaml`` turns the YAML into environment variables
(``utils/launch.py`` ``prepare_deepspeed_cmd_env``), ``DeepSpeedPlugin.__post_init__`` reads them back into its
attributes and builds the ds_config (its own ``config = {...}`` literal, or the ``deepspeed_config_file`` with its
``"auto"`` values filled), and ``AcceleratorState`` calls ``set_mixed_precision``. Every step here is one of those,
read per release from ``generated/hf/accelerate-V.json`` (:mod:`dsfields.extract.hf.rule_witness`): which YAML
key becomes which variable and with what expression, the expression each attribute is read with and its
default, the plugin's config literal, its writes and refusals, the mixed-precision sections. Nothing of accelerate
is imported. What the code here adds is the control flow between those steps (which branch, in which order),
named with accelerate's line numbers; ``tests/test_convert_accelerate.py`` runs accelerate's own
``DeepSpeedPlugin`` on a corpus of real YAML files and requires the same ds_config on every one.

Imports: stdlib and the ``hf``/``model`` layers only.
"""

from __future__ import annotations

import copy
import json
import math
import os

from dsfields.hf.pair_rules import Unreadable, evaluate, truth
from dsfields.model import chinese
from dsfields.model.errors import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

DS_CONFIG_BYTES = 8 * 1024 * 1024
"""Largest ``deepspeed_config_file`` read (the bound of every config dsfields reads)."""


class AccelerateRefusal(Exception):
    """What accelerate itself raises for this YAML (its exception type, its message, its source line)."""

    def __init__(self, kind: str, message: str, line: int | None, where: str = "utils/dataclasses.py") -> None:
        super().__init__(message)
        self.kind, self.message, self.line, self.where = kind, message, line, where


class _HfDeepSpeedConfig:
    """Stands for accelerate's ``HfDeepSpeedConfig`` in ``isinstance`` tests (never constructed)."""


def _str_to_bool(value: str) -> int:
    """accelerate ``utils/environment.py`` ``str_to_bool`` (0.21: ``strtobool``): 1 for y/yes/t/true/on/1, 0 for
    n/no/f/false/off/0, ValueError otherwise."""
    value = value.lower()
    if value in ("y", "yes", "t", "true", "on", "1"):
        return 1
    if value in ("n", "no", "f", "false", "off", "0"):
        return 0
    raise ValueError(f"invalid truth value {value}")


class Conversion:
    """One YAML → ds_config conversion: the ``config`` (as the plugin holds it, ``steps_per_print`` infinite),
    the plugin's attributes, the environment ``accelerate launch`` would export and ``notes``: one line for each
    thing that does not carry over into the ds_config."""

    def __init__(self, version: str) -> None:
        self.version = version
        self.config: dict[str, Any] = {}
        self.attributes: dict[str, Any] = {}
        self.env: dict[str, str] = {}
        self.notes: list[tuple[str, str]] = []
        """(English, Chinese) lines."""
        self.config_file: str | None = None
        self.world: tuple[int, int] | None = None
        """(num_processes, num_machines) of the YAML when both are whole numbers: the world accelerate launches."""

    def file_config(self) -> dict[str, Any]:
        """The ds_config to write as JSON: ``steps_per_print`` (infinite, which JSON cannot hold) left out."""
        out = copy.deepcopy(self.config)
        if isinstance(out.get("steps_per_print"), float) and math.isinf(out["steps_per_print"]):
            del out["steps_per_print"]
        return out


# ---------------------------------------------------------------- the release's rules


def accelerate_rules(version: str | None) -> tuple[str, dict[str, Any]]:
    """(version, the ``rules`` of ``generated/hf/accelerate-V.json``): ``version``, else the installed accelerate
    when snapshotted (its version read from its metadata, never imported), else the newest snapshotted."""
    from dsfields.hf.pair_rules import accelerate_versions, load_accelerate_snapshot

    known = accelerate_versions()
    if version is None:
        try:
            from importlib.metadata import PackageNotFoundError
            from importlib.metadata import version as installed

            try:
                mine = installed("accelerate")
            except PackageNotFoundError:
                mine = None
        except ImportError:  # pragma: no cover - stdlib since 3.8
            mine = None
        version = mine if mine in known else (known[-1] if known else None)
    if version is None or version not in known:
        near = ", ".join(known[-3:])
        raise UsageError(f"--accelerate-version {version}: no snapshot of that accelerate release (generated/hf/ has "
                         f"{len(known)}, the newest {near})")
    snap = load_accelerate_snapshot(version)
    if not snap or not isinstance(snap.get("rules"), dict):
        raise UsageError(f"--accelerate-version {version}: its snapshot cannot be read")
    rules = snap["rules"]
    if not rules.get("plugin_config") or not (rules.get("launch_env") or {}).get("exports"):
        raise UsageError(f"accelerate {version}: its snapshot lacks the plugin's config or the launch's variables "
                         "(re-extract with python -m dsfields.extract.hf.rule_witness)")
    return version, rules


# ---------------------------------------------------------------- YAML → environment (accelerate launch)


def launch_environment(data: dict[str, Any], rules: dict[str, Any], version: str,
                       notes: list[tuple[str, str]], flags: dict[str, str] | None = None) -> dict[str, str]:
    """The variables ``accelerate launch`` exports for DeepSpeed from the YAML and the launch flags
    (``prepare_deepspeed_cmd_env``): each ``deepspeed_config`` key becomes the launch argument of the same name
    unless the command line gave it (``_validate_launch_command``), and is exported by the release's own expression
    when not None; the others are said in ``notes``."""
    ds = data.get("deepspeed_config")
    ds = ds if isinstance(ds, dict) else {}
    flags = flags or {}
    exports = rules["launch_env"]["exports"]
    reads = set(rules["launch_env"].get("reads") or [])
    plugin_envs = {record["env"] for record in (rules.get("plugin_env") or {}).values()}
    args = {f"args.{key}": value for key, value in ds.items()}
    args.update({f"args.{key}": value for key, value in flags.items() if key != "mixed_precision"})
    mixed = flags.get("mixed_precision") or data.get("mixed_precision")
    # launch_command: the YAML's deepspeed_config keys, and mixed_precision when it came from the YAML
    from_yaml = not flags.get("mixed_precision") and data.get("mixed_precision") is not None
    fields = list(ds) + (["mixed_precision"] if from_yaml else [])
    args["args.deepspeed_fields_from_accelerate_config"] = ",".join(fields)
    env: dict[str, str] = {}
    for key, export in sorted(exports.items(), key=lambda kv: kv[1].get("line") or 0):
        if args.get(f"args.{key}") is None:
            continue
        try:
            env[export["env"]] = str(evaluate(export["value"], args))
        except (Unreadable, TypeError, ValueError, AttributeError) as exc:
            notes.append((f"deepspeed_config.{key}: accelerate {version}'s launch expression {export['value']} "
                          f"could not be evaluated here ({exc})",
                          chinese.text("hf.plugin.deepspeed_config_accelerate_s_launch_expression", key_=key,
                                       version=version, export_value=export['value'], exc=exc)))
    # ACCELERATE_MIXED_PRECISION: PrecisionType(args.mixed_precision.lower()), "no" when the YAML has none
    precision = "no" if mixed is None else mixed
    if not isinstance(precision, str):
        raise AccelerateRefusal("AttributeError", f"mixed_precision: {precision!r} is not text (accelerate calls "
                                ".lower() on it; write 'no' in quotes: unquoted no is YAML's false)", None)
    env["ACCELERATE_MIXED_PRECISION"] = precision.lower()
    for key in ds:
        if key in exports and exports[key]["env"] not in plugin_envs and key not in ("deepspeed_config_file",
                                                                                      "deepspeed_fields_from_"
                                                                                      "accelerate_config"):
            if key in ("deepspeed_moe_layer_cls_names",):
                notes.append((f"deepspeed_config.{key}: read by accelerate at prepare (the MoE leaf modules), "
                              "not a ds_config key",
                              chinese.text("hf.plugin.deepspeed_config_read_by_accelerate_at", key_=key)))
            else:
                notes.append((f"deepspeed_config.{key}: exported as {exports[key]['env']}, which accelerate "
                              f"{version}'s DeepSpeedPlugin does not read into the ds_config",
                              chinese.text("hf.plugin.deepspeed_config_exported_as_which_accelerate", key_=key,
                                           exports_key_env=exports[key]['env'], version=version)))
        elif key not in exports and key in reads:
            notes.append((f"deepspeed_config.{key}: a launcher setting of accelerate launch (how the processes "
                          "start), not a ds_config key",
                          chinese.text("hf.plugin.deepspeed_config_a_launcher_setting_of", key_=key)))
        elif key not in exports:
            notes.append((f"deepspeed_config.{key}: accelerate {version}'s launch never passes it on; it sets "
                          "nothing in the ds_config",
                          chinese.text("hf.plugin.deepspeed_config_accelerate_s_launch_never", key_=key,
                                       version=version)))
    return env


LAUNCH_OPTIONS = ("mixed_precision", "num_processes", "num_machines")
"""``accelerate launch`` options outside the DeepSpeed group that decide the ds_config or the world."""


def launch_flags(words: list[str], rules: dict[str, Any], version: str) -> dict[str, str]:
    """``accelerate launch`` options (``--zero_stage 3``, ``--offload_optimizer_device=cpu``, ``--use_deepspeed``)
    as name → text; a name the release's launch neither reads nor exports is refused in one line."""
    known = set(rules["launch_env"].get("reads") or []) | set(rules["launch_env"]["exports"]) | set(LAUNCH_OPTIONS)
    out: dict[str, str] = {}
    index = 0
    while index < len(words):
        word = words[index]
        if not word.startswith("--") or len(word) < 3:
            raise UsageError(f"--launch-args: {word!r} is not an accelerate launch option (--name value)")
        name, equals, value = word[2:].partition("=")
        name = name.replace("-", "_")
        if name == "use_deepspeed":
            out[name] = "true"
            index += 1
            continue
        if name not in known:
            raise UsageError(f"--launch-args: --{name} is not an option accelerate {version}'s launch passes to "
                             "DeepSpeed")
        if not equals:
            index += 1
            if index >= len(words):
                raise UsageError(f"--launch-args: --{name} needs a value")
            value = words[index]
        out[name] = value
        index += 1
    return out


# ---------------------------------------------------------------- environment → DeepSpeedPlugin


def _attribute_names(env: dict[str, str]) -> dict[str, Any]:
    return {"os.environ.get": env.get, "os.getenv": env.get, "str_to_bool": _str_to_bool,
            "strtobool": _str_to_bool, "isinstance": isinstance, "dict": dict, "str": str,
            "HfDeepSpeedConfig": _HfDeepSpeedConfig}


def _read_attribute(name: str, record: dict[str, Any], names: dict[str, Any]) -> tuple[bool, Any]:
    """(set?, value) of one plugin attribute constructed with no argument (``self.X is None``)."""
    scope = dict(names)
    scope[f"self.{name}"] = None
    if record.get("local"):
        scope[record["local"]] = evaluate(record["local_value"], scope)
    if not all(truth(cond, scope) for cond in record.get("when", [])):
        return False, None
    return True, evaluate(record["value"], scope)


def _template(node: dict[str, Any], names: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in node.items():
        if set(value) == {"expr"} and isinstance(value["expr"], str):
            out[key] = evaluate(value["expr"], names)
        else:
            out[key] = _template(value, names)
    return out


def _node(config: dict[str, Any], path: str) -> tuple[dict[str, Any] | None, str]:
    """accelerate ``HfDeepSpeedConfig.find_config_node``: the dict holding the last key, or None."""
    *parents, last = path.split(".")
    node: Any = config
    for part in parents:
        node = node.get(part) if isinstance(node, dict) else None
        if node is None:
            return None, last
    return (node if isinstance(node, dict) else None), last


def build(data: dict[str, Any], version: str | None = None, base: str | None = None,
          config_files: dict[str, dict[str, Any]] | None = None, name: str = "<config>",
          rules: dict[str, Any] | None = None, flags: dict[str, str] | None = None) -> Conversion:
    """The ds_config accelerate ``version``'s ``DeepSpeedPlugin`` holds for the YAML ``data`` after
    ``set_mixed_precision`` (what ``accelerate launch --config_file`` hands the script). ``base``: the folder a
    relative ``deepspeed_config_file`` is also looked for in when the current folder lacks it.
    ``config_files``: ds_configs not yet written, by the path the YAML names; ``name``: the YAML's path as given
    (accelerate's messages name it); ``rules``: a release's rules given directly (else read from its snapshot);
    ``flags``: ``accelerate launch`` options (name → text, :func:`launch_flags`), which win over the YAML.
    :class:`AccelerateRefusal` when accelerate would raise."""
    if rules is None or version is None:
        version, rules = accelerate_rules(version)
    out = Conversion(version)
    if str(data.get("distributed_type", "")).upper() != "DEEPSPEED" and "use_deepspeed" not in (flags or {}):
        raise UsageError(f"distributed_type is {data.get('distributed_type')!r}, not DEEPSPEED: accelerate builds no "
                         "ds_config for this YAML")
    _config_file_keys(data, rules, name)
    if "fp16" in ((rules.get("config_file_checks") or {}).get("legacy_keys") or ()) and "mixed_precision" not in data:
        # process_config: the old YAML's fp16 key becomes mixed_precision (fp16 when true, None otherwise)
        data = {**data, "mixed_precision": "fp16" if data.get("fp16") else None}
    refusal = (rules.get("launch_refusals") or {}).get("num_processes")
    if refusal and data.get("num_processes", -1) == -1 and not (flags or {}).get("num_processes"):
        # _validate_launch_command: a YAML without num_processes (ClusterConfig's -1) needs --num_processes
        raise AccelerateRefusal(refusal["type"], refusal["message"], refusal.get("line"), "commands/launch.py")
    env = launch_environment(data, rules, version, out.notes, flags)
    out.env = env
    names = _attribute_names(env)
    attributes: dict[str, Any] = {}
    plugin_env = rules.get("plugin_env") or {}
    for name, record in sorted(plugin_env.items(), key=lambda kv: kv[1].get("line") or 0):
        if name == "zero3_init_flag":
            continue  # read after the config exists (it asks hf_ds_config.is_zero3())
        try:
            done, value = _read_attribute(name, record, names)
        except (Unreadable, ValueError, TypeError) as exc:
            raise AccelerateRefusal(type(exc).__name__ if not isinstance(exc, Unreadable) else "ValueError",
                                    f"{record.get('env')}={env.get(record.get('env', ''))!r}: accelerate "
                                    f"{version} reads it with {record.get('value')} ({exc})",
                                    record.get("line")) from None
        attributes[name] = value if done else None
    for name, value in attributes.items():
        names[f"self.{name}"] = value
    hf_ds_config = attributes.get("hf_ds_config")
    file_branch = isinstance(hf_ds_config, str) and hf_ds_config != "none"
    writes = rules.get("post_init_writes") or []
    if file_branch:
        config = copy.deepcopy(config_files[hf_ds_config]) if config_files and hf_ds_config in config_files \
            else _config_file(hf_ds_config, base)
        if not (config_files and hf_ds_config in config_files) and not os.path.exists(hf_ds_config):
            out.notes.append((f"deepspeed_config_file: {hf_ds_config} is not found from the current folder, so it "
                              "was read beside the YAML; accelerate opens it from the folder you launch in",
                              chinese.text("hf.plugin.deepspeed_config_file_is_not_found", hf_ds_config=hf_ds_config)))
        out.config_file = hf_ds_config
        names["self.hf_ds_config.config"] = config
        for write in writes:  # gradient_accumulation_steps: 1 when absent
            if write["path"] != "steps_per_print" and all(truth(c, names) for c in write["when"]) and \
                    "hf_ds_config.config" in " ".join(write["when"]):
                config[write["path"]] = evaluate(write["value"], names)
        for raised in rules.get("post_init_raises") or []:
            if "hf_ds_config.config" in " ".join(raised["when"]) and all(truth(c, names) for c in raised["when"]):
                raise AccelerateRefusal(raised["type"], raised["message"], raised.get("line"))
        ignored = rules.get("ignored_with_config_file") or {}
        fields = env.get("ACCELERATE_CONFIG_DS_FIELDS", "").split(",")
        if ignored.get("names") and any(name in ignored["names"] for name in fields):
            error = ignored.get("error") or {}
            raise AccelerateRefusal(error.get("type", "ValueError"), str(error.get("message", "")).replace(
                "{env_variable_names_to_ignore}", str(ignored["names"])), error.get("line"))
        # fill_match(key, must_match=False): an "auto" value takes the plugin attribute's
        for attribute, path in (rules.get("plugin_to_config") or {}).items():
            value = attributes.get(attribute)
            node, key = _node(config, path)
            if value is not None and node is not None and node.get(key) == "auto":
                node[key] = value
        for attribute, path in (rules.get("plugin_to_config") or {}).items():  # the attributes from the file
            node, key = _node(config, path)
            if node is not None and node.get(key) is not None and node.get(key) != "auto":
                attributes[attribute] = node[key]
                names[f"self.{attribute}"] = node[key]
    else:
        plugin_config = rules["plugin_config"]
        config = _template(plugin_config["value"], names)
        names["config"] = config
        for write in writes:  # gradient_clipping when set
            if write["path"] != "steps_per_print" and "hf_ds_config.config" not in " ".join(write["when"]) and \
                    write["path"] != "msamp" and all(truth(c, names) for c in write["when"]):
                config[write["path"]] = evaluate(write["value"], names)
    names["self.deepspeed_config"] = config
    for write in writes:
        if write["path"] in ("steps_per_print", "msamp") and all(truth(c, names) for c in write["when"]):
            config[write["path"]] = evaluate(write["value"], names)
    stage = (config.get("zero_optimization") or {}).get("stage") if isinstance(config.get("zero_optimization"),
                                                                                 dict) else None
    names["self.hf_ds_config.is_zero3"] = lambda: stage == 3
    record = plugin_env.get("zero3_init_flag")
    if record is not None:
        try:
            done, flag = _read_attribute("zero3_init_flag", record, names)
        except (Unreadable, ValueError, TypeError) as exc:
            raise AccelerateRefusal("ValueError", f"ACCELERATE_DEEPSPEED_ZERO3_INIT: {exc}", record.get("line")) \
                from None
        attributes["zero3_init_flag"] = bool(flag) and stage == 3 if done else None
    _set_mixed_precision(config, env["ACCELERATE_MIXED_PRECISION"], rules, names, out.notes, version)
    out.config, out.attributes = config, attributes
    processes, machines = data.get("num_processes"), data.get("num_machines", 1)
    for key in ("num_processes", "num_machines"):
        if (flags or {}).get(key, "").isdigit():
            processes, machines = (int(flags[key]), machines) if key == "num_processes" else (processes,
                                                                                              int(flags[key]))
    if isinstance(processes, int) and isinstance(machines, int) and not isinstance(processes, bool) and \
            0 < machines <= processes and processes % machines == 0:
        out.world = (processes, machines)
    _notes(out, data, rules)
    return out


def _config_file_keys(data: dict[str, Any], rules: dict[str, Any], name: str) -> None:
    """``load_config_from_file``: a top-level key ``ClusterConfig`` lacks (legacy ``fp16``/``dynamo_backend``
    converted first) is refused with ``from_yaml_file``'s message; releases without that test (before 0.23) pass
    the keys to the dataclass, whose constructor refuses the first (Python's own message)."""
    known = rules.get("config_file_keys")
    if not known:
        return
    checks = rules.get("config_file_checks") or {}
    legacy = set(checks.get("legacy_keys") or ("fp16", "dynamo_backend"))
    extra = sorted(set(data) - legacy - set(known))
    if not extra:
        return
    error = checks.get("unknown_keys")
    if error:
        raise AccelerateRefusal(error["type"], error["message"].replace("{yaml_file}", name).replace(
            "{extra_keys}", str(extra)), error.get("line"), "commands/config/config_args.py")
    first = next(k for k in data if k in extra)
    raise AccelerateRefusal("TypeError", f"ClusterConfig.__init__() got an unexpected keyword argument '{first}'",
                            None, "commands/config/config_args.py")


def _config_file(path: str, base: str | None) -> dict[str, Any]:
    """The ``deepspeed_config_file`` as ``HfDeepSpeedConfig`` loads it (``json.load``), through the bounded reader."""
    from dsfields.model.readfile import UnreadableFile, read_text

    candidates = [path] + ([os.path.join(base, path)] if base and not os.path.isabs(path) else [])
    found = next((c for c in candidates if os.path.exists(c)), path)
    try:
        text = read_text(found, DS_CONFIG_BYTES, "a DeepSpeed config")
    except UnreadableFile as exc:
        raise UsageError(f"deepspeed_config_file {exc}") from None
    try:
        config = json.loads(text)
    except RecursionError:
        raise UsageError(f"deepspeed_config_file {found}: nested too deep for Python's json") from None
    except ValueError as exc:
        raise UsageError(f"deepspeed_config_file {found}: not JSON ({str(exc).splitlines()[0]})") from None
    if not isinstance(config, dict):
        raise UsageError(f"deepspeed_config_file {found}: not a JSON object")
    return config


def _set_mixed_precision(config: dict[str, Any], mixed: str, rules: dict[str, Any], names: dict[str, Any],
                         notes: list[tuple[str, str]], version: str) -> None:
    """``DeepSpeedPlugin.set_mixed_precision`` from the release's recorded sections, clash and fills."""
    rule = rules.get("mixed_precision") or {}
    scope = {**names, "mixed_precision": mixed, "ds_config": config, "is_rocm_available": lambda: False}
    for added in rule.get("added_sections") or []:
        section = added["section"]
        if section in ("{dtype}",):
            continue
        if section == "communication_data_type":
            if mixed in ("bf16", "fp8"):
                notes.append((f"communication_data_type: on ROCm accelerate {version} also sets it to "
                              f"{added['value']!r} (utils/dataclasses.py:{added['line']}); this ds_config is for "
                              "CUDA",
                              chinese.text("hf.plugin.communication_data_type_on_rocm_accelerate", version=version,
                                           added_value=added['value'], added_line=added['line'])))
            continue
        if all(truth(c, scope) for c in added["when"]):
            value = added["value"]
            config[section] = evaluate(value["expr"], scope) if isinstance(value, dict) and set(value) == {
                "expr"} else copy.deepcopy(value)
    clash = rule.get("clash")
    if clash:
        other = "bf16" if mixed == "fp16" else "fp16"
        scope["diff_dtype"] = other
        if all(truth(c, scope) for c in clash["when"]):
            raise AccelerateRefusal(clash["type"], clash["message"].replace("{mixed_precision}", mixed).replace(
                "{diff_dtype}", other), clash.get("line"))
    for added in rule.get("added_sections") or []:
        if added["section"] == "{dtype}":
            for dtype in ("fp16", "bf16"):  # the loop around it: for dtype in ["fp16", "bf16"]
                if all(truth(c, {**scope, "dtype": dtype}) for c in added["when"]):
                    config[dtype] = copy.deepcopy(added["value"])
    for path, expr in (rule.get("fills") or {}).items():
        node, key = _node(config, path)
        if node is not None and node.get(key) == "auto":
            node[key] = evaluate(expr, scope)


def _notes(out: Conversion, data: dict[str, Any], rules: dict[str, Any]) -> None:
    """What of the YAML is not in the ds_config, one line each."""
    flag = out.attributes.get("zero3_init_flag")
    ds = data.get("deepspeed_config") if isinstance(data.get("deepspeed_config"), dict) else {}
    if "zero3_init_flag" in ds:
        given, effect = str(ds['zero3_init_flag']).lower(), str(bool(flag)).lower()
        out.notes.append((f"zero3_init_flag: {given} → accelerate's own setting (deepspeed.zero.Init while the "
                          f"model loads; in effect: {effect}), not a ds_config key",
                          chinese.text("hf.plugin.zero3_init_flag_accelerate_s_own", given=given, effect=effect)))
    for key in ("num_processes", "num_machines"):
        if key in data:
            out.notes.append((f"{key}: {data[key]} → the world size accelerate launches; the ds_config states no "
                              "world size",
                              chinese.text("hf.plugin.the_world_size_accelerate_launches_the", key_=key,
                                           data_key=data[key])))
    auto = [p for p in ("train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps",
                        "gradient_clipping") if out.config.get(p) == "auto"]
    if auto:
        out.notes.append((f"{', '.join(auto)}: left \"auto\"; accelerate fills them at accelerator.prepare() "
                          "from your dataloader (DeepSpeed alone refuses \"auto\")",
                          chinese.text("hf.plugin.left_auto_accelerate_fills_them_at", join_auto=', '.join(auto))))
    if isinstance(out.config.get("steps_per_print"), float):
        line = next((w.get("line") for w in rules.get("post_init_writes") or [] if w["path"] == "steps_per_print"),
                    None)
        out.notes.append((f"steps_per_print: accelerate sets it to infinity (utils/dataclasses.py:{line}) so "
                          "DeepSpeed never logs; JSON cannot hold infinity, so the file leaves it out (accelerate "
                          "sets it again when it reads the file)",
                          chinese.text("hf.plugin.steps_per_print_accelerate_sets_it", line=line)))


# ---------------------------------------------------------------- ds_config → YAML


BASE_YAML = {"compute_environment": "LOCAL_MACHINE", "distributed_type": "DEEPSPEED"}
"""The two top-level settings that make ``accelerate launch`` take the DeepSpeed path (``ClusterConfig``'s
``compute_environment`` and ``distributed_type``; their names are checked against each release's
``config_file_keys`` by the tests)."""


def to_accelerate(config: dict[str, Any], config_path: str, version: str | None = None,
                  num_processes: int | None = None, num_machines: int = 1, rules: dict[str, Any] | None = None
                  ) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """(YAML data, notes): a plugin-only YAML when the release's plugin rebuilds exactly ``config`` from one
    (tried with each mixed precision), else a YAML naming ``config_path`` as its ``deepspeed_config_file``
    (checked against the release's plugin: :class:`AccelerateRefusal` when accelerate would refuse it)."""
    if rules is None or version is None:
        version, rules = accelerate_rules(version)
    exports = rules["launch_env"]["exports"]
    plugin_env = rules.get("plugin_env") or {}
    wanted = {k: v for k, v in config.items() if k != "steps_per_print"}
    notes: list[tuple[str, str]] = []
    top = {**BASE_YAML, "num_machines": num_machines, "num_processes": num_processes or 1}
    # The plugin-only candidate: each leaf of the plugin's config literal that is a plain attribute
    # (``self.zero_stage``) gives the YAML key of that attribute, from the config's value there.
    ds: dict[str, Any] = {}

    def walk(template: dict[str, Any], node: Any) -> None:
        for key, value in template.items():
            here = node.get(key) if isinstance(node, dict) else None
            if set(value) == {"expr"}:
                expr = value["expr"]
                if expr.startswith("self.") and expr[5:].isidentifier() and expr[5:] in exports and here is not None:
                    ds[expr[5:]] = here
            else:
                walk(value, here)

    walk(rules["plugin_config"]["value"], config)
    for write in rules.get("post_init_writes") or []:
        expr = str(write.get("value"))
        if expr.startswith("self.") and expr[5:] in exports and write["path"] in config:
            ds[expr[5:]] = config[write["path"]]
    if "zero3_init_flag" in exports and "zero3_init_flag" in plugin_env:
        stage = (config.get("zero_optimization") or {}).get("stage") if isinstance(config.get(
            "zero_optimization"), dict) else None
        ds["zero3_init_flag"] = stage == 3
    for mixed in ("no", "fp16", "bf16"):
        candidate = {**top, "deepspeed_config": dict(ds), "mixed_precision": mixed}
        try:
            built = build(candidate, version, rules=rules).config
        except (AccelerateRefusal, UsageError):
            continue
        built.pop("steps_per_print", None)
        if built == wanted:
            notes.append((f"every key carries over: accelerate {version}'s DeepSpeedPlugin builds this ds_config "
                          "from the YAML's deepspeed_config alone",
                          chinese.text("hf.plugin.every_key_carries_over_accelerate_s", version=version)))
            return _ordered(candidate), notes + _multinode(num_machines)
    try:
        plain = build({**top, "deepspeed_config": dict(ds)}, version, rules=rules).config
    except (AccelerateRefusal, UsageError):
        plain = {}
    beyond = sorted(p for p in _leaf_paths(wanted) if _at(plain, p) != _at(wanted, p))
    shown = ", ".join(beyond[:6]) + (f" (+{len(beyond) - 6})" if len(beyond) > 6 else "")
    notes.append((f"the YAML names the ds_config as deepspeed_config_file: accelerate {version}'s plugin-only "
                  f"settings cannot hold {shown or 'these values'}",
                  chinese.text("hf.plugin.the_yaml_names_the_ds_config", version=version,
                               v1=shown or chinese.text("hf.plugin.text"))))
    notes.append(("mixed_precision: left out of the YAML; with deepspeed_config_file accelerate refuses it there "
                  "(the fp16/bf16 sections of the ds_config decide)",
                  chinese.text("hf.plugin.mixed_precision_left_out_of_the")))
    file_yaml: dict[str, Any] = {"deepspeed_config_file": config_path}
    if "zero3_init_flag" in ds:
        file_yaml["zero3_init_flag"] = ds["zero3_init_flag"]
    data = _ordered({**top, "deepspeed_config": file_yaml})
    built = build(data, version, config_files={config_path: config}, rules=rules)  # raises what accelerate would raise
    for path in (rules.get("mixed_precision") or {}).get("fills") or {}:
        if _at(config, path) == "auto":
            notes.append((f"{path}: \"auto\" is filled from the mixed precision, which a YAML with "
                          "deepspeed_config_file cannot set: it comes from the HF Trainer's --bf16/--fp16 (or "
                          f"ACCELERATE_MIXED_PRECISION); without them accelerate {version} sets "
                          f"{json.dumps(_at(built.config, path))}",
                          chinese.text("hf.plugin.auto_is_filled_from_the_mixed", path=path, version=version,
                                       v2=json.dumps(_at(built.config, path)))))
    notes.append((f"deepspeed_config_file: {config_path}, as accelerate opens it: relative to the folder you "
                  "launch from",
                  chinese.text("hf.plugin.deepspeed_config_file_as_accelerate_opens", config_path=config_path)))
    return data, notes + _multinode(num_machines)


def _multinode(machines: int) -> list[tuple[str, str]]:
    if machines <= 1:
        return []
    return [(f"num_machines: {machines}: each node also needs machine_rank, main_process_ip and main_process_port "
             "(accelerate config asks for them), which this YAML cannot know",
             chinese.text("hf.plugin.num_machines_each_node_also_needs", machines=machines))]


def _at(config: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(config, dict) or part not in config:
            return _MISSING
        config = config[part]
    return config


_MISSING = object()


def _leaf_paths(config: Any, prefix: str = "") -> list[str]:
    if not isinstance(config, dict) or not config:
        return [prefix] if prefix else []
    out: list[str] = []
    for key, value in config.items():
        out += _leaf_paths(value, f"{prefix}.{key}" if prefix else key)
    return out


def _ordered(data: dict[str, Any]) -> dict[str, Any]:
    """Keys sorted as ``accelerate config`` writes them (``yaml.dump`` sorts), nested mappings too."""
    return {k: _ordered(v) if isinstance(v, dict) else v for k, v in sorted(data.items())}


def dump_yaml(data: dict[str, Any], indent: int = 0) -> str:
    """The YAML ``accelerate config`` would write for ``data`` (plain mappings and scalars; ``'no'`` quoted as
    PyYAML quotes the strings YAML 1.1 would read as something else)."""
    lines: list[str] = []
    for key, value in data.items():
        if isinstance(value, dict):
            lines.append(" " * indent + f"{key}:")
            lines.append(dump_yaml(value, indent + 2).rstrip("\n"))
        else:
            lines.append(" " * indent + f"{key}: {_scalar(value)}")
    return "\n".join(line for line in lines if line) + "\n"


def _scalar(value: Any) -> str:
    from dsfields.hf.arguments import _yaml_scalar

    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    text = str(value)
    plain = text and text.strip() == text and _yaml_scalar(text) == text and \
        not any(c in text for c in ":#{}[]&*!|>'\"%@`,")
    return text if plain else "'" + text.replace("'", "''") + "'"
