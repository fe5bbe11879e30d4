"""The HF Trainer's arguments as the user gives them: ``--trainer-args "--bf16 --learning_rate 2e-4"``.

Parsed the way ``HfArgumentParser`` parses ``TrainingArguments`` — without importing transformers —
from the flag list that :mod:`dsfields.extract.hf.flags` read out of transformers' own
``training_args.py`` into ``generated/hf/transformers-<version>.json`` (the HF snapshot). What the
parser does, after ``HfArgumentParser`` / argparse: ``--name`` and ``--name-with-dashes``, ``--name=value``,
an unambiguous prefix, ``bool`` flags with an optional value (``yes/true/t/y/1``, ``no/false/f/n/0``) and
their ``--no_name`` twin, choices, ``nargs="+"`` lists. Flags TrainingArguments has not are reported
(scripts often add their own dataclasses, so they are a warning, not a refusal).

:class:`TrainerArgs` is what the mirror (:mod:`dsfields.hf.trainer`) reads: every field's value
and whether the user gave it (provenance: "from --learning_rate" or "the default of --learning_rate"),
plus what no flag says: the world size, the model's hidden size and the dataset size.

Imports: stdlib only (bottom layer).
"""

from __future__ import annotations

import json
import os
import re

from dsfields.model.errors import UsageError

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

HF_DIR = "hf"
TRUE = ("yes", "true", "t", "y", "1")
FALSE = ("no", "false", "f", "n", "0")


def hf_snapshot_path(version: str | None, generated: str | None = None) -> Any:
    from pathlib import Path

    from dsfields.model.store import generated_root

    return Path(generated or generated_root()) / HF_DIR / f"transformers-{version}.json"


def hf_versions(generated: str | None = None) -> list[str]:
    from dsfields.model.store import COMPRESSED_SUFFIX, generated_root, version_key

    root = os.path.join(generated or generated_root(), HF_DIR)
    try:
        names = os.listdir(root)
    except OSError:
        return []
    found = {n[len("transformers-"):].removesuffix(COMPRESSED_SUFFIX).removesuffix(".json") for n in names
             if n.startswith("transformers-") and n.removesuffix(COMPRESSED_SUFFIX).endswith(".json")}
    return sorted(found, key=version_key)


def installed_transformers_version() -> str | None:
    """From its ``*.dist-info`` on ``sys.path`` (no import, no importlib.metadata)."""
    from dsfields.model.store import installed_version

    return installed_version("transformers")


def load_hf_snapshot(version: str | None = None, generated: str | None = None) -> dict[str, Any]:
    """The HF snapshot for ``version`` (default: the installed transformers if snapshotted, else the newest).

    Raises :class:`UsageError` when there is none.
    """
    known = hf_versions(generated)
    if not known:
        raise UsageError("no HF snapshot (generated/hf/transformers-*.json): run python -m dsfields.extract.hf.flags")
    if version is None:
        installed = installed_transformers_version()
        version = installed if installed in known else known[-1]
    if version not in known:
        raise UsageError(f"no HF snapshot for transformers {version} (have: {', '.join(known)})")
    from dsfields.model.store import read_generated

    return json.loads(read_generated(str(hf_snapshot_path(version, generated))))  # or its .gz in a wheel


class TrainerArgs:
    """TrainingArguments as parsed from the user's flags, with what the Trainer learns elsewhere."""

    def __init__(self, fields: dict[str, dict[str, Any]], values: dict[str, Any], given: dict[str, str],
                 unknown: list[str], transformers_version: str | None, world_size: int = 1,
                 hidden_size: int | None = None, hidden_size_from: str = "", dataset_size: int | None = None) -> None:
        self.fields = fields
        self.values = values
        self.given = given
        """field → the flag spelling the user wrote (``--learning_rate``)."""
        self.unknown = unknown
        self.transformers_version = transformers_version
        self.world_size = world_size
        self.hidden_size = hidden_size
        self.hidden_size_from = hidden_size_from
        self.dataset_size = dataset_size
        self.rules: Any = None
        """The pair's :class:`dsfields.hf.pair_rules.HfRules` (set by :func:`from_cli`); None: the 5.24.0 mirror."""

    def __getattr__(self, name: str) -> Any:
        values = self.__dict__.get("values", {})
        if name in values:
            return values[name]
        raise AttributeError(name)

    def origin(self, name: str) -> str:
        """How the value of ``name`` came about, in the words ``resolve`` prints."""
        if name in self.given:
            return f"--{name}" if self.given[name].startswith("--") else self.given[name]
        return f"--{name} default"

    # -- what the Trainer computes from them

    def num_training_steps(self) -> int | None:
        """``Trainer.set_initial_training_values``: ``--max_steps`` if positive, else epochs x updates per epoch
        from the dataset size (one rank's share of a non-dropping dataloader); None without either."""
        if self.values.get("max_steps", -1) > 0:
            return int(self.values["max_steps"])
        if self.dataset_size is None:
            return None
        batches = _ceil(self.dataset_size / (self.world_size * self.values["per_device_train_batch_size"]))
        if self.values.get("dataloader_drop_last"):
            batches = self.dataset_size // (self.world_size * self.values["per_device_train_batch_size"])
        gas = self.values["gradient_accumulation_steps"]
        per_epoch = max(batches // gas + int(batches % gas > 0), 1)
        return _ceil(self.values["num_train_epochs"] * per_epoch)

    def steps_origin(self) -> str:
        if self.values.get("max_steps", -1) > 0:
            return self.origin("max_steps")
        return f"--num_train_epochs x {self.dataset_size} examples"

    def warmup_steps(self, num_training_steps: int) -> int:
        """``TrainingArguments.get_warmup_steps``: an integer count, or a ratio of the steps when below 1."""
        warmup = self.values.get("warmup_steps", 0)
        return int(warmup) if warmup >= 1 else _ceil(num_training_steps * warmup)


def _bool(text: str, flag: str) -> bool:
    lowered = text.lower()
    if lowered in TRUE:
        return True
    if lowered in FALSE:
        return False
    raise UsageError(f"--trainer-args: {flag} takes a boolean (yes/no, true/false, 1/0), not {text!r}")


def _convert(record: dict[str, Any], text: str, flag: str) -> Any:
    kind = record["type"]
    try:
        if kind == "int":
            return int(text)
        if kind == "float":
            return float(text)
    except ValueError:
        raise UsageError(f"--trainer-args: {flag} takes {'an integer' if kind == 'int' else 'a number'}, "
                         f"not {text!r}") from None
    if kind == "bool":
        return _bool(text, flag)
    if kind == "choice":
        if text not in record["choices"]:
            raise UsageError(f"--trainer-args: {flag} must be one of {', '.join(map(str, record['choices']))}; "
                             f"not {text!r}")
    return text


def _flags(fields: dict[str, dict[str, Any]]) -> dict[str, tuple[str, bool]]:
    """Every option string → (field, is the ``--no_`` twin)."""
    out: dict[str, tuple[str, bool]] = {}
    for name, record in fields.items():
        for spelling in {name, name.replace("_", "-")}:
            out[f"--{spelling}"] = (name, False)
            if record.get("no_flag"):
                out[f"--no_{spelling}" if spelling == name else f"--no-{spelling}"] = (name, True)
    return out


def _looks_like_value(text: str) -> bool:
    """argparse reads ``-1`` or ``-2e-4`` as a value (no option of TrainingArguments looks like a number)."""
    if not text.startswith("-"):
        return True
    try:
        float(text)
    except ValueError:
        return False
    return True


def split_trainer_args(text: str) -> list[str]:
    """``--trainer-args``' words as a POSIX shell splits them; unbalanced quotes (which the shell refuses too) and
    a trailing backslash are a :class:`UsageError` naming the option."""
    try:
        import shlex  # only for --trainer-args: check imports this module on every run

        return shlex.split(text)
    except ValueError as exc:  # shlex: "No closing quotation", "No escaped character"
        reason = str(exc).strip().rstrip(".").lower() or "cannot be split"
        raise UsageError(f"--trainer-args: {reason}: give the Trainer's flags as a shell would take them "
                         "(close every ' and \")") from None


def parse_trainer_args(text: str | list[str] | None, snapshot: dict[str, Any], *, world_size: int = 1,
                       hidden_size: int | None = None, hidden_size_from: str = "",
                       dataset_size: int | None = None) -> TrainerArgs:
    """``--trainer-args`` (one shell-quoted string, or its words) → :class:`TrainerArgs`.

    Raises :class:`UsageError` for a value a flag cannot take (HfArgumentParser exits 2 on it too).
    """
    fields = snapshot["training_arguments"]["fields"]
    words = split_trainer_args(text) if isinstance(text, str) else list(text or [])
    flags = _flags(fields)
    values: dict[str, Any] = {name: r.get("default") for name, r in fields.items()}
    given: dict[str, str] = {}
    unknown: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if not word.startswith("--"):
            unknown.append(word)
            continue
        option, eq, inline = word.partition("=")
        match = flags.get(option)
        if match is None:
            prefixed = {flags[f] for f in flags if f.startswith(option)}  # argparse's allow_abbrev
            if len(prefixed) == 1:
                match = next(iter(prefixed))
            elif len(prefixed) > 1:
                raise UsageError(f"--trainer-args: {option} is ambiguous ("
                                 f"{', '.join(sorted('--' + m[0] for m in prefixed)[:6])})")
        if match is None:
            unknown.append(option)
            while index < len(words) and _looks_like_value(words[index]):  # its values go with it
                unknown.append(words[index])
                index += 1
            continue
        name, negated = match
        record = fields[name]
        if negated:
            values[name] = False
            given[name] = option
            continue
        nargs_list = record.get("nargs") == "+"
        raw: list[str] = []
        if eq:
            raw = [inline]
        else:
            while index < len(words) and _looks_like_value(words[index]):
                raw.append(words[index])
                index += 1
                if not nargs_list:
                    break
        if record["type"] == "bool" and not raw and record.get("value_optional", True):
            values[name] = True  # const=True
        elif not raw:
            raise UsageError(f"--trainer-args: {option} expects a value")
        elif nargs_list:
            values[name] = [_convert(record, r, option) for r in raw]
        else:
            values[name] = _convert(record, raw[0], option)
        given[name] = option
    return TrainerArgs(fields, values, given, unknown, snapshot.get("transformers_version"), world_size,
                       hidden_size, hidden_size_from, dataset_size)


def hidden_size_of(model_config: dict[str, Any]) -> int | None:
    """``trainer_config_finalize``'s search of ``model.config``: hidden_size, the largest of hidden_sizes,
    then the same under text_config."""
    for node in (model_config, model_config.get("text_config")):
        if not isinstance(node, dict):
            continue
        if isinstance(node.get("hidden_size"), int):
            return int(node["hidden_size"])
        sizes = node.get("hidden_sizes")
        if isinstance(sizes, list) and sizes and all(isinstance(s, int) for s in sizes):
            return max(sizes)
    return None


def suggest(flag: str, fields: dict[str, Any]) -> str | None:
    """The TrainingArguments flag closest to an unknown one (``--warmup_ratio`` → ``--warmup_steps``)."""
    import difflib

    name = flag.lstrip("-").replace("-", "_")
    close = difflib.get_close_matches(name, list(fields), n=1, cutoff=0.6)
    return f"--{close[0]}" if close else None


# ---------------------------------------------------------------- the options check, resolve and migrate share


def add_cli_arguments(parser: Any, *, world_size: bool = False) -> None:
    """``--trainer-args``, ``--model-config`` / ``--hidden-size``, ``--dataset-size``, ``--accelerate-config``
    (and ``--world-size`` where the command has none)."""
    parser.add_argument("--trainer-args", default=None, metavar='"ARGS"',
                        help='the HF Trainer\'s own flags, as HfArgumentParser takes them, one quoted string '
                             '(write --trainer-args="--bf16 ..." when it starts with a single flag); implies --hf')
    parser.add_argument("--model-config", default=None, metavar="config.json",
                        help="the model's config.json (its hidden_size fills the ZeRO bucket sizes)")
    parser.add_argument("--hidden-size", type=int, default=None, metavar="N", help="the model's hidden size")
    parser.add_argument("--dataset-size", type=int, default=None, metavar="N",
                        help="training examples, for num_training_steps when --max_steps is not given")
    parser.add_argument("--accelerate-config", default=None, metavar="FILE",
                        help="accelerate's YAML config (accelerate launch --config_file): mixed_precision and "
                             "its deepspeed_config settings")
    parser.add_argument("--hf-version", default=None, metavar="T[,A]",
                        help="the transformers (and accelerate) releases whose flags and rules to follow (default: "
                             "the installed ones if snapshotted, else the newest transformers and its accelerate)")
    if world_size:
        parser.add_argument("--world-size", type=int, default=None, metavar="N", help="data-parallel ranks")


def wants_trainer(ns: Any) -> bool:
    """Whether the options describe the Trainer's run (a file an option names is always read, never ignored)."""
    return any(getattr(ns, name, None) is not None for name in ("trainer_args", "accelerate_config", "model_config"))


def from_cli(ns: Any) -> tuple[TrainerArgs, dict[str, Any]]:
    """The :class:`TrainerArgs` and accelerate settings the command-line options describe."""
    hidden, hidden_from = getattr(ns, "hidden_size", None), "--hidden-size" if getattr(ns, "hidden_size", None) else ""
    model_config = getattr(ns, "model_config", None)
    if model_config is not None:
        data = load_model_config(model_config)
        found = hidden_size_of(data) if isinstance(data, dict) else None
        if found is None:
            raise UsageError(f"--model-config {model_config}: no hidden_size or hidden_sizes (the Trainer refuses "
                             "to fill the ZeRO bucket sizes without them)")
        hidden, hidden_from = (hidden or found), hidden_from or f"hidden_size of {model_config}"
    spec = getattr(ns, "hf_version", None)
    version, _, acc_version = (spec or "").partition(",")
    snapshot = load_hf_snapshot(version or None)
    rules = load_rules(snapshot, acc_version or None, explicit=bool(version))
    accelerate = load_accelerate_config(ns.accelerate_config, rules) if getattr(ns, "accelerate_config", None) else {}
    world = getattr(ns, "world_size", None) or accelerate.get("num_processes") or 1
    if world < 1:
        raise UsageError("--world-size must be at least 1")
    args = parse_trainer_args(getattr(ns, "trainer_args", None) or "", snapshot, world_size=int(world),
                              hidden_size=hidden, hidden_size_from=hidden_from,
                              dataset_size=getattr(ns, "dataset_size", None))
    args.rules = rules
    return args, accelerate


def pair_current_at(deepspeed: str, generated: str | None = None) -> tuple[str, str] | None:
    """(transformers, DeepSpeed's release date): the newest snapshotted transformers built on or before the day
    ``deepspeed`` was released (``generated/releases.json``; each HF snapshot's ``release.built``), or None."""
    from datetime import UTC, datetime

    from dsfields.model.store import generated_root, read_generated

    try:
        dates = json.loads(read_generated(os.path.join(generated or generated_root(), "releases.json")))
        day = str(dates["releases"][deepspeed]["date"])
        until = datetime.strptime(day, "%Y-%m-%d").replace(tzinfo=UTC).timestamp() + 86400
    except (OSError, ValueError, KeyError, TypeError):
        return None
    best = None
    for version in hf_versions(generated):
        try:
            built = json.loads(read_generated(str(hf_snapshot_path(version, generated))))["release"]["built"]
        except (OSError, ValueError, KeyError, TypeError):
            continue
        if isinstance(built, (int, float)) and built <= until:
            best = version
    return (best, day) if best else None


def chosen_pair(ns: Any, trainer: TrainerArgs | None = None) -> tuple[str, str] | None:
    """The (transformers, accelerate) releases ``--hf-version`` chooses (default: the installed pair if snapshotted,
    else the newest transformers and its accelerate), as :func:`from_cli` chooses them; ``trainer``'s when given.
    An explicit ``--version`` of an older DeepSpeed without ``--hf-version``: the pair current at that release's
    date (:func:`pair_current_at`; ``ns.hf_pair_note`` says so). None when there is no HF snapshot at all."""
    rules = trainer.rules if trainer is not None else None
    if rules is None and not getattr(ns, "hf_version", None) and getattr(ns, "version", None):
        from dsfields.model.store import available_versions

        newest = (available_versions() or [None])[-1]
        current = pair_current_at(str(ns.version)) if ns.version != newest else None
        if current is not None and current[0] != installed_transformers_version():
            ns.hf_version = current[0]
            ns.hf_pair_note = (f"HF pair: transformers {current[0]}, current when DeepSpeed {ns.version} was "
                               f"released ({current[1]}); --hf-version to choose another")
    if rules is None:
        version, _, acc_version = (getattr(ns, "hf_version", None) or "").partition(",")
        try:
            snapshot = load_hf_snapshot(version or None)
        except UsageError:
            if version:
                raise
            return None
        rules = load_rules(snapshot, acc_version or None, explicit=bool(version))
    if not rules.transformers_version or not rules.accelerate_version:
        return None
    return str(rules.transformers_version), str(rules.accelerate_version)


def installed_accelerate_version() -> str | None:
    from dsfields.model.store import installed_version

    return installed_version("accelerate")


def load_rules(snapshot: dict[str, Any], accelerate: str | None = None, *, explicit: bool = False) -> Any:
    """The :class:`dsfields.hf.pair_rules.HfRules` of the transformers ``snapshot`` with ``accelerate`` (default:
    the installed accelerate when the installed transformers is the one chosen and it is snapshotted, else the
    accelerate release current when that transformers came out); notes say when the installed pair has none."""
    from dsfields.hf.pair_rules import HfRules, accelerate_versions, load_accelerate_snapshot

    version = snapshot.get("transformers_version")
    known = accelerate_versions()
    notes: list[str] = []
    installed_t, installed_a = installed_transformers_version(), installed_accelerate_version()
    if not explicit and installed_t is not None and installed_t != version:
        notes.append(f"the installed transformers {installed_t} has no HF snapshot: the rules of transformers "
                     f"{version} are used (--hf-version T[,A] to choose)")
    if accelerate is None:
        paired = (snapshot.get("release") or {}).get("accelerate_paired")
        if installed_a in known and installed_t == version:
            accelerate = installed_a
        else:
            if installed_a is not None and installed_t == version and installed_a not in known:
                notes.append(f"the installed accelerate {installed_a} has no HF snapshot: accelerate {paired or '?'}'s "
                             "rules are used")
            accelerate = paired or (known[-1] if known else None)
    elif accelerate not in known:
        raise UsageError(f"--hf-version: no HF snapshot for accelerate {accelerate} (have: {', '.join(known)})")
    acc_snapshot = load_accelerate_snapshot(accelerate) if accelerate else None
    if acc_snapshot is None and known:  # the accelerate paired with this transformers was never snapshotted
        notes.append(f"accelerate {accelerate or '(none paired)'} has no HF snapshot: the newest snapshotted, "
                     f"accelerate {known[-1]}, is used (--hf-version T,A to choose)")
        accelerate, acc_snapshot = known[-1], load_accelerate_snapshot(known[-1])
    rules = HfRules(snapshot, acc_snapshot, accelerate)
    rules.notes[:0] = notes
    return rules


ACCELERATE_DS_KEYS = ("gradient_accumulation_steps", "gradient_clipping", "zero_stage", "offload_optimizer_device",
                      "offload_param_device", "offload_optimizer_nvme_path", "offload_param_nvme_path",
                      "zero3_save_16bit_model", "zero3_init_flag", "deepspeed_config_file")
IGNORED_WITH_FILE = ("gradient_accumulation_steps", "gradient_clipping", "zero_stage", "offload_optimizer_device",
                     "offload_param_device", "offload_param_nvme_path", "offload_optimizer_nvme_path",
                     "zero3_save_16bit_model", "mixed_precision")
"""accelerate utils/dataclasses.py:1507 ``_deepspeed_config_checks``: the settings it refuses beside a
``deepspeed_config_file`` (its env names, lower-cased without ACCELERATE_/DEEPSPEED_)."""


ACCELERATE_CONFIG_BYTES = 1024 * 1024
"""Largest ``--accelerate-config`` read (``accelerate config`` writes a few hundred bytes)."""
ACCELERATE_CONFIG_DEPTH = 8
"""Deepest nesting of its mappings read (``accelerate config`` writes ``deepspeed_config:`` and the like: two)."""
MODEL_CONFIG_BYTES = 8 * 1024 * 1024
"""Largest ``--model-config`` read (a model's ``config.json`` is a few KB)."""


def _read_option_file(option: str, path: str, limit: int, what: str) -> str:
    """The text of the file an option names, through the one reader (regular file, size bound, UTF-8)."""
    from dsfields.model.readfile import UnreadableFile, read_text

    try:
        return read_text(path, limit, what)
    except UnreadableFile as exc:
        raise UsageError(f"{option} {exc}") from None


def load_model_config(path: str) -> Any:
    """``--model-config``: the model's config.json as transformers reads it (``json.loads`` of UTF-8 text)."""
    text = _read_option_file("--model-config", path, MODEL_CONFIG_BYTES, "a model config")
    try:
        return json.loads(text)
    except RecursionError:
        raise UsageError(f"--model-config {path}: nested too deep for Python's json (RecursionError)") from None
    except ValueError as exc:
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        raise UsageError(f"--model-config {path}: not JSON ({first})") from None


def parse_accelerate_yaml(text: str, where: str) -> dict[str, Any]:
    """The mappings of an accelerate YAML config (``accelerate config``'s plain ``key: value`` lines, nested by
    indentation); anything else (a list item, an anchor, alias or tag, nesting deeper than
    :data:`ACCELERATE_CONFIG_DEPTH`) is refused with one :class:`UsageError` line naming ``where`` and the line."""
    data: dict[str, Any] = {}
    stack: list[tuple[int, dict[str, Any]]] = [(-1, data)]
    for number, raw in enumerate(text.removeprefix("\ufeff").splitlines(), 1):
        line = raw.split(" #")[0].rstrip() if not raw.lstrip().startswith("#") else ""
        if not line.strip() or line.strip() == "---":
            continue
        indent = len(line) - len(line.lstrip(" "))
        key, colon, value = line.strip().partition(":")
        if not colon or key.startswith("-"):
            raise UsageError(f"{where}:{number}: not a 'key: value' line accelerate writes")
        value = value.strip()
        if value.startswith(("&", "*", "!")) or value.startswith(("[", "{")) and ("*" in value or "&" in value):
            raise UsageError(f"{where}:{number}: a YAML anchor, alias or tag; accelerate config "
                             "writes none, and dsfields does not expand them")
        while stack and indent <= stack[-1][0]:
            stack.pop()
        if len(stack) > ACCELERATE_CONFIG_DEPTH:
            raise UsageError(f"{where}:{number}: nested deeper than {ACCELERATE_CONFIG_DEPTH} "
                             "levels; accelerate config writes two")
        parent = stack[-1][1]
        if not value:
            child: dict[str, Any] = {}
            parent[key.strip()] = child
            stack.append((indent, child))
        else:
            parent[key.strip()] = _yaml_scalar(value)
    return data


def load_accelerate_config(path: str, rules: Any = None) -> dict[str, Any]:
    """accelerate's YAML config as the settings ``accelerate launch`` exports (a flat dict).

    Only the plain ``key: value`` mappings accelerate's own ``accelerate config`` writes are read (no
    PyYAML: consumers stay stdlib + hjson); anything else is refused with one line. With the pair's ``rules``
    (:class:`dsfields.hf.pair_rules.HfRules`), which ``deepspeed_config`` keys matter is accelerate's own
    answer: those ``prepare_deepspeed_cmd_env`` exports as a variable ``DeepSpeedPlugin`` reads, those only the
    launcher reads; every other key, and top-level keys ``ClusterConfig`` lacks, go to ``unknown``.
    """
    text = _read_option_file("--accelerate-config", path, ACCELERATE_CONFIG_BYTES, "an accelerate config")
    data = parse_accelerate_yaml(text, f"--accelerate-config {path}")
    ds = data.get("deepspeed_config") if isinstance(data.get("deepspeed_config"), dict) else {}
    known = _accelerate_keys(rules)
    if known is None:  # no accelerate snapshot at all: accelerate 1.15.0's keys, and the user is told so
        out: dict[str, Any] = {k: ds[k] for k in ACCELERATE_DS_KEYS if k in ds}
        version = getattr(rules, "accelerate_version", None)
        out["unknown"] = [f"no HF snapshot of accelerate {version or '(none chosen)'}: the deepspeed_config keys are "
                          f"read as accelerate 1.15.0 names them ({', '.join(ACCELERATE_DS_KEYS)}), not checked "
                          "against that release's launch code"]
    else:
        exports, launcher, top, plugin_envs = known
        out = {k: ds[k] for k in ds if k in exports and exports[k] in plugin_envs or k == "deepspeed_config_file"}
        unknown = []
        for key in ds:
            if key in exports and exports[key] not in plugin_envs and key != "deepspeed_config_file":
                unknown.append(f"deepspeed_config.{key}: accelerate launch exports it as {exports[key]}, which "
                               f"DeepSpeedPlugin (accelerate {rules.accelerate_version}) does not read")
            elif key not in exports and key not in launcher:
                plugin_only = [a for a, e in ((rules.accelerate or {}).get("plugin_env") or {}).items()
                               if a == key]
                import difflib

                close = [] if plugin_only else difflib.get_close_matches(key, [*exports, *launcher], n=1)
                unknown.append(f"deepspeed_config.{key}: accelerate {rules.accelerate_version}'s launch never passes "
                               "it on" + (f" (DeepSpeedPlugin reads {plugin_envs_of(rules, key)} only from the "
                                          "environment)" if plugin_only else "") + ": it sets nothing (it still "
                               "counts as a deepspeed_config key for the deepspeed_config_file check)" +
                               (f"; did you mean {close[0]}?" if close else ""))
        import difflib

        unknown += [f"{key}: not a key of accelerate {rules.accelerate_version}'s config file (ClusterConfig)" + (
                    f"; did you mean {close[0]}?" if (close := difflib.get_close_matches(key, top, n=1)) else "")
                    for key in data if top and key not in top]
        out["unknown"] = unknown
    if "mixed_precision" in data:
        out["mixed_precision"] = str(data["mixed_precision"]).lower()
    if "num_processes" in data and isinstance(data["num_processes"], int):
        out["num_processes"] = data["num_processes"]
    out["distributed_type"] = data.get("distributed_type")
    out["ds_fields"] = sorted(ds)
    return out


def plugin_envs_of(rules: Any, attribute: str) -> str:
    return str((((rules.accelerate or {}).get("plugin_env") or {}).get(attribute) or {}).get("env"))


def _accelerate_keys(rules: Any) -> tuple[dict[str, str], list[str], list[str], set[str]] | None:
    """From the accelerate snapshot: ``deepspeed_config`` key → exported variable, the launch arguments the
    launcher reads, the top-level config-file keys, and the variables DeepSpeedPlugin reads."""
    acc = getattr(rules, "accelerate", None) or {}
    launch = acc.get("launch_env") or {}
    if not launch.get("exports"):
        return None
    exports = {k: v["env"] for k, v in launch["exports"].items()}
    plugin_envs = {v["env"] for v in (acc.get("plugin_env") or {}).values()}
    return exports, list(launch.get("reads", [])), list(acc.get("config_file_keys") or []), plugin_envs


_YAML_BOOLS = {v: v.lower() in ("yes", "true", "on") for w in ("yes", "no", "true", "false", "on", "off")
               for v in (w, w.capitalize(), w.upper())}
"""YAML 1.1's booleans as PyYAML's ``safe_load`` (which accelerate reads its config with) resolves them: an
unquoted ``no`` is False there, not the string."""
_YAML_INT = r"[-+]?(0|[1-9][0-9_]*)"
_YAML_FLOAT = r"[-+]?([0-9][0-9_]*)?\.[0-9_]*([eE][-+][0-9]+)?"
"""Compiled by ``re`` (and cached there) at the first YAML read: every ``check`` imports this module."""


def _yaml_scalar(text: str) -> Any:
    """One scalar as PyYAML's safe loader reads it (quoted strings, YAML 1.1 booleans, null, decimal ints,
    floats with a dot; anything else stays a string: ``1e-3`` is a string to PyYAML)."""
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1].replace("''", "'") if text[0] == "'" else text[1:-1]
    if text in _YAML_BOOLS:
        return _YAML_BOOLS[text]
    if text in ("null", "Null", "NULL", "~"):
        return None
    if text in ("[]", "{}"):  # the empty flow collections accelerate config writes (tpu_env: [], fsdp_config: {})
        return [] if text == "[]" else {}
    if re.fullmatch(_YAML_INT, text):
        return int(text.replace("_", ""))
    if re.fullmatch(_YAML_FLOAT, text) and any(c.isdigit() for c in text):
        return float(text.replace("_", ""))
    return text


def _ceil(value: float) -> int:
    from math import ceil  # as math.ceil; imported where the Trainer's step counts are computed, not at start-up

    return ceil(value)


MIRRORED = "5.24.0"
"""The transformers release whose Trainer :func:`dsfields.hf.trainer.trainer_run` mirrors (with accelerate
1.15.0); other releases' flags are read from their HF snapshot, their fills and checks are not yet."""


def mirror_note(args: TrainerArgs) -> str | None:
    """What the user should know about the rules followed: the snapshots' notes (an installed pair without a
    snapshot, a rule not read statically), or, without rules, that the 5.24.0 mirror is used."""
    if args.rules is not None:
        return "; ".join(args.rules.notes) or None
    if args.transformers_version == MIRRORED:
        return None
    return (f"flags parsed as transformers {args.transformers_version} declares them; what the Trainer does with "
            f"them is mirrored from transformers {MIRRORED} / accelerate 1.15.0 (other releases not yet extracted)")


def hf_diff(old: dict[str, Any], new: dict[str, Any]) -> list[str]:
    """What changed for a user between two HF snapshots: flags added, removed, re-defaulted, re-typed, choices;
    paths the Trainer fills added or removed."""
    a, b = old["training_arguments"]["fields"], new["training_arguments"]["fields"]
    out = [f"flag added: --{n} (default {json.dumps(b[n].get('default'))})" for n in sorted(b.keys() - a.keys())]
    out += [f"flag removed: --{n}" for n in sorted(a.keys() - b.keys())]
    for name in sorted(a.keys() & b.keys()):
        x, y = a[name], b[name]
        if x.get("default") != y.get("default"):
            out.append(f"default changed: --{name} {json.dumps(x.get('default'))} → {json.dumps(y.get('default'))}")
        if (x["type"], x.get("nargs")) != (y["type"], y.get("nargs")):
            out.append(f"type changed: --{name} {x['type']}{'+' if x.get('nargs') else ''} → "
                       f"{y['type']}{'+' if y.get('nargs') else ''}")
        if x.get("choices") != y.get("choices") and x.get("choices") and y.get("choices"):
            added = [c for c in y["choices"] if c not in x["choices"]]
            gone = [c for c in x["choices"] if c not in y["choices"]]
            out.append(f"choices changed: --{name}" + (f" +{', +'.join(map(str, added))}" if added else "") +
                       (f" -{', -'.join(map(str, gone))}" if gone else ""))
    fa, fb = old["fills"]["paths"], new["fills"]["paths"]
    out += [f"the Trainer now fills: {p}" for p in sorted(fb.keys() - fa.keys())]
    out += [f"the Trainer no longer fills: {p}" for p in sorted(fa.keys() - fb.keys())]
    for path in sorted(fa.keys() & fb.keys()):
        x, y = fa[path], fb[path]
        for what in ("value", "hf_key", "must_match"):
            if what in x and what in y and x[what] != y[what]:
                out.append(f"fill changed: {path} {what} {json.dumps(x[what])} → {json.dumps(y[what])}")
    return out


def hf_pair_diff(old: str, new: str) -> tuple[str, str, list[str]]:
    """``dsfields diff --hf T1[,A1] T2[,A2]``: flag changes, then the Trainer's and accelerate's rule changes;
    an accelerate not named is the one paired with its transformers in the snapshot."""
    from dsfields.hf.pair_rules import accelerate_rules_diff, load_accelerate_snapshot, trainer_rules_diff

    sides = []
    for spec in (old, new):
        version, _, acc = spec.partition(",")
        snap = load_hf_snapshot(version or None)
        acc = acc or (snap.get("release") or {}).get("accelerate_paired") or ""
        acc_snap = load_accelerate_snapshot(acc) if acc else None
        if acc and acc_snap is None:
            raise UsageError(f"no HF snapshot for accelerate {acc} (generated/hf/accelerate-{acc}.json)")
        sides.append((snap, acc, acc_snap))
    (ot, oa, oas), (nt, na, nas) = sides
    flags = hf_diff(ot, nt)
    if ot.get("rules") and nt.get("rules"):  # the rules say the same about fills, with more: not twice
        flags = [x for x in flags if not x.startswith(("the Trainer now fills", "the Trainer no longer fills",
                                                        "fill changed"))]
    lines = flags + trainer_rules_diff(ot.get("rules"), nt.get("rules"))
    lines += _facts_diff(ot, oa, oas, nt, na, nas)
    if oa or na:
        lines += [f"accelerate {oa} → {na}: {line}" for line in accelerate_rules_diff(
            (oas or {}).get("rules"), (nas or {}).get("rules"))]
    label = lambda snap, acc: f"transformers {snap['transformers_version']}" + (f" / accelerate {acc}" if acc else "")  # noqa: E731
    return label(ot, oa), label(nt, na), lines


def _facts_diff(ot: dict[str, Any], oa: str, oas: Any, nt: dict[str, Any], na: str, nas: Any) -> list[str]:
    """The programs' answers that changed (the class an ``--optim`` builds, the steps, the checks, the swap)."""
    from dsfields.hf.pair_rules import HfRules, facts_diff, program_facts

    if not ((ot.get("rules") or {}).get("programs") and (nt.get("rules") or {}).get("programs")):
        return []
    facts = []
    for snap, acc, acc_snap in ((ot, oa, oas), (nt, na, nas)):
        rules = HfRules(snap, acc_snap, acc)
        fields = snap["training_arguments"]["fields"]
        facts.append(program_facts(rules, fields, lambda words, snap=snap: arg_names(parse_trainer_args(words,
                                                                                                          snap))))
    return facts_diff(*facts)


def run_hf_diff(old: str, new: str, style: str = "text", fail: bool = False) -> int:
    old_label, new_label, lines = hf_pair_diff(old, new)
    if style == "json":
        print(json.dumps({"old": old_label, "new": new_label, "changes": lines}, indent=1, ensure_ascii=False))
    else:
        print(f"{old_label} → {new_label}: {len(lines)} change(s)")
        print("\n".join(f"  {line}" for line in lines) if lines else "  no change")
    return 1 if fail and lines else 0


def main(argv: list[str] | None = None) -> int:
    """``python -m dsfields.hf.arguments diff T1 T2``: what changed in TrainingArguments between two releases."""
    import sys

    words = list(sys.argv[1:] if argv is None else argv)
    if len(words) != 3 or words[0] != "diff":
        print("usage: python -m dsfields.hf.arguments diff T1 T2 (transformers releases with an HF snapshot: "
              f"{', '.join(hf_versions())})", file=sys.stderr)
        return 2
    try:
        lines = hf_diff(load_hf_snapshot(words[1]), load_hf_snapshot(words[2]))
    except UsageError as exc:
        print(f"dsfields: {exc}", file=sys.stderr)
        return 2
    print("\n".join(lines) if lines else f"no change between transformers {words[1]} and {words[2]}")
    return 1 if lines else 0


if __name__ == "__main__":
    raise SystemExit(main())


def arg_names(args: Any) -> dict[str, Any]:
    """What the extracted expressions may name: ``args.X`` (and ``self.X`` in TrainingArguments' own methods)."""
    v = args.values
    names: dict[str, Any] = {"auto_find_batch_size": bool(v.get("auto_find_batch_size"))}
    for name, value in v.items():
        names[f"args.{name}"] = names[f"self.{name}"] = value
    names["args.world_size"] = names["self.world_size"] = args.world_size
    return names
