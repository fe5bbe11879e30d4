"""``dsfields convert``: an accelerate YAML config ↔ the ds_config accelerate's ``DeepSpeedPlugin`` builds from it.

``dsfields convert accelerate.yaml -o ds_config.json`` writes the ds_config accelerate (the chosen release,
``--accelerate-version``) hands DeepSpeed for that YAML; ``dsfields convert ds_config.json --to accelerate -o
accelerate.yaml`` writes the YAML back: plugin settings alone when the plugin rebuilds exactly that ds_config from
them, else a YAML naming the ds_config as its ``deepspeed_config_file``. What does not carry over is said, one line
each. The rules are :mod:`dsfields.hf.plugin`'s, read per release from ``generated/hf/``; accelerate is never
imported.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from dsfields.configfile import is_accelerate_yaml
from dsfields.model import chinese
from dsfields.model.errors import DsfieldsError, UsageError

YAML_BYTES = 1024 * 1024
"""Largest accelerate YAML read (``accelerate config`` writes a few hundred bytes)."""
class AccelerateRefuses(DsfieldsError):
    """accelerate itself would raise for this YAML: a finding about the file (exit 1), said in one line."""

    exit_code = 1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    from dsfields.model.errors import one_line_argparse  # argparse's refusals as one line, as estimate and init

    one_line_argparse(parser)
    parser.add_argument("file", type=Path, metavar="FILE", nargs="?", default=None,
                        help="an accelerate YAML config, or a ds_config (with --to accelerate)")
    parser.add_argument("--launch-args", default=None, metavar="ARGS",
                        help="accelerate launch options, over the YAML's (\"--use_deepspeed --zero_stage 3 "
                             "--mixed_precision bf16\"); with --use_deepspeed no YAML is needed")
    parser.add_argument("--to", choices=["ds_config", "accelerate"], default=None,
                        help="what to write (default: a YAML gives a ds_config, a ds_config gives a YAML)")
    parser.add_argument("--accelerate-version", default=None, metavar="V",
                        help="accelerate release whose rules are followed (default: the installed one if "
                             "snapshotted, else the newest)")
    parser.add_argument("--num-processes", default=None, metavar="N",
                        help="with --to accelerate: num_processes of the YAML (default 1)")
    parser.add_argument("--lang", default=None, help="en or zh (default: zh when LANG is a zh locale, else en)")
    parser.add_argument("-o", "--output", type=Path, default=None, metavar="FILE",
                        help="write there (default: print it)")
    parser.add_argument("--force", action="store_true", help="replace a read-only or hard-linked output")


def read_yaml(path: Path) -> dict[str, Any]:
    """The YAML's mappings, through the bounded reader; refusals are one line."""
    from dsfields.hf.arguments import parse_accelerate_yaml
    from dsfields.model.readfile import UnreadableFile, read_text

    try:
        text = read_text(path, YAML_BYTES, "an accelerate config")
    except UnreadableFile as exc:
        raise UsageError(str(exc)) from None
    data = parse_accelerate_yaml(text, str(path))
    if not data:
        raise UsageError(f"{path}: no settings (an empty accelerate config)")
    return data


def ds_config_from_yaml(path: Path | None, version: str | None = None, launch_args: str | None = None) -> Any:
    """The :class:`dsfields.hf.plugin.Conversion` of an accelerate YAML (and ``accelerate launch`` options): the
    ds_config accelerate builds, its notes. accelerate's own refusal becomes :class:`AccelerateRefuses`."""
    import shlex

    from dsfields.hf import plugin

    data = read_yaml(path) if path is not None else {}
    flags = None
    if launch_args is not None:
        try:
            words = shlex.split(launch_args)
        except ValueError as exc:
            raise UsageError(f"--launch-args: {exc}") from None
        flags = plugin.launch_flags(words, plugin.accelerate_rules(version)[1], plugin.accelerate_rules(version)[0])
    if path is None and "use_deepspeed" not in (flags or {}):
        raise UsageError("convert needs an accelerate YAML, or --launch-args with --use_deepspeed")
    try:
        return plugin.build(data, version, base=str(path.parent) if path else None,
                            name=str(path) if path else "<launch args>", flags=flags)
    except plugin.AccelerateRefusal as exc:
        first = exc.message.strip().splitlines()[0] if exc.message.strip() else exc.kind
        where = f" ({exc.where}:{exc.line})" if exc.line else ""
        shown = path if path is not None else "accelerate launch"
        raise AccelerateRefuses(f"{shown}: accelerate refuses this config with {exc.kind}{where}: {first}") from None


def yaml_config_text(path: Path, version: str | None = None) -> tuple[str, Any]:
    """(the ds_config accelerate builds from the YAML at ``path``, as JSON text; the conversion): what ``check``,
    ``resolve`` and ``estimate`` read in place of the YAML (:class:`dsfields.configfile.inline_config`)."""
    conversion = ds_config_from_yaml(path, version)
    return json.dumps(conversion.file_config(), indent=2, ensure_ascii=False) + "\n", conversion


def load_as_ds_config(path: Path, hf: bool, lang: str | None, conversion_out: list[Any] | None = None
                      ) -> tuple[Any, bool]:
    """(the config as ``load_loadable`` reads it, whether under --hf): a ds_config as given; an accelerate YAML
    as the ds_config accelerate builds from it, read as the HF path reads it, said in one line on stderr
    (``conversion_out`` receives the conversion)."""
    from dsfields.configfile import inline_config, load_loadable

    if not is_accelerate_yaml(path):
        return load_loadable(path, hf), hf
    from dsfields.model.prose import language

    text, conversion = yaml_config_text(path)
    print(converted_line(path, conversion, language(lang)), file=sys.stderr)
    if conversion_out is not None:
        conversion_out.append(conversion)
    with inline_config(str(path), text):
        return load_loadable(path, True), True


def converted_line(path: Path, conversion: Any, lang: str) -> str:
    """The one line ``check``/``resolve``/``estimate`` print when they are given a YAML."""
    from dsfields.model.termsafe import shown

    if lang == "zh":
        return shown(chinese.text("convert.path_accelerate_yaml_accelerate_conversion_version", path=path,
                                  conversion_version=conversion.version))
    return shown(f"{path}: an accelerate YAML, read as the ds_config accelerate {conversion.version}'s "
                 "DeepSpeedPlugin builds from it, under --hf (accelerate fills its \"auto\" values at prepare; "
                 "dsfields convert writes that file)")


def _positive(option: str, text: str | None) -> int | None:
    if text is None:
        return None
    try:
        value = int(text)
    except ValueError:
        raise UsageError(f"{option} {text!r}: not a whole number") from None
    if not 1 <= value <= 1_000_000:
        raise UsageError(f"{option} {value}: between 1 and 1000000")
    return value


def run(args: argparse.Namespace) -> int:
    from dsfields.model import prose, termsafe

    lang = prose.language(args.lang)
    zh = lang == "zh"
    yaml_in = args.file is None or is_accelerate_yaml(args.file)
    to = args.to or ("ds_config" if yaml_in else "accelerate")
    processes = _positive("--num-processes", args.num_processes)
    if args.output is not None:
        from dsfields.model import safewrite

        safewrite.check_target(args.output, force=args.force)
    if to == "ds_config":
        if not yaml_in:
            raise UsageError(f"{args.file}: --to ds_config takes an accelerate YAML (.yaml or .yml)")
        conversion = ds_config_from_yaml(args.file, args.accelerate_version, args.launch_args)
        text = json.dumps(conversion.file_config(), indent=2, ensure_ascii=False) + "\n"
        source = " + ".join(([str(args.file)] if args.file else []) +
                            ([f"accelerate launch {args.launch_args}"] if args.launch_args else []))
        heading = (chinese.text("convert.dsfields_convert_the_ds_config_accelerate",
                                conversion_version=conversion.version, source=source)
                   if zh else f"# dsfields convert: the ds_config accelerate {conversion.version}'s "
                              f"DeepSpeedPlugin builds from {source}")
        notes = conversion.notes
    else:
        if yaml_in:
            raise UsageError(f"{args.file}: --to accelerate takes a ds_config (JSON), not a YAML")
        if args.launch_args is not None:
            raise UsageError("--launch-args goes with an accelerate YAML (--to ds_config)")
        from dsfields import configfile
        from dsfields.hf import plugin

        try:
            config = configfile.load_loadable(args.file, hf=True).data
        except configfile.ConfigFileError as exc:
            raise UsageError(str(exc)) from None
        try:
            data, notes = plugin.to_accelerate(config, str(args.file), args.accelerate_version, processes)
        except plugin.AccelerateRefusal as exc:
            raise AccelerateRefuses(f"{args.file}: {exc.message.splitlines()[0]}") from None
        version, _rules = plugin.accelerate_rules(args.accelerate_version)
        text = plugin.dump_yaml(data)
        heading = (chinese.text("convert.dsfields_convert_the_accelerate_yaml_config", version=version,
                                args_file=args.file) if zh else
                   f"# dsfields convert: the accelerate {version} YAML config for {args.file}")
    if args.output is not None:
        from dsfields.model import safewrite

        safewrite.write_text(args.output, text, force=args.force)
        print((chinese.text("convert.wrote") if zh else "wrote ") + termsafe.shown(str(args.output)))
        where = sys.stdout
    else:
        sys.stdout.write(text)
        where = sys.stderr
    print(termsafe.shown(heading), file=where)
    for en, zh_line in notes:
        print("#  - " + termsafe.shown(zh_line if zh else en), file=where)
    return 0
