"""migrate keeps the meaning on real configs: DeepSpeedConfig 0.19.8 builds every migrated file (unless migrate
exits non-zero and says why), and ``resolve --version U`` on the original agrees with ``resolve --version V`` on
the migration on every value, except the values migrate's report names.

The corpus: the shared real-config corpus (``$DSFIELDS_CORPUS``, default ``../shared/realworld-configs``;
dated by ``tests/fixtures/migrate_corpus/shared_dates.json``) and the configs in ``tests/fixtures/migrate_corpus``
(``provenance.json``: repo, path, commit, date). U is the newest snapshotted release published on or before the
file's date, the oldest snapshot (0.8.0) for files older than it: the release a new user would have had.

The comparison here is written apart from ``dsfields.upgrade.compare`` (which migrate uses to decide what to
pin): resolve's values are compared key by key, and a difference counts as reported only if a line migrate
printed names that key or a section holding it. ``python tests/test_migrate_corpus.py [--baseline CODE_DIR]``
prints the figures (with ``--baseline``, for another checkout's migrate, run as a subprocess).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "extractor"))

from conftest import requires_deepspeed  # noqa: E402

from dsfields.configfile import ConfigFileError, load, parse  # noqa: E402
from dsfields.model.store import load as load_snapshot  # noqa: E402
from dsfields.resolve import Resolver  # noqa: E402

pytestmark = [pytest.mark.integration, pytest.mark.deepspeed, requires_deepspeed]

VERSION = "0.19.8"
FIXTURE_CORPUS = HERE / "fixtures" / "migrate_corpus"
SHARED_CORPUS = Path(os.environ.get("DSFIELDS_CORPUS", HERE.parent.parent / "shared" / "realworld-configs"))
UNCOMPARED = {"ignored", "removed", "not given", "passed on whole"}


def release_dates() -> list[tuple[str, str]]:
    from dsfields.model.store import available_versions, repo_generated_dir, version_key

    dates = json.loads((repo_generated_dir() / "releases.json").read_text())["releases"]
    have = set(available_versions())
    return sorted(((v, d["date"]) for v, d in dates.items() if v in have), key=lambda x: version_key(x[0]))


def release_at(date: str, releases: list[tuple[str, str]]) -> str:
    """The newest release published on or before ``date``; the oldest snapshot for older files."""
    before = [v for v, d in releases if d <= date[:10]]
    return before[-1] if before else releases[0][0]


def corpus() -> list[tuple[Path, str | None]]:
    """(file, its date or None)."""
    out: list[tuple[Path, str | None]] = []
    for entry in json.loads((FIXTURE_CORPUS / "provenance.json").read_text()):
        out.append((FIXTURE_CORPUS / entry["file"], entry["date"]))
    if SHARED_CORPUS.is_dir():
        dates = json.loads((FIXTURE_CORPUS / "shared_dates.json").read_text())
        for path in sorted(SHARED_CORPUS.glob("*.json")):
            if path.name != "index.json":
                out.append((path, dates.get(path.name, {}).get("date")))
    return out


def same(a: Any, b: Any) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        return all(k in b and same(v, b[k]) for k, v in a.items())
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return bool(a == b)


PREFIXES = ("value changes: ", "needs attention: ", "cannot be carried: ")


def reported_paths(lines: list[str], name: str) -> set[str]:
    """The JSON paths migrate's report lines name (each line starts with one, after the file name)."""
    out = set()
    for line in lines:
        text = line.split(": ", 1)[1] if line.startswith(name) else line
        for prefix in PREFIXES:
            text = text.removeprefix(prefix)
        match = re.match(r"[\w.\-*]+", text)
        if match:
            out.add(match.group(0))
        for moved in re.findall(r"→ ([\w.\-]+)", text):  # renames name their target too
            out.add(moved)
    return out


def covered(path: str, reported: set[str]) -> bool:
    return any(path == r or path.startswith(r + ".") for r in reported)


@dataclass
class Outcome:
    name: str
    source: str
    exit_code: int
    builds: bool
    said_why: bool
    unreported: list[str] = field(default_factory=list)
    error: str = ""
    pinned: int = 0
    listed: int = 0
    compared: int = 0


def migrate_here(path: Path, source: str, mode: str = "--keep-behaviour") -> tuple[int, str, list[str]]:
    """This checkout's migrate, in-process: (exit code, migrated text, report lines)."""
    from dsfields.cli import main

    out, err = io.StringIO(), io.StringIO()
    target = Path(os.environ.get("TMPDIR", "/tmp")) / f"dsfields-migrate-{os.getpid()}.json"
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["migrate", str(path), "--to", VERSION, "--from", source, "-o", str(target), mode])
    text = target.read_text(encoding="utf-8") if target.exists() else path.read_text(encoding="utf-8")
    target.unlink(missing_ok=True)
    return code, text, (out.getvalue() + err.getvalue()).splitlines()


def adopting(path: Path, source: str) -> tuple[int, str, list[str]]:
    return migrate_here(path, source, "--adopt-defaults")


def migrate_baseline(code_dir: str) -> Any:
    def run(path: Path, source: str) -> tuple[int, str, list[str]]:
        env = {**os.environ, "PYTHONPATH": code_dir}
        proc = subprocess.run([sys.executable, "-m", "dsfields", "migrate", str(path), "--to", VERSION],
                              capture_output=True, text=True, env=env, check=False)
        return proc.returncode, proc.stdout if proc.returncode != 2 else path.read_text(), proc.stderr.splitlines()
    return run


def evaluate(path: Path, source: str, migrate_fn: Any, checker: Any) -> Outcome | None:
    from test_check_differential import for_deepspeed

    from dsfields.extract.oracle import build_deepspeed_config

    try:
        original = load(path, "deepspeed")
    except ConfigFileError:
        return None
    code, text, lines = migrate_fn(path, source)
    try:
        after = parse(text, path.name, "deepspeed")
    except ConfigFileError as exc:
        return Outcome(path.name, source, code, False, False, [], f"does not parse: {exc}")
    error = build_deepspeed_config(for_deepspeed(after.data, checker))
    attention = [line for line in lines if "needs attention: " in line]
    said_why = code != 0 and bool(attention)
    if said_why and error is not None and hasattr(error, "errors"):  # pydantic: each rejected key must be named
        named = " ".join(attention)
        said_why = all(str(e["loc"][-1]) in named for e in error.errors() if e.get("loc"))
    reported = reported_paths(lines, str(path))
    before = {r.path: r for r in Resolver(load_snapshot(source)).resolve(original.data)}
    now = {r.path: r for r in Resolver(load_snapshot(VERSION)).resolve(after.data)}
    unreported = []
    compared = 0
    for key, item in before.items():
        new = now.get(key)
        if item.source in UNCOMPARED or new is None or new.source in UNCOMPARED:
            continue
        compared += 1
        if not same(item.value, new.value) and not covered(key, reported):
            unreported.append(f"{key}: {item.value!r} → {new.value!r}")
    return Outcome(path.name, source, code, error is None, said_why, unreported, "" if error is None else
                   f"{type(error).__name__}: {str(error).splitlines()[0][:160] if str(error) else ''}",
                   sum("written to keep it" in line for line in lines), sum("value changes:" in line for line in lines),
                   compared)


def run_corpus(migrate_fn: Any) -> list[Outcome]:
    from dsfields.check import Checker
    from dsfields.upgrade import infer_release

    os.environ.setdefault("WORLD_SIZE", "1")
    os.environ.setdefault("RANK", "0")
    os.environ.setdefault("LOCAL_RANK", "0")
    checker = Checker(load_snapshot(VERSION))
    releases = release_dates()
    outcomes = []
    for path, date in corpus():
        if date is not None:
            source = release_at(date, releases)
        else:
            try:
                guess = infer_release(load(path, "deepspeed").data)
            except ConfigFileError:
                continue
            source = guess.version or releases[0][0]
        outcome = evaluate(path, source, migrate_fn, checker)
        if outcome is not None:
            outcomes.append(outcome)
    return outcomes


def figures(outcomes: list[Outcome]) -> str:
    builds = sum(o.builds for o in outcomes)
    silent_fail = [o for o in outcomes if not o.builds and not o.said_why]
    values = sum(len(o.unreported) for o in outcomes)
    return (f"{len(outcomes)} files: {builds} build DeepSpeedConfig {VERSION} after migration; "
            f"{len(silent_fail)} fail to build with exit 0 or without saying why; "
            f"{values} of {sum(o.compared for o in outcomes)} values change unreported (in "
            f"{sum(bool(o.unreported) for o in outcomes)} files); "
            f"{sum(o.listed for o in outcomes)} value changes listed, {sum(o.pinned for o in outcomes)} pinned")


@pytest.mark.parametrize("mode", ["--keep-behaviour", "--adopt-defaults"])
def test_corpus_migrates_keeping_the_meaning(mode: str):
    outcomes = run_corpus(migrate_here if mode == "--keep-behaviour" else adopting)
    pinned = sum(o.pinned for o in outcomes)
    assert (pinned > 20) if mode == "--keep-behaviour" else (pinned == 0), pinned
    assert len(outcomes) >= 40, len(outcomes)
    print("\n" + figures(outcomes))
    problems = []
    for outcome in outcomes:
        if not outcome.builds and not outcome.said_why:
            problems.append(f"{outcome.name} (from {outcome.source}): DeepSpeedConfig {VERSION} rejects the migration "
                            f"({outcome.error}) and migrate exited {outcome.exit_code} without saying why")
        for change in outcome.unreported:
            problems.append(f"{outcome.name} (from {outcome.source}): unreported value change {change}")
    assert not problems, "\n".join(problems)


def test_every_rewrite_kind_builds_deepspeed_config_0_19_8():
    """The fixtures of tests/test_migrate_upgrade.py, migrated, are accepted by the real DeepSpeedConfig 0.19.8
    unless migrate left something that needs attention (and said so)."""
    from test_check_differential import for_deepspeed
    from test_migrate_upgrade import REWRITES

    from dsfields.check import Checker
    from dsfields.extract.oracle import build_deepspeed_config
    from dsfields.migrate import migrate

    os.environ.setdefault("WORLD_SIZE", "1")
    checker = Checker(load_snapshot(VERSION))
    for name, source, text, _, _ in REWRITES:
        original = parse(text, name, "deepspeed")
        new_text, result = migrate(text, original, load_snapshot(VERSION), load_snapshot(source))
        error = build_deepspeed_config(for_deepspeed(parse(new_text, name, "deepspeed").data, checker))
        assert error is None or result.notes, f"{name}: DeepSpeedConfig {VERSION} raises {error!r}"
        assert build_deepspeed_config(for_deepspeed(original.data, checker)) is not None or error is None or \
            result.notes, name


if __name__ == "__main__":
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--baseline", metavar="CODE_DIR", help="measure another checkout's migrate (its extractor/)")
    parser.add_argument("-v", action="store_true", help="list every file's problems")
    parser.add_argument("--adopt-defaults", action="store_true", help="measure migrate --adopt-defaults")
    args = parser.parse_args()
    result = run_corpus(migrate_baseline(args.baseline) if args.baseline else
                        adopting if args.adopt_defaults else migrate_here)
    if args.v:
        for o in result:
            if not o.builds or o.unreported:
                print(f"{o.name} from {o.source} exit {o.exit_code} builds={o.builds} said_why={o.said_why} "
                      f"{o.error}")
                for change in o.unreported:
                    print(f"    {change}")
    print(figures(result))
