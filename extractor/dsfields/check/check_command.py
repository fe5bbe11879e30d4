"""``dsfields check``: find what DeepSpeed would reject, ignore or misread in ds_config files, before a job runs."""

from __future__ import annotations

import sys

from dsfields.check.engine import Checker, check_file
from dsfields.check.findings import RANK, Options, exit_code
from dsfields.check.report import render, unusable_lines
from dsfields.model.errors import DsfieldsError, UsageError
from dsfields.model.store import load_indexed, resolve_version
from dsfields.model.style import OutputStyle

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations are strings
    import argparse
    from pathlib import Path
    from typing import Any

    from dsfields.check.runtime import Build

FORMATS = [s.value for s in OutputStyle if s is not OutputStyle.MARKDOWN] + ["sarif"]
"""``sarif`` is check's alone (SARIF 2.1.0 for code-scanning UIs), so it is not an OutputStyle shared with diff."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    # file names stay strings: every reader takes one, and pathlib (with urllib.parse and ipaddress under it) is a
    # tenth of check's start-up
    parser.add_argument("files", nargs="+", metavar="FILE",
                        help="ds_config files (JSON or hjson), or accelerate YAML configs")
    parser.add_argument("--version", default=None,
                        help="DeepSpeed version to check against (default: the installed one if snapshotted, "
                             "else the newest snapshot)")
    parser.add_argument("--format", choices=FORMATS, default="text")
    parser.add_argument("--hf", action="store_true",
                        help='the file is for the HF Trainer: the "auto" values it fills are fine')
    parser.add_argument("--world-size", type=int, default=None, metavar="N",
                        help="number of ranks the job runs on: train_batch_size exactly, the rules that depend on it, "
                             "and with --launch the launch as rank 0 and rank N-1 of N (torch's fake process group)")
    parser.add_argument("--gpus-per-node", type=int, default=None, metavar="G",
                        help="with --world-size: ranks per node (default: all N on one node)")
    parser.add_argument("--strict", action="store_true", help="exit 1 on warnings too")
    parser.add_argument("--runtime", action="store_true",
                        help="also build DeepSpeedConfig (needs that DeepSpeed version installed)")
    parser.add_argument("--optimizer-from-code", action="store_true",
                        help="plain code passes an optimizer to deepspeed.initialize (changes which launch rules "
                             "apply; --hf implies the Trainer's own choice)")
    parser.add_argument("--launch", action="store_true",
                        help="also run deepspeed.initialize on CPU in a subprocess (needs that DeepSpeed installed)")
    parser.add_argument("--launch-timeout", type=float, default=None, metavar="SECONDS",
                        help="with --launch: seconds DeepSpeed's import may take before the launch is given up "
                             "(default 45; a slow shared file system may need more; 1 to 3600)")
    parser.add_argument("--inference", action="store_true",
                        help="the files are init_inference configs (DeepSpeedInferenceConfig), not ds_config")
    parser.add_argument("--sniff", action="store_true",
                        help="skip files that do not look like a DeepSpeed config (fewer than two of its top-level "
                             "keys, or one of its sections); what the pre-commit hook passes for every .json/.hjson")
    from dsfields.hf.arguments import add_cli_arguments

    add_cli_arguments(parser)  # --trainer-args & co. (issue 27): the HF Trainer with the user's own flags
    parser.add_argument("--lang", default=None, metavar="LANG",  # issue 28: text only; machine formats stay English
                        help="en or zh for the text report (default: zh when LANG is a zh locale, else en)")


def checker_for(snapshot: Any, hf: bool) -> Checker:
    """The checker ``check --version V [--hf]`` judges with (``upgrade`` asks the same checker, so the two cannot
    disagree); the HF Trainer's fill list is :func:`dsfields.hf.trainer.fill_list`, whatever the release."""
    return Checker(snapshot)


def file_findings(checker: Checker, config: Any, options: Options) -> list[Any]:
    """Every finding ``check`` prints for one parsed file without ``--runtime``/``--launch``/``--trainer-args``:
    the engine's, its HF hint included (the fill list is the same for every release)."""
    return checker.check(config, options)


def run(args: argparse.Namespace, build: Build | None = None, launcher: Any = None) -> int:
    """Check every file; ``build`` (DeepSpeed's verdict, from the extractor) is given with ``--runtime``,
    ``launcher`` (a LaunchClient factory) with ``--launch``."""
    if getattr(args, "inference", False):  # issue 29: the init_inference document
        from dsfields.inference import inference_reports

        reports, version, options = inference_reports(args)
        # JSON keeps the plain version scripts compare; the text report names the inference config
        return print_reports(reports, version, args, options, label=f"{version} (inference config)")
    if args.world_size is not None and args.world_size < 1:
        raise UsageError("--world-size must be at least 1")
    per_node = getattr(args, "gpus_per_node", None)
    if per_node is not None and (per_node < 1 or args.world_size is None):
        raise UsageError("--gpus-per-node must be at least 1 and needs --world-size")
    start = getattr(args, "launch_timeout", None)
    if start is not None and (not 1 <= start <= 3600 or not getattr(args, "launch", False)):
        raise UsageError("--launch-timeout must be 1 to 3600 seconds and needs --launch")
    bound = {} if start is None else {"start_timeout": start}
    trainer = None
    from dsfields.hf.arguments import from_cli, wants_trainer

    if wants_trainer(args):  # the Trainer with the user's flags: --hf implied
        args.hf = True
        trainer, accelerate = from_cli(args)
    from dsfields.configfile import is_accelerate_yaml

    if args.files and all(is_accelerate_yaml(p) for p in args.files):  # accelerate YAMLs: read as accelerate's
        args.hf = True  # ds_config, whose "auto" values accelerate fills at prepare (said per file)
    snapshot = load_indexed(resolve_version(args.version))
    checker = checker_for(snapshot, args.hf)
    pair = None
    if args.hf:  # the launch rules plan the config with the chosen pair's programs, as --trainer-args does
        from dsfields.hf.arguments import chosen_pair

        pair = chosen_pair(args, trainer)
        if getattr(args, "hf_pair_note", None) and pair:  # the default pair of an older --version, said
            from dsfields.model.messages import localize
            from dsfields.model.prose import language

            print(localize(f"dsfields check: {args.hf_pair_note} (accelerate {pair[1]})",
                           language(getattr(args, "lang", None)), "check."), file=sys.stderr)
    options = Options(hf=args.hf, world_size=args.world_size, strict=args.strict, runtime=args.runtime,
                      optimizer_from_code=getattr(args, "optimizer_from_code", False),
                      launch=getattr(args, "launch", False), hf_pair=pair, gpus_per_node=per_node)
    reports = []
    client = None
    mismatch = None
    if getattr(args, "sniff", False):
        args.files = [path for path in args.files if looks_like_ds_config(path, snapshot)]
    if options.launch and launcher is not None:
        from dsfields.check.launch_check import version_mismatch

        mismatch = version_mismatch(snapshot.version)
        if mismatch:
            print(mismatch, file=sys.stderr)
        elif (options.world_size or 1) > 1:  # one worker per rank played, each a rank of the fake group
            from dsfields.check.launch_check import ranks_to_play

            client = {rank: launcher(world=(options.world_size, rank, per_node), **bound)
                      for rank in ranks_to_play(options.world_size)}
        else:
            client = launcher(**bound)
    try:
        for path in args.files:
            report = _check_one(path, checker, options, getattr(args, "lang", None))
            extra = []
            if trainer is not None and report.error is None and report.config is not None:
                from dsfields.check.trainer_check import trainer_findings

                report.findings = sorted(trainer_findings(report.config, trainer, accelerate, report.findings,
                                                          snapshot.version),
                                         key=lambda f: (f.line or 0, RANK[f.severity], f.path, f.message))
            if options.runtime and build is not None and report.error is None and report.config is not None:
                from dsfields.check.runtime import runtime_findings

                extra += runtime_findings(checker, report.config, options, build)
            if client is not None and report.error is None and report.config is not None:
                from dsfields.check.launch_check import launch_findings

                extra += launch_findings(snapshot.version, report.config, options, client)
            if extra:
                report.findings = sorted([*report.findings, *extra],
                                         key=lambda f: (f.line or 0, RANK[f.severity], f.path, f.message))
            reports.append(report)
    finally:
        for each in (client.values() if isinstance(client, dict) else [client] if client is not None else []):
            each.close()
    return print_reports(reports, snapshot.version, args, options)


def _check_one(path: Path, checker: Any, options: Options, lang: str | None) -> Any:
    """``check_file``; an accelerate YAML is checked as the ds_config accelerate builds from it, said in one line
    on stderr (a YAML accelerate refuses, or cannot be read, is that file's one-line error)."""
    from dsfields.configfile import is_accelerate_yaml

    if not is_accelerate_yaml(path):
        return check_file(path, checker, options)
    from pathlib import Path  # the YAML reader works on a Path (its folder is the base of included files)

    path = Path(path)
    from dsfields.check.engine import FileReport
    from dsfields.configfile import inline_config
    from dsfields.convert import converted_line, yaml_config_text
    from dsfields.model.prose import language

    try:
        text, conversion = yaml_config_text(path)
    except DsfieldsError as exc:
        return FileReport(str(path), error=str(exc))
    print(converted_line(path, conversion, language(lang)), file=sys.stderr)
    with inline_config(str(path), text):
        return check_file(path, checker, options)


def print_reports(reports: list[Any], version: str, args: argparse.Namespace, options: Options,
                  label: str | None = None) -> int:
    """The reports in ``--format`` on stdout, each unusable file one line on stderr (text), and the exit code:
    the one ending of ``check`` and ``check --inference``. ``label`` names the release in the text report."""
    from dsfields.check.codes import assign_ids
    from dsfields.model.messages import localize
    from dsfields.model.prose import language

    assign_ids(reports, version)
    lang = language(getattr(args, "lang", None))
    style = OutputStyle(args.format) if args.format != "sarif" else None
    if style is OutputStyle.TEXT:
        for line in unusable_lines(reports):
            print(localize(line, lang, "error."), file=sys.stderr)
    if style is None:
        from dsfields.check.sarif import render_sarif

        output = render_sarif(reports, version, options)
    else:
        output = render(reports, label or version if style is OutputStyle.TEXT else version, style, options)
        if style is OutputStyle.TEXT:
            output = localize(output, lang, "check.", "error.")
    if output:
        print(output)
    return exit_code(reports, args.strict)


def looks_like_ds_config(path: Any, snapshot: Any) -> bool:
    """Whether ``path`` reads like a ds_config: at least two of the release's top-level keys written as keys
    (``"key":`` or hjson's bare ``key:``), or one that is a section (``zero_optimization``). Judged on the
    text, so a DeepSpeed config with a syntax error is still checked (and reported), while package.json,
    tsconfig.json or an nginx .conf is skipped. The keys come from the snapshot, never from a list here."""
    import re

    from dsfields.model.readfile import UnreadableFile, read_bytes

    try:
        text = read_bytes(path).decode("utf-8", errors="replace")
    except UnreadableFile:
        return True  # unreadable (a FIFO, too large...): let check say so
    written = set(re.findall(r"""["']?([A-Za-z_][A-Za-z0-9_]*)["']?\s*:""", text))
    top = {key for key in written if key in snapshot.fields and "." not in key}
    return len(top) >= 2 or any(key in snapshot.sections for key in top)
