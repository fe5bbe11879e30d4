"""``check --runtime``: ask DeepSpeed itself for a second opinion, and say which key its error is about.

Building ``DeepSpeedConfig`` needs DeepSpeed, which only :mod:`dsfields.extract` may import: the
command line passes :func:`dsfields.extract.oracle.build_deepspeed_config` in as ``build``. What is
here prepares the config as DeepSpeed would receive it (HF ``"auto"`` filled, one rank) and finds
the culprit keys of an error; it runs on any callable with the same contract (tests pass fakes).
"""

from __future__ import annotations

import copy

from dsfields.check.engine import Checker
from dsfields.check.findings import Finding, Kind, Options, Severity
from dsfields.check.rules import MISSING, View
from dsfields.configfile import ConfigFile, Path_
from dsfields.hf.trainer import fill_trainer_auto
from dsfields.model.batch import BATCH_KEYS, at_one_rank
from dsfields.model.dotted import join
from dsfields.model.errors import MissingExtra
from dsfields.model.store import installed_deepspeed_version

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs check's start-up milliseconds; annotations are strings anyway
    from collections.abc import Callable, Iterator
    from typing import Any

if TYPE_CHECKING:
    Build = Callable[[dict[str, Any]], BaseException | None]
    """Build DeepSpeed's config from a dict: the exception it raises, or None when it accepts it."""


def hf_substitute(data: dict[str, Any], checker: Checker) -> dict[str, Any]:
    """``data`` with the HF Trainer's ``"auto"`` fills replaced by plausible values, batch kept consistent at 1 GPU.

    The Trainer's own values first (:func:`dsfields.hf.trainer.fill_trainer_auto`: betas
    ``[0.9, 0.999]``, not a placeholder 1 that the optimizer then rejects); a placeholder only for a
    filled key that list does not know.
    """
    out = fill_trainer_auto(data)
    fills = checker.hf_fills or {}
    for path in fills:
        parts = path.split(".")
        node: Any = out
        for part in parts[:-1]:
            node = node.get(part) if isinstance(node, dict) else None
        if not isinstance(node, dict) or node.get(parts[-1]) != "auto":
            continue
        node[parts[-1]] = _placeholder(path, checker)
    return out


def _placeholder(path: str, checker: Checker) -> Any:
    if path in BATCH_KEYS:
        return 1
    record = checker.fields.get(path)
    if record is not None:
        if "boolean" in record.json_types:
            return False
        if record.default is not None:
            return record.default
    return 1


def runtime_findings(checker: Checker, config: ConfigFile, options: Options, build: Build) -> list[Finding]:
    """``--runtime``: DeepSpeed's own verdict on ``config``, from ``build`` (the CLI passes the extractor's)."""
    installed = installed_deepspeed_version()
    if installed is None:  # asked for DeepSpeed's own verdict with no DeepSpeed at all: unusable, not a note
        raise MissingExtra("DeepSpeed", cause="not installed")
    if installed != checker.version:
        return [Finding("", Severity.INFO, Kind.LIMITATION,
                        f"--runtime skipped: the installed DeepSpeed is {installed or 'none'}, not {checker.version}",
                        f"pip install deepspeed=={checker.version}", 1)]
    data = at_one_rank(hf_substitute(config.data, checker) if options.hf else config.data)
    error, culprits = deepspeed_verdict(data, checker, build)
    if error is None:
        return []
    findings = []
    for path in culprits or [""]:
        key_path: Path_ = tuple(path.split(".")) if path else ()
        findings.append(Finding(path, Severity.ERROR, Kind.RUNTIME, f"DeepSpeedConfig raises: {error}",
                                "see the other findings for this key", config.line_of(key_path) or 1))
    return findings


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}".strip()


def _leaf_paths(data: Any, prefix: str = "") -> Iterator[str]:
    if isinstance(data, dict):
        for key, value in data.items():
            path = join(prefix, str(key))
            yield from _leaf_paths(value, path)
            yield path


def _delete(data: dict[str, Any], path: str) -> dict[str, Any]:
    out = copy.deepcopy(data)
    parts = path.split(".")
    node: Any = out
    for part in parts[:-1]:
        node = node.get(part) if isinstance(node, dict) else None
    if isinstance(node, dict):
        node.pop(parts[-1], None)
    return out


def deepspeed_verdict(data: dict[str, Any], checker: Checker, build: Build) -> tuple[str | None, list[str]]:
    """DeepSpeed's error on ``data`` and the key(s) it is about.

    pydantic names the key itself (``loc``); removed keys are named by their message; otherwise
    the culprits are the keys whose removal makes that error go away (asked of DeepSpeed again).
    """
    error = build(data)
    if error is None:
        return None, []
    message = _first_line(error)
    located = _pydantic_paths(error, data, checker)
    if located:
        return message, located
    for path, removed in checker.removed.items():
        if removed.message in str(error):
            return message, [path]
    signature = (type(error).__name__, str(error))
    culprits = []
    for path in _leaf_paths(data):
        again = build(_delete(data, path))
        if again is None or (type(again).__name__, str(again)) != signature:
            culprits.append(path)
    # Prefer the deepest keys: removing a whole section also removes its faulty key.
    deepest = [p for p in culprits if not any(q.startswith(p + ".") for q in culprits)]
    return message, deepest


def _pydantic_paths(error: BaseException, data: dict[str, Any], checker: Checker) -> list[str]:
    errors = getattr(error, "errors", None)
    title = getattr(error, "title", None)
    if not callable(errors) or not title:
        return []
    sections = [p for p, s in checker.sections.items() if s.model_name == title]
    present = [p for p in sections if View(data, checker.snapshot, frozenset()).raw(p) is not MISSING] or sections
    if not present:
        return []
    paths = []
    for err in errors():
        loc = [str(part) for part in err.get("loc", ()) if isinstance(part, str)]
        paths.append(".".join([present[0], *loc]) if present[0] else ".".join(loc))
    return sorted(set(paths))
