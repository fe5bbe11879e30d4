# `dsfields explain` (issue 38): from what a run printed to the key at fault, the releases and the fix.
"""``dsfields explain``: a pasted error, warning or symptom → the key(s), why, the releases and the fix.

Users arrive with an AssertionError, a pydantic ``ValidationError`` block, the Trainer's mismatch list or "my
offload does nothing", not with a key. This answers from the committed snapshots only: the message catalogue
(``generated/<V>/messages.json``, extracted by :mod:`dsfields.extract.message_catalogue`), the HF catalogue
(``generated/hf/messages.json``), each release's fields (which model class reads which section, where each key
lives) and the index of changes (in which releases a key exists).

Steps: :func:`normalise` (ANSI, rank prefixes, rich frames, wrapped lines; bounded) → :func:`explain_text`
(pydantic blocks, catalogue patterns, literal-token scoring, symptom words) → :func:`render_text` /
:func:`render_json`. Exit codes: 0 placed, 1 cannot place, 2 unusable input.
"""

from __future__ import annotations

import json
import math
import os
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache, lru_cache
from pathlib import Path
from typing import Any

from dsfields.model import chinese
from dsfields.model.dotted import at_path
from dsfields.model.errors import UsageError
from dsfields.model.generated import read_generated
from dsfields.model.message_ids import ID_SHAPE, RAISED_MARKER, longest_chunk, pattern_regex
from dsfields.model.store import available_versions, generated_root, load, load_messages, version_key
from dsfields.model.termsafe import shown

JSON_FORMAT = 1
"""Version of the ``--format json`` document (documented in docs/explain.md)."""

MAX_PASTE = 1 << 20
"""Bytes of a paste that are read; more is cut (the tail, where the error is, is kept)."""
MAX_LINES = 4000
"""Lines of a paste that are looked at (the last ones)."""

ACTIONS = ("set_value", "set_auto", "remove_key", "move_key", "rename_key", "upgrade", "downgrade", "code_or_tool",
           "no_change")

_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-Z\\-_]")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_PREFIX = re.compile(r"^(?:\s*\[(?:rank\d+|default\d+|:\d+|\d+,\s*\d+|[A-Za-z]*\d*)\]:?\s?|\s*rank\d+:\s?)+")
_LOGHEAD = re.compile(r"^\s*\[\d{4}-\d\d-\d\d[^\]]*\]\s*(?:\[[A-Z]+\]\s*)?(?:\[[^\]]*\]\s*)?")
_LOGSITE = re.compile(r"^\s*\[\d{4}-\d\d-\d\d[^\]]*\]\s*\[[A-Z]+\]\s*\[(\w+\.py):(\d+):\w+\]")
_RICH = re.compile(r"^\s*[│|]?\s*(?:❱\s*)?\d+\s*[│|]((?:\s*[│|])*)(.*?)[│|]?\s*$")
_BOX = re.compile(r"[│╭╮╰╯─❱]")
_FRAME = re.compile(r"""File "([^"]+)", line (\d+)(?:, in (\S+))?""")
_PYTEST_FRAME = re.compile(r"^(\S+\.py):(\d+): (\w+)$")
"""pytest's frame line under a failure ("deepspeed/runtime/lr_schedules.py:710: ZeroDivisionError")."""
_RAISED_IN_LINE = re.compile(r"(?:[\w.]+\.)?\b\w*(?:Error|Exception)\s*:\s")
_EXCEPTION = re.compile(r"^(?:[\w.]+\.)?(\w*(?:Error|Exception|Warning|Interrupt)|AssertError)\s*:\s*(.*)$")
_PYDANTIC = re.compile(r"(\d+) validation errors? for (\w+)")
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9_]+")
_FIELD = re.compile(r"\{\{|\}\}|\{[^{}]*\}")
_PIECES = re.compile(r"(?<!\{)\{[^{}]*\}(?!\})")

ZH = {"lang": "zh"}


def _t(lang: str, en: str, zh: str) -> str:
    return zh if lang == "zh" else en


# ----------------------------------------------------------------------------------------------- the paste


@dataclass
class Paste:
    """A paste made readable: its lines, the text as one line, its traceback frames and exception lines."""

    lines: list[str]
    flat: str
    frames: list[tuple[str, int, str]]
    exceptions: list[tuple[str, str]]
    source_lines: list[str]
    prose: bool = False
    """No line of program output (no log head, frame or exception line): a user's own words."""
    logged_at: list[tuple[str, int, str]] = field(default_factory=list)
    """``(file name, line, the line's text)`` of DeepSpeed's log heads (``[runner.py:191:fetch_hostfile]``)."""


def normalise(raw: str | bytes) -> Paste:
    """Strip colours, rank prefixes, log heads and rich frames; join wrapped lines; bounded in size."""
    if isinstance(raw, bytes):
        raw = raw[-MAX_PASTE:].decode("utf-8", "replace")
    raw = raw[-MAX_PASTE:]
    raw = _ANSI.sub("", raw).replace("\r\n", "\n").replace("\r", "\n")
    lines: list[str] = []
    frames: list[tuple[str, int, str]] = []
    exceptions: list[tuple[str, str]] = []
    sources: list[str] = []
    logged = False
    logged_at: list[tuple[str, int, str]] = []
    for line in raw.split("\n")[-MAX_LINES:]:
        line = _CONTROL.sub(" ", line)[:2000]
        line = _PREFIX.sub("", line)
        if line.startswith("E   "):  # pytest's failure lines: "E       ZeroDivisionError: ..."
            line = line[1:].strip()
        elif line.startswith(">   "):  # pytest's marked source line
            sources.append(line[1:].strip())
            line = line[1:]
        headless = _LOGHEAD.sub("", line)
        logged = logged or headless != line
        site = _LOGSITE.match(line)
        if site:
            logged_at.append((site.group(1), int(site.group(2)), re.sub(r"\s+", " ", headless).strip().lower()))
        line = headless
        rich = _RICH.match(line)
        if rich:
            sources.append(rich.group(2).strip())
            line = rich.group(2)
        line = _BOX.sub(" ", line).rstrip()
        if not line.strip():
            continue
        frame = _FRAME.search(line) or _PYTEST_FRAME.match(line.strip())
        if frame:
            frames.append((_relative(frame.group(1)), int(frame.group(2)), frame.group(3) or ""))
            rest = line[frame.end():].strip() if frame.re is _FRAME else ""
            if not rest:
                continue
            # a traceback flattened onto one line ("File ..., line 661, in __init__ CODE TypeError: ..."): the
            # code is the frame's source line, the rest the exception
            raised = _RAISED_IN_LINE.search(rest)
            code = rest[:raised.start()].strip() if raised else rest
            if code:
                sources.append(code)
                lines.append(code)
            if not raised:
                continue
            line = rest[raised.start():]
        match = _EXCEPTION.match(line.strip())
        if match:
            exceptions.append((match.group(1), match.group(2)))
        lines.append(line.strip())
    flat = re.sub(r"\s+", " ", " ".join(lines))
    return Paste(lines, flat, frames, exceptions, sources, not (logged or frames or exceptions), logged_at[-50:])


def _relative(path: str) -> str:
    path = path.replace("\\", "/")
    for top in ("deepspeed/", "transformers/", "accelerate/"):
        at = path.rfind("/" + top)
        if at >= 0:
            return path[at + 1:]
        if path.startswith(top):
            return path
    return path.rsplit("/", 1)[-1]


# ----------------------------------------------------------------------------------------------- catalogue


@dataclass
class Occurrence:
    version: str
    file: str
    line: int
    keys: list[str]
    condition: str | None
    section: str | None
    state: str | None = None
    """The part of the deciding test no config key sets (a loaded checkpoint's version, the device)."""
    pattern: str = ""
    """Its own words, where they differ from the message's first (two asserts whose format fields name different
    constants, ``'{..._DIFFICULTY}'`` and ``'{..._MAX_STEP}'``, share an ID); "" where they are the same."""


@dataclass
class Message:
    """One message ID over the releases (or HF releases) it exists in."""

    id: str
    kind: str
    type: str
    pattern: str
    layer: str
    occurrences: list[Occurrence] = field(default_factory=list)
    parts: list[str] = field(default_factory=list)
    """Patterns of the lines it joins from a list filled elsewhere (the Trainer's ``- ds KEY=V vs hf FLAG=V``): one
    of them pasted alone is this message."""

    @property
    def literal(self) -> str:
        return _FIELD.sub(lambda m: m.group()[0] if m.group() in ("{{", "}}") else " ", self.pattern)

    @property
    def newest(self) -> Occurrence:
        return max(self.occurrences, key=lambda o: _anykey(o.version))

    def regex(self) -> re.Pattern[str]:
        return pattern_regex(self.pattern)


@lru_cache(maxsize=4096)
def _anykey(version: str) -> tuple[Any, ...]:
    try:
        return version_key(version.split("-", 1)[-1])
    except ValueError:
        return (0,)


def _read_json(path: str) -> Any:
    try:
        return json.loads(read_generated(path))
    except (OSError, ValueError):
        return None


@cache
def catalogue(root: str | None = None) -> dict[str, Message]:
    """Every message of every snapshotted release (DeepSpeed and HF), by ID."""
    root = root or generated_root()
    found: dict[str, Message] = {}
    for version in available_versions(root):
        document = load_messages(version, root)
        if not document:
            continue
        for entry in document.get("messages", []):
            _add(found, entry, version, "deepspeed")
    hf = _read_json(os.path.join(root, "hf", "messages.json")) or {}
    for release, entries in sorted((hf.get("releases") or {}).items()):
        for entry in entries:
            _add(found, entry, release, release.split("-", 1)[0])
    return found


def _add(found: dict[str, Message], entry: dict[str, Any], version: str, layer: str) -> None:
    message = found.get(entry["id"])
    if message is None:
        message = found[entry["id"]] = Message(entry["id"], entry["kind"], entry["type"], entry["pattern"], layer)
    own = entry["pattern"] if entry["pattern"] != message.pattern else ""
    message.occurrences.append(Occurrence(version, entry["file"], entry["line"], list(entry.get("keys") or []),
                                          entry.get("condition"), entry.get("section"), entry.get("state"), own))
    for part in entry.get("parts") or []:
        if part not in message.parts:
            message.parts.append(part)


def release_span(versions: list[str]) -> str:
    """``0.15.0-0.19.8`` for consecutive releases (of the full list), runs joined by commas."""
    if not versions:
        return ""
    layer = versions[0].split("-", 1)[0] + "-" if "-" in versions[0] else ""
    plain = sorted({v.split("-", 1)[-1] for v in versions}, key=_anykey)
    universe = _universe(layer) or plain
    index = {v: i for i, v in enumerate(universe)}
    runs: list[list[str]] = []
    for version in plain:
        if runs and index.get(version, -5) == index.get(runs[-1][-1], -9) + 1:
            runs[-1].append(version)
        else:
            runs.append([version])
    text = ", ".join(r[0] if len(r) == 1 else f"{r[0]}-{r[-1]}" for r in runs)
    return (layer.rstrip("-") + " " + text) if layer else text


@cache
def _universe(layer: str) -> list[str]:
    if not layer:
        return available_versions(generated_root())
    hf = _read_json(os.path.join(generated_root(), "hf", "messages.json")) or {}
    return sorted({r.split("-", 1)[1] for r in hf.get("releases", {}) if r.startswith(layer)}, key=_anykey)


# ----------------------------------------------------------------------------------------------- snapshot facts


@cache
def _snapshot_facts(version: str) -> dict[str, Any]:
    snapshot = load(version)
    raw = snapshot.raw if hasattr(snapshot, "raw") else {}
    sections = raw.get("sections", {})
    fields = raw.get("fields", {})
    models = {}
    for path, section in sections.items():
        if section.get("model"):
            models.setdefault(section["model"].rsplit(".", 1)[-1], path)
    leaves: dict[str, list[str]] = {}
    for path, record in fields.items():
        leaves.setdefault(record.get("key") or path.rsplit(".", 1)[-1], []).append(path)
    python: dict[str, dict[str, str]] = {}
    for path, record in fields.items():
        if record.get("python_name"):
            python.setdefault(record.get("section") or "", {})[record["python_name"]] = path
    return {"models": models, "paths": set(fields), "leaves": leaves, "python": python,
            "sections": set(sections), "hf": _hf_fill_list()}


def _hf_fill_list() -> dict[str, Any]:
    """The HF Trainer's fill list as stored (:func:`dsfields.hf.trainer.fill_list`), {} without one."""
    from dsfields.hf.trainer import fill_list

    hf = fill_list()
    return dict(hf.raw) if hf is not None else {}


@cache
def _key_history() -> dict[str, list[tuple[str, str]]]:
    """Path → [(version, event kind)] from ``generated/index.json``."""
    index = _read_json(os.path.join(generated_root(), "index.json")) or {}
    return {p: [(e.get("version", ""), e.get("kind", "")) for e in events]
            for p, events in (index.get("fields") or {}).items()}


def key_releases(path: str) -> list[str]:
    """The snapshotted releases whose fields include ``path``."""
    events = _key_history().get(path)
    if not events:
        return []
    versions = available_versions(generated_root())
    present, inside = [], False
    marks = {v: k for v, k in events}
    for version in versions:
        kind = marks.get(version)
        if kind == "introduced":
            inside = True
        elif kind == "removed":
            inside = False
        if inside:
            present.append(version)
    return present


def class_section(name: str, versions: list[str]) -> str | None:
    """The section whose model class is ``name`` (``DeepSpeedBF16Config`` → ``bf16``), newest release first."""
    for version in versions:
        try:
            section = _snapshot_facts(version)["models"].get(name)
        except Exception:
            continue
        if section:
            return section
    return None


def paths_in(text: str, version: str, section: str | None = None, loose: bool = False) -> list[str]:
    """JSON paths the text names: dotted paths, then key names unique in the release (or in ``section``).

    ``loose``: the text is a field of a library's message that prints ds_config keys (the Trainer's mismatch
    list), so a dotted word under a known section counts even where the release lists no such field
    (``scheduler.params.total_num_steps``: scheduler params are the scheduler's, not fields).
    """
    facts = _snapshot_facts(version)
    found: list[str] = []
    for found_word in re.finditer(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*", text):
        word = found_word.group()
        if "_" not in word and "." not in word and not any(c.isdigit() for c in word) and not (
                text[found_word.start() - 1:found_word.start()] in "`'\"" and found_word.start() > 0):
            continue  # a plain English word ("compile", "checkpoint") is not evidence of a key unless quoted
        if word in facts["paths"] or (word in facts["sections"] and "." in word) or (
                loose and "." in word and word.split(".", 1)[0] in facts["sections"]):
            path = word
        else:
            leaf = word.rsplit(".", 1)[-1]
            if "_" not in leaf:
                continue
            candidates = facts["leaves"].get(leaf, [])
            if section:
                candidates = [p for p in candidates if p.startswith(section + ".")] or candidates
            if len(candidates) != 1:
                continue
            path = candidates[0]
        if path not in found:
            found.append(path)
    return found


# ----------------------------------------------------------------------------------------------- answers


@dataclass
class Cause:
    keys: list[str]
    action: str
    fix: str
    why: str
    releases: str = ""
    raised_at: str | None = None
    message_id: str | None = None
    score: float = 0.0

    def as_json(self) -> dict[str, Any]:
        return {"keys": self.keys, "action": self.action, "fix": self.fix, "releases": self.releases,
                "raised_at": self.raised_at, "message_id": self.message_id}


@dataclass
class Answer:
    not_config: bool = False
    layer: str = "deepspeed"
    causes: list[Cause] = field(default_factory=list)
    message: str = ""
    pinned: str | None = None
    placed: bool = True
    not_in_release: str | None = None
    """``--version V`` whose DeepSpeed does not have the message found (the answer is for the releases that do)."""

    def as_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {"format": JSON_FORMAT, "not_config": self.not_config, "layer": self.layer,
                                    "causes": [c.as_json() for c in self.causes]}
        if self.pinned:
            document["pinned_releases"] = self.pinned
        if not self.placed:
            document["placed"] = False
        if self.not_in_release:
            document["not_in_release"] = self.not_in_release
        return document


def explain_text(raw: str | bytes, *, version: str | None = None, config: dict[str, Any] | None = None,
                 lang: str = "en", hf: tuple[str, ...] = ()) -> Answer:
    """The answer for one paste (see the module docstring)."""
    paste = normalise(raw)
    versions = sorted(available_versions(generated_root()), key=version_key, reverse=True)
    if version:
        versions = [version] + [v for v in versions if v != version]
    newest = versions[0]
    answer = _pydantic(paste, versions, lang)
    if answer is None:
        answer = _fractional_fill(paste, lang)
    if answer is None:
        answer = _catalogue_answer(paste, versions, version, lang, hf)
    if answer is None:
        answer = _not_config(paste, lang)
    if answer is None:
        answer = _string_for_number(paste, versions, lang)
    if answer is None:
        answer = _source_line(paste, versions, lang)
    if answer is None:
        answer = _quoted_key(paste, versions, lang)
    if answer is None:
        answer = _symptom(paste, version or newest, lang)
    if answer is None:
        return Answer(placed=False, layer="unknown")
    if config is not None:
        _narrow(answer, config, lang)
    return answer


def _pydantic(paste: Paste, versions: list[str], lang: str) -> Answer | None:
    head = _PYDANTIC.search(paste.flat)
    if not head:
        return None
    section = class_section(head.group(2), versions)
    aliases: dict[str, dict[str, Any]] = {}
    if section is None:
        inference = _inference_document(versions[0])
        if inference is None or str(inference.raw.get("model", "")).rsplit(".", 1)[-1] != head.group(2):
            return None
        section, aliases = "", inference.by_alias  # init_inference's config: its keys, its aliases ("tp")
    lines = paste.lines
    causes: list[Cause] = []
    for index, line in enumerate(lines):
        line = re.sub(r"\s*->\s*", ".", line)  # pydantic 1 writes a nested field "zero -> fp16"
        if index + 1 >= len(lines) or not re.fullmatch(r"[A-Za-z_][\w.]*", line):
            continue
        error = lines[index + 1]
        if not re.search(r"\[type=|\(type=|not permitted|Input should|value is not|field required", error):
            continue
        if aliases:
            parent, _, leaf = line.rpartition(".")
            named = aliases.get(parent, {}).get(leaf)
            line = named.path if named is not None else line
        path = f"{section}.{line}" if section else line
        extra = "extra" in error
        if extra:
            # the key's own parent, named as the user wrote it ("zero -> fp16": fp16 inside zero)
            owner, leaf = (path.rpartition(".")[0] or head.group(2)), path.rpartition(".")[2]
            present = [] if aliases else key_releases(path)  # the inference document has no key history
            if present:
                span = release_span(present)
                action = "upgrade"
                fix = _t(lang, f"`{path}` exists in DeepSpeed {span} only: upgrade DeepSpeed to one of those "
                               f"releases, or delete `{leaf}` from `{owner}`.",
                         chinese.text("explain.exists_in_deepspeed_only_upgrade_deepspeed", path=path, span=span,
                                      section=owner, line=leaf))
                why = _t(lang, f"the class {head.group(2)} (section `{owner}`) of the running release does not know "
                               f"`{leaf}` and refuses unknown keys.",
                         chinese.text("explain.the_class_section_of_the_running", head_group_2=head.group(2),
                                      section=owner, line=leaf))
            else:
                action = "remove_key"
                fix = _t(lang, f"delete `{leaf}` from `{owner}` (no snapshotted release has `{path}`; check the "
                               f"spelling with `dsfields lookup {leaf}`).",
                         chinese.text("explain.delete_from_no_snapshotted_release_has", section=owner, line=leaf,
                                      path=path))
                why = _t(lang, f"{head.group(2)} (section `{owner}`) refuses keys it does not define.",
                         chinese.text("explain.section_refuses_keys_it_does_not", head_group_2=head.group(2),
                                      section=owner))
        else:
            value = re.search(r"input_value=([^,\]]+)", error)
            shown_value = value.group(1) if value else ""
            action = "set_value"
            fix = _t(lang, f"write `{path}` as the type DeepSpeed expects ({error.split('[')[0].strip()}); the value "
                           f"given was {shown_value or 'refused'}.",
                     chinese.text("explain.write_as_the_type_deepspeed_expects", path=path,
                                  error_split_0_strip=error.split('[')[0].strip(), shown_value_or=shown_value or ''))
            why = _t(lang, f"{head.group(2)} validates `{line}` and refused its value.",
                     chinese.text("explain.validates_and_refused_its_value", head_group_2=head.group(2), line=line))
        causes.append(Cause([path], action, fix, why, score=10))
    if not causes:
        return None
    return Answer(layer="deepspeed", causes=causes, message=head.group(0))


_FRACTION = re.compile(r"type=int_from_float, input_value=(\d+\.\d*[1-9]\d*)")


def _fractional_fill(paste: Paste, lang: str) -> Answer | None:
    """pydantic's "a valid integer, got a number with a fractional part" without the field's name: a number no user
    writes, so one the HF Trainer computed from the model's hidden size for an "auto" (older transformers filled
    ``0.9 x hidden x hidden`` unrounded). The fill whose formula, learnt from the Trainer's own fill code at two
    hidden sizes, gives that number at a whole hidden size is the key."""
    found = _FRACTION.search(paste.flat)
    if not found:
        return None
    from dsfields.hf.trainer import HIDDEN_KEYS, fill_trainer_auto

    value = float(found.group(1))

    def fills(hidden: int) -> dict[str, Any]:
        auto = {path.split(".", 1)[1]: "auto" for path in HIDDEN_KEYS}
        done = fill_trainer_auto({"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 3, **auto}},
                                 hidden)
        return {path: at_path(done, path, None) for path in HIDDEN_KEYS}

    low, high = fills(1000), fills(2000)
    for path in HIDDEN_KEYS:
        a, b = low[path], high[path]
        if not (isinstance(a, int | float) and isinstance(b, int | float)) or a <= 0 or b <= a:
            continue
        power = round(math.log2(b / a))
        scale = a / 1000 ** power if power else 0
        if power < 1 or scale <= 0:
            continue
        hidden = round((value / scale) ** (1 / power))
        if hidden > 0 and int(fills(hidden)[path]) == int(value):
            return Answer(layer="transformers", message=found.group(0), causes=[Cause([path], "set_value", _t(
                lang, f"write an integer for `{path}` (for example {int(value)}) instead of \"auto\", or use a "
                      f"transformers release that rounds its fill: the Trainer filled {value} from the model's "
                      f"hidden size {hidden}.",
                chinese.text("explain.fractional_fill_fix", path=path, whole=int(value), value=value,
                             hidden=hidden)),
                _t(lang, f"DeepSpeed wants an integer for `{path}`; the Trainer's \"auto\" fill gave {value}.",
                   chinese.text("explain.fractional_fill_why", path=path, value=value)), score=8)])
    return None


_LIBRARY_WORDS = frozenset({"deepspeed", "transformers", "accelerate", "trainer"})
"""Words every paste about DeepSpeed has (a log prefix "[deepspeed]"): no evidence of one message."""


def _inference_document(version: str) -> Any:
    """The init_inference document of ``version`` (or the newest that has one), None without any."""
    from dsfields.model.errors import DsfieldsError
    from dsfields.model.store import load_inference

    try:
        return load_inference(version)
    except (DsfieldsError, OSError):  # a release without the document: the newest one answers
        try:
            return load_inference(None)
        except (DsfieldsError, OSError):
            return None


def _candidates(paste: Paste) -> list[str]:
    """Texts to match: each exception line's message, then the whole paste flattened (bounded)."""
    texts = [m for _, m in paste.exceptions if m]
    texts.append(paste.flat[-20000:])
    return texts


def _catalogue_answer(paste: Paste, versions: list[str], version: str | None, lang: str,
                      hf: tuple[str, ...] = ()) -> Answer | None:
    messages = catalogue()
    haystack = paste.flat[-20000:].lower()
    scored: list[tuple[float, Message, re.Match[str] | None]] = []
    words = set(w.lower() for w in _WORD.findall(" ".join(m for _, m in paste.exceptions) or paste.flat[-4000:]))
    exception_texts = [re.sub(r"\s+", " ", m).strip().lower() for _, m in paste.exceptions[-5:]]
    itemised: dict[str, str] = {}
    for message in messages.values():
        literal = message.literal
        chunks = sorted((re.sub(r"\s+", " ", c.replace("{{", "{").replace("}}", "}")).strip().lower()
                         for c in _PIECES.split(message.pattern) if c.strip()), key=len, reverse=True)
        longest = chunks[0] if chunks else ""
        match = None
        if longest and longest in haystack:
            match = message.regex().search(paste.flat[-20000:])
        if match:
            # what was raised (the traceback's last "XError: ..." lines) before warnings logged around it
            raised = any(longest in text for text in exception_texts)
            scored.append((100 + len(literal.strip()) + (400 if raised else 0), message, match))
            continue
        # without the list's bullet ("- "), which a line pasted alone often loses
        lines = [found for found in (pattern_regex(p.lstrip("-*• ")).search(paste.flat[-20000:])
                                     for p in message.parts) if found]
        if lines:  # a line of its list without the message around it ("ds fp16.enabled=True vs hf fp16=False")
            itemised[message.id] = " ".join(found.group() for found in lines)
            scored.append((100 + len(lines[0].group()), message, None))
            continue
        flat_literal = re.sub(r"\s+", " ", literal).lower()
        part = [m for m in exception_texts if len(m) >= 24 and m in flat_literal]
        if part:  # a message cut short by the paste ("AssertionError: Check batch related parameters")
            scored.append((60 + len(part[0]), message, None))
            continue
        head = re.sub(r"\s+", " ", _PIECES.split(message.pattern)[0]).strip().lower()
        if len(head) >= 40 and head in haystack:  # its opening words, the rest cut off or on lines not pasted
            scored.append((60 + len(head), message, None))
            continue
        tokens = set(w.lower() for w in _WORD.findall(literal) if len(w) > 2)
        if len(tokens) >= 4 and words:
            common = tokens & words
            ratio = len(common) / len(tokens)
            # two distinctive words in common, not only "does not exist" (one long word alone, "offload" or
            # "autotuning", matched reports about something else)
            # a user's own words (no line of program output) share words with many messages: most of them needed
            if (ratio >= (0.8 if paste.prose else 0.6) and len(common) >= 3
                    and sum(len(w) >= 6 for w in common - _LIBRARY_WORDS) >= 2):
                scored.append((ratio * 50 + len(common), message, None))
    # a line whose log head names a file the message is never raised in was logged by another part of DeepSpeed
    # ("Unable to find hostfile" from the launcher's runner.py, not autotuning/utils.py's copy)
    scored = [s for s in scored if not _logged_elsewhere(s[1], paste)]
    if not scored:
        return None
    scored.sort(key=lambda s: (-s[0], s[1].id))
    best = scored[0][0]
    chosen = [s for s in scored if s[0] >= best - 1e-9 or (s[0] >= 100 and best >= 100 and s[0] >= best * 0.9)][:3]
    causes: list[Cause] = []
    pinned = None
    layer = chosen[0][1].layer
    for score, message, match in chosen:
        occurrence, pin = _occurrence(message, paste, version, hf)
        pinned = pinned or pin
        captured = (_captured(message, match, occurrence.condition) or itemised.get(message.id)
                    or _after_opening(message, paste))
        where_version = occurrence.version.split("-", 1)[-1] if message.layer == "deepspeed" else versions[0]
        keys = []
        if message.layer != "deepspeed" or not occurrence.keys:
            # the message's own values; the rest of the paste only for another library's message (DeepSpeed's
            # launcher saying "Unable to find hostfile" is about no key the command line around it spells)
            rest = paste.flat[-4000:] if message.layer != "deepspeed" or not occurrence.file.startswith(
                "deepspeed/launcher/") else ""
            keys = paths_in(captured or rest, where_version if message.layer == "deepspeed"
                            else versions[0], loose=bool(captured) and message.layer != "deepspeed")
        for key in occurrence.keys:
            if key not in keys:
                keys.append(key)
        if not keys and occurrence.condition:
            keys = _condition_keys(occurrence, where_version if message.layer == "deepspeed" else versions[0])
        if not keys and occurrence.section:
            # words of the error lines (a log's "[INFO]" heads and command lines around it spell no key)
            said = " ".join(m for _, m in paste.exceptions) or captured or message.literal
            keys = _words_to_keys(said[-4000:], occurrence.section, versions[0])
        keys = _prefer_existing(keys, where_version if message.layer == "deepspeed" else versions[0])
        if message.layer == "transformers":  # the Trainer's side of a mismatch: "- ds KEY=V vs hf FLAG=V"
            for flags in re.findall(r"\bvs hf ([\w|+()]+)", captured or ""):
                flag = next((f for f in re.split(r"[|+()]", flags) if f in _trainer_flags()), None)
                if flag and f"hf:--{flag}" not in keys:
                    keys.append(f"hf:--{flag}")
        if message.layer == "accelerate" and "accelerate config" in message.literal.lower():
            # names of accelerate's own config (its YAML's deepspeed_config keys), listed in the message
            listed = re.findall(r"'(\w+)'", captured or paste.flat[-4000:])
            yaml = [f"accelerate:{n}" for n in dict.fromkeys(listed) if n in _accelerate_keys()]
            keys = yaml + [k for k in keys if k not in yaml]
        keys = _quoted_choice(keys, message.literal, where_version if message.layer == "deepspeed" else versions[0])
        asked = re.findall(r'<"(\w+)"\s*:', message.pattern)  # "set <\"key\": value> in your configuration file"
        keys = [k for k in keys if k in asked] + [k for k in keys if k not in asked]
        action, fix, why = _fix(message, occurrence, keys, lang)
        solved = _solve(message, match, occurrence.condition)
        if solved is not None and keys and action == "set_value":
            expression, value = solved
            fix = _t(lang, f"set `{keys[0]}` to {value} ({expression} with the message's own values), or change the "
                           f"others until the two sides agree; {fix}",
                     chinese.text("explain.set_to_with_the_message_s", keys_0=keys[0], value=value,
                                  expression=expression, fix=fix))
        span = release_span([o.version for o in message.occurrences])
        causes.append(Cause(keys, action, fix, why, span, f"{occurrence.file}:{occurrence.line}", message.id,
                            score))
    # --version V whose DeepSpeed never raises the message found: said, so that the keys named (of the releases
    # that raise it) are not read as V's
    lacking = version if layer == "deepspeed" and version and not any(
        o.version == version for o in chosen[0][1].occurrences) else None
    if not any(cause.keys for cause in causes):
        # DeepSpeed's (or the library's) own message, about no key of any release: the config is not the cause.
        return Answer(not_config=True, layer=layer, causes=causes, message=chosen[0][1].pattern, pinned=pinned,
                      not_in_release=lacking)
    return Answer(layer=layer, causes=causes, message=chosen[0][1].pattern, pinned=pinned, not_in_release=lacking)


def _quoted_choice(keys: list[str], text: str, version: str) -> list[str]:
    """A section the message writes as ``'section': 'value'`` stands for its key whose choices hold the value
    (``'offload_optimizer': 'cpu'`` → ``zero_optimization.offload_optimizer.device``)."""
    snapshot = load(version)
    out = []
    for key in keys:
        leaf = key.rsplit(".", 1)[-1]
        said = re.search(rf"['\"]{re.escape(leaf)}['\"]\s*:\s*['\"]([\w.-]+)['\"]", text)
        chosen = None
        if said and key in snapshot.sections:
            chosen = next((record.path for _, record in sorted(snapshot.by_section.get(key, {}).items())
                           if said.group(1) in [str(c) for c in (record.choices or [])]), None)
        out.append(chosen or key)
    return list(dict.fromkeys(out))


def _logged_elsewhere(message: Message, paste: Paste) -> bool:
    chunk = longest_chunk(message.pattern)
    names = {name for name, _, text in paste.logged_at if chunk and chunk in text}
    return bool(names) and not names & {o.file.rsplit("/", 1)[-1] for o in message.occurrences}


@cache
def _scanned_names(version: str) -> frozenset[str]:
    """File names of the modules the message catalogue of ``version`` scanned (those that read ds_config)."""
    document = load_messages(version) or {}
    return frozenset(path.rsplit("/", 1)[-1] for path in document.get("scanned", []))


def _after_opening(message: Message, paste: Paste) -> str:
    """For a message the paste cuts short after its first field (the Trainer's mismatch list without its closing
    "The easiest method ..."): the text after its opening words, which its fields printed."""
    head = re.sub(r"\s+", " ", _PIECES.split(message.pattern)[0]).strip()
    if len(head) < 24 or "{" not in message.pattern:
        return ""
    flat = re.sub(r"\s+", " ", paste.flat[-20000:])
    at = flat.find(head)
    return flat[at + len(head): at + len(head) + 2000].strip() if at >= 0 else ""


def _captured(message: Message, match: re.Match[str] | None, condition: str | None) -> str:
    """The text the message's fields matched, the fields the condition reads from a config first."""
    if match is None:
        return ""
    names = [m.group()[1:-1] for m in _FIELD.finditer(message.pattern) if m.group() not in ("{{", "}}")]
    first, rest = [], []
    for name, value in zip(names, match.groups(), strict=False):
        if not value:
            continue
        read = condition and re.search(r"\.get\(\s*" + re.escape(name) + r"\b|\[\s*" + re.escape(name) + r"\s*\]",
                                       condition)
        (first if read else rest).append(value)
    return " ".join(first + rest)


def _solve(message: Message, match: re.Match[str] | None, condition: str | None) -> tuple[str, str] | None:
    """For a refused ``A == B * C ...`` whose fields the message printed: the right side's value, from the paste."""
    if match is None or not condition:
        return None
    import ast

    try:
        tree = ast.parse(condition.split(" and (")[0].strip("()"), mode="eval").body
    except SyntaxError:
        return None
    # the catalogue's condition is when the message appears: an assert's ``A == B * C`` is there as ``A != B * C``
    if not (isinstance(tree, ast.Compare) and len(tree.ops) == 1 and isinstance(tree.ops[0], ast.Eq | ast.NotEq)):
        return None
    names = [m.group()[1:-1] for m in _FIELD.finditer(message.pattern) if m.group() not in ("{{", "}}")]
    values: dict[str, float] = {}
    for name, text in zip(names, match.groups(), strict=False):
        try:
            values[name] = float(text)
        except (TypeError, ValueError):
            continue

    def value(node: ast.AST) -> float:
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return float(node.value)
        if isinstance(node, ast.Name | ast.Attribute) and ast.unparse(node) in values:
            return values[ast.unparse(node)]
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult | ast.Add | ast.Sub):
            left, right = value(node.left), value(node.right)
            return left * right if isinstance(node.op, ast.Mult) else (
                left + right if isinstance(node.op, ast.Add) else left - right)
        raise ValueError(ast.unparse(node))

    try:
        result = value(tree.comparators[0])
    except ValueError:
        return None
    return ast.unparse(tree.comparators[0]), (str(int(result)) if result.is_integer() else str(result))


def _condition_keys(occurrence: Occurrence, version: str) -> list[str]:
    """Keys the condition under which a message appears reads, where the catalogue named none: a quoted key
    (``'optimizer' in ds_config``) or, in an optimizer's or scheduler's own module, the type's parameters it keeps
    (``self.warmup_num_steps`` → ``scheduler.params.warmup_num_steps``)."""
    condition = occurrence.condition or ""
    facts = _snapshot_facts(version)
    keys = [k for k in paths_in(condition, version) if k in facts["paths"] or k in facts["sections"]]
    if keys or not occurrence.file.startswith("deepspeed/"):
        return keys
    names = _typed_names(version, occurrence.file)
    for name in re.findall(r"\bself\.(\w+)", condition):
        for path in names.get(name, []):
            if ".params." in path and path not in keys:
                keys.append(path)
    return keys


def _prefer_existing(keys: list[str], version: str) -> list[str]:
    """The most specific keys, those the release has first; a section stands for its switch (``fp16.enabled``)."""
    facts = _snapshot_facts(version)
    keys = [f"{k}.enabled" if f"{k}.enabled" in facts["paths"] else k for k in keys]
    keys = list(dict.fromkeys(keys))
    specific = [k for k in keys if not any(o.startswith(k + ".") for o in keys)]
    return sorted(specific, key=lambda k: (k not in facts["paths"], specific.index(k)))


def _words_to_keys(text: str, section: str, version: str) -> list[str]:
    from dsfields.model.wording import keys_named_by_words

    return keys_named_by_words(text, section, _snapshot_facts(version)["paths"])


def _occurrence(message: Message, paste: Paste, version: str | None,
                hf: tuple[str, ...] = ()) -> tuple[Occurrence, str | None]:
    """The occurrence to explain from, and the releases a traceback line pins (``file:line`` seen in the paste).

    ``hf``: the ``transformers-T`` / ``accelerate-A`` the user ran; of a library's message, the occurrence of the
    newest catalogued release not after it is taken (the catalogue holds some releases of each library)."""
    frames = {(f, line) for f, line, _ in paste.frames}
    logged = {(name, line) for name, line, _ in paste.logged_at}  # a log head's file:line pins as a frame does
    pinned = [o for o in message.occurrences if (o.file, o.line) in frames] or [
        o for o in message.occurrences if (o.file.rsplit("/", 1)[-1], o.line) in logged]
    if pinned:
        span = release_span([o.version for o in pinned])
        return max(pinned, key=lambda o: _anykey(o.version)), span
    if version:
        for occurrence in message.occurrences:
            if occurrence.version == version:
                return occurrence, None
    for wanted in hf:
        dist, _, release = wanted.partition("-")
        older = [o for o in message.occurrences if o.version.startswith(dist + "-")
                 and _anykey(o.version) <= _anykey(release)]
        if older:
            return max(older, key=lambda o: _anykey(o.version)), None
    return message.newest, None


def _reads_its_keys(condition: str | None, keys: list[str], occurrence: Occurrence) -> bool:
    """Whether the condition under which a message appears reads one of ``keys`` (by the release's attribute and
    accessor names, or the key's own name)."""
    if not condition or not keys:
        return False
    leaves = {key.rsplit(".", 1)[-1] for key in keys}
    if any(name in leaves for name in re.findall(r"[A-Za-z_]\w*", condition)):
        return True
    accessed = re.findall(r"\bself\.(\w+)", condition)  # the engine's or the config's own attributes
    names = _names(occurrence.version.split("-", 1)[-1]) if accessed else {}
    return any(path in keys for name in accessed for path in names.get(name, []))


def _fix(message: Message, occurrence: Occurrence, keys: list[str], lang: str) -> tuple[str, str, str]:
    """The action, fix and why for a catalogue message, worded from its kind, text and condition."""
    text = message.literal.lower()
    key = f"`{keys[0]}`" if keys else _t(lang, "the setting named in the message",
                                         chinese.text("explain.the_setting_named_in_the_message"))
    condition = occurrence.condition
    if message.layer != "deepspeed" and "auto" in text and ("mismatch" in text or "easiest" in text):
        return ("set_auto",
                _t(lang, f"set {key} to \"auto\" (the Trainer fills it from its arguments) or to the value the "
                         f"Trainer's flag has.",
                   chinese.text("explain.set_to_auto_the_trainer_fills", key_=key)),
                _t(lang, "the ds_config value and the Trainer's argument disagree; the Trainer refuses to guess.",
                   chinese.text("explain.the_ds_config_value_and_the")))
    if message.layer != "deepspeed" and "auto" in text:
        return ("set_value",
                _t(lang, f"replace \"auto\" in {key} with a number: the library could not work it out "
                         f"(it fills it from the model's `hidden_size` only).",
                   chinese.text("explain.replace_auto_in_with_a_number", key_=key)),
                _t(lang, "an \"auto\" value was left that nothing filled in.",
                   chinese.text("explain.an_auto_value_was_left_that")))
    grade = re.search(r"\b(down|up)grade (?:deepspeed|to (?:a |an )?(?:deepspeed|version|release))", text)
    if grade:
        action = f"{grade.group(1)}grade"
        return (action,
                _t(lang, f"{action} DeepSpeed as the message says, or stop setting {key}.",
                   chinese.text("explain.deepspeed_as_the_message_says_or",
                                action=chinese.text("explain.downgrade") if action == 'downgrade' else
                                chinese.text("explain.upgrade"), key_=key)),
                _t(lang, f"this release refuses {key} and names another release.",
                   chinese.text("explain.this_release_refuses_and_names_another", key_=key)))
    if "deprecat" in text:
        return ("rename_key",
                _t(lang, f"replace {key} with the key the message names.",
                   chinese.text("explain.replace_with_the_key_the_message", key_=key)),
                _t(lang, "the key is deprecated in this release.",
                   chinese.text("explain.the_key_is_deprecated_in_this")))
    if keys and _REMOVE_FROM.search(text):
        return ("remove_key",
                _t(lang, f"remove {key} from the ds_config, as the message asks: the program sets it itself (or takes "
                         "it from your code).", chinese.text("explain.remove_as_the_message_asks", key_=key)),
                _t(lang, "the message refuses the key being written in the config.",
                   chinese.text("explain.the_message_refuses_the_key_written")))
    if condition and re.search(r"\bimport_failed\b", condition):
        return ("code_or_tool",
                _t(lang, "install the package the message names: DeepSpeed says this when importing it fails, "
                         f"because {key} asks for it.",
                   chinese.text("explain.install_the_package_the_message_names", key_=key)),
                _t(lang, "a package this setting needs could not be imported.",
                   chinese.text("explain.a_package_this_setting_needs")))
    cond = (_t(lang, f" (reported when: `{shown(condition)[:200]}`)",
               chinese.text("explain.condition", shown_condition_200=shown(condition)[:200])) if condition else "")
    if message.kind == "log" and message.type == "info" and not _reads_its_keys(condition, keys, occurrence):
        # progress DeepSpeed reports (a setting it prints, a step it takes), not a check a config fails; an info log
        # shown only while one of its keys has some value ("did not save ... because X is False") goes on below
        return ("no_change",
                _t(lang, f"nothing to change: DeepSpeed logs this as information, not as a refusal{cond}; it concerns "
                         f"{key}.", chinese.text("explain.info_log_nothing_to_change", cond=cond, key_=key)),
                _t(lang, "an info log reports what DeepSpeed does; it is not a check of the config.",
                   chinese.text("explain.info_log_is_not_a_check")))
    last = max(_anykey(o.version) for o in message.occurrences)
    universe = _universe(message.layer + "-" if message.layer != "deepspeed" else "")
    gone = bool(universe) and last < _anykey(universe[-1].split("-", 1)[-1]) and message.layer == "deepspeed"
    if gone and not keys:
        return ("upgrade",
                _t(lang, f"upgrade DeepSpeed past {message.newest.version}: later releases no longer raise this.",
                   chinese.text("explain.upgrade_deepspeed_past_later_releases_no",
                                message_newest_version=message.newest.version)),
                _t(lang, f"DeepSpeed raises it at {occurrence.file}:{occurrence.line}{cond}.",
                   chinese.text("explain.deepspeed_raises_it_at", occurrence_file=occurrence.file,
                                occurrence_line=occurrence.line, cond=cond)))
    if not keys:
        return ("code_or_tool",
                _t(lang, f"the message is raised at {occurrence.file}:{occurrence.line}{cond}; no ds_config key is "
                         f"read there, so change the code or the environment that triggers it.",
                   chinese.text("explain.the_message_is_raised_at_no", occurrence_file=occurrence.file,
                                occurrence_line=occurrence.line, cond=cond)),
                _t(lang, "DeepSpeed checks this at run time, not from the config.",
                   chinese.text("explain.deepspeed_checks_this_at_run_time")))
    if keys and re.search(r"\b(?:remove|delete)\b", text) and re.search(r"\bignored\b|\bremove (?:it|them|others)\b",
                                                                      text):
        listed = ", ".join(f"`{k}`" for k in keys[:4])
        return ("remove_key",
                _t(lang, f"remove {listed} as the message says: they are ignored in this setting.",
                   chinese.text("explain.remove_as_the_message_says_they", listed=listed)),
                _t(lang, f"{message.layer} ignores these keys here and asks you to remove them.",
                   chinese.text("explain.ignores_these_keys_here_and_asks", message_layer=message.layer)))
    others = ", ".join(f"`{k}`" for k in keys[1:4])
    also = _t(lang, f" (together with {others})", chinese.text("explain.together_with",
                                                               others=others)) if others else ""
    who = {"deepspeed": "DeepSpeed", "transformers": "transformers", "accelerate": "accelerate"}.get(
        message.layer, message.layer)
    raised = RAISED_MARKER.fullmatch(occurrence.state or "")
    if raised:  # said in an ``except``: the catalogue's marker for "the try block raised"
        call, caught = raised["call"], (raised["caught"] or "").replace("_", ", ")
        text = (_t(lang, f"change {key}{also}, or what makes `{call}` fail: {who} says this in the `except` that "
                         f"catches its failure{cond}.",
                   chinese.text("explain.change_or_what_makes_fail", key_=key, also=also, call=call, who=who,
                                cond=cond)) if call else
                _t(lang, f"change {key}{also}, or what raises {caught}: {who} says this in its `except {caught}` "
                         f"branch{cond}.",
                   chinese.text("explain.change_or_what_raises", key_=key, also=also, caught=caught, who=who,
                                cond=cond)))
        return ("set_value", text,
                _t(lang, f"{who} checks {key} at {occurrence.file}:{occurrence.line} after an operation failed.",
                   chinese.text("explain.checks_after_a_failure", who=who, occurrence_file=occurrence.file,
                                occurrence_line=occurrence.line, key_=key)))
    if occurrence.state:
        state = shown(occurrence.state)[:160]
        return ("set_value",
                _t(lang, f"change {key}{also}, or what the run brings: {who} says this only while `{state}`, which "
                         f"no config key sets (the device, the model, a loaded checkpoint or the code calling {who})"
                         f"{cond}.",
                   chinese.text("explain.change_or_what_the_run_brings", key_=key, also=also, who=who, state=state,
                                cond=cond)),
                _t(lang, f"{who} checks {key} at {occurrence.file}:{occurrence.line} together with a fact of the run "
                         f"(`{state}`).",
                   chinese.text("explain.checks_with_a_fact_of_the_run", who=who, occurrence_file=occurrence.file,
                                occurrence_line=occurrence.line, key_=key, state=state)))
    return ("set_value",
            _t(lang, f"change {key}{also} so that {who}'s check holds{cond}.",
               chinese.text("explain.change_so_that_s_check_holds", key_=key, also=also, who=who, cond=cond)),
            _t(lang, f"{who} checks {key} at {occurrence.file}:{occurrence.line} and refused it.",
               chinese.text("explain.checks_at_and_refused_it", who=who, occurrence_file=occurrence.file,
                            occurrence_line=occurrence.line, key_=key)))


_NOT_CONFIG = (
    ("nccl", re.compile(r"\bNCCL\b|ProcessGroupNCCL|Watchdog caught collective", re.I)),
    ("build", re.compile(r"Error building extension|ninja: build stopped|Command '\['ninja'|Ninja is required to "
                         r"load C\+\+ extensions|Unable to JIT load the \w+ op|op_builder\.\w+\.\w+Builder", re.I)),
    ("network", re.compile(r"Address already in use|errno: 98|EADDRINUSE", re.I)),
    ("cuda", re.compile(r"CUDA (?:error|out of memory)|cudaError|CUBLAS_STATUS|device-side assert", re.I)),
    ("driver", re.compile(r"NVIDIA driver|driver version is insufficient", re.I)),
    ("environment", re.compile(r"\bModuleNotFoundError\b|\bImportError\b|No module named|cannot import name|"
                               r"MissingCUDAException|CUDA_HOME does not exist|undefined symbol:", re.I)),
    ("ssh", re.compile(r"PasswordAuthentication=no|Permission denied \(publickey|ssh: connect to host|"
                       r"Host key verification failed", re.I)),
    ("native", re.compile(r"\.(?:cpp|cu|cc|h|hpp):\d+:.*Assertion .+ failed")),
)
"""Layers below the config, recognised by their own vocabulary (prose knowledge, not field facts)."""


def _not_in_release(answer: Answer, lang: str, indent: str = "") -> str:
    """The line saying ``--version V`` does not raise the message found ("" when it does)."""
    if not answer.not_in_release:
        return ""
    span = answer.causes[0].releases if answer.causes else ""
    return indent + _t(lang, f"DeepSpeed {answer.not_in_release} (--version) does not raise this message; the answer "
                             f"is for the releases that do ({span}).",
                       chinese.text("explain.not_in_release", version=answer.not_in_release, span=span)) + "\n"


def _not_config(paste: Paste, lang: str) -> Answer | None:
    for layer, pattern in _NOT_CONFIG:
        if pattern.search(paste.flat):
            return Answer(not_config=True, layer=layer, causes=[Cause([], "no_change", _t(
                lang, f"not a ds_config problem: the {layer} layer reports it; no config key changes this.",
                chinese.text("explain.not_a_ds_config_problem_the_2", layer=layer)), "")])
    ours = [frame for frame in paste.frames if frame[0].startswith(_LIBRARIES)]
    if ours and all(frame[2] == "<module>" for frame in paste.frames):
        # every frame is a module being imported: no config is read at import time
        at = f"{ours[-1][0]}:{ours[-1][1]}"
        return Answer(not_config=True, layer="environment", causes=[Cause([], "no_change", _t(
            lang, f"not a ds_config problem: Python stopped while importing ({at}), before any config is read; "
                  "the installed packages (a mixed or partial install, a missing dependency) are what to fix.",
            chinese.text("explain.not_a_ds_config_problem_import", at=at)), "")])
    logged = {name for name, _, _ in paste.logged_at}
    if logged and not paste.exceptions and not logged & _scanned_names(_newest()):
        # every log line comes from parts of DeepSpeed that do not read ds_config (the launcher, op builders)
        at = ", ".join(sorted(logged)[:3])
        return Answer(not_config=True, layer="launcher", causes=[Cause([], "no_change", _t(
            lang, f"not a ds_config problem: DeepSpeed logs these lines from {at}, parts of it that do not read the "
                  "config (the launcher's command line, hostfile or nodes); fix those, no config key changes this.",
            chinese.text("explain.not_a_ds_config_problem_logged", at=at)), "")])
    if ours and ours[-1][0].startswith("deepspeed/launcher/"):
        # the deepest DeepSpeed frame is the launcher's (a subprocess it started may come after): its command line,
        # hostfile or the nodes it reaches, which no ds_config key sets
        at = f"{ours[-1][0]}:{ours[-1][1]}"
        return Answer(not_config=True, layer="launcher", causes=[Cause([], "no_change", _t(
            lang, f"not a ds_config problem: the `deepspeed` launcher stopped at {at} (its command-line flags, the "
                  "hostfile or the nodes it reaches); fix those, no config key changes this.",
            chinese.text("explain.not_a_ds_config_problem_launcher", at=at)), "")])
    if paste.frames and not ours and paste.exceptions and not paths_in(paste.exceptions[-1][1], _newest()):
        # raised in the user's code or another library, naming no config key: DeepSpeed did not refuse its config
        at = f"{paste.frames[-1][0]}:{paste.frames[-1][1]}"
        return Answer(not_config=True, layer="other", causes=[Cause([], "no_change", _t(
            lang, f"not a ds_config problem as pasted: the error is raised at {at}, outside DeepSpeed, the HF Trainer "
                  "and accelerate, and names no config key.",
            chinese.text("explain.not_a_ds_config_problem_other", at=at)), "")])
    return None


_LIBRARIES = ("deepspeed/", "transformers/", "accelerate/")


def _newest() -> str:
    return available_versions(generated_root())[-1]


_SILENT_EN = re.compile(r"does(?:n'?t| not)? (?:seem to )?(?:do|work|change|have)|no effect|nothing|ignored|"
                        r"meaningless|not (?:take|taking) effect|no difference|above|exceeds?|empty|silently|"
                        r"\bonly \d+(?:\.\d+)?\s*[kmg]i?b?\b|very small|stays?\b|flooded", re.I)
_SILENT_ZH = re.compile(chinese.text("explain.text"))


@cache
def _symptom_table() -> dict[str, Any]:
    path = Path(__file__).resolve().parent / "prose" / "symptoms.json"
    return {k: v for k, v in json.loads(path.read_text(encoding="utf-8")).items() if not k.startswith("#")}


def _symptom_data(text: str, facts: dict[str, Any], lang: str) -> list[Cause]:
    """The entries of ``prose/symptoms.json`` whose words the text uses, most (and longest) words first; only paths
    the release has."""
    low = text.lower()
    scored = []
    for path, entry in _symptom_table().items():
        if path not in facts["paths"] and path not in facts["sections"]:
            continue
        hits = [w for words in entry["words"].values() for w in words if w.lower() in low]
        if hits:
            scored.append((sum(len(w) for w in hits), path, entry))
    scored.sort(key=lambda s: (-s[0], s[1]))
    return [Cause([path], entry["action"], entry["fix"]["zh" if lang == "zh" else "en"],
                  entry["why"]["zh" if lang == "zh" else "en"], score=4) for _, path, entry in scored[:2]]


def _symptom(paste: Paste, version: str, lang: str) -> Answer | None:
    """Silent symptoms: keys the text names, matched to the silent misreadings the snapshot knows."""
    text = "\n".join(paste.lines)
    if any(kind.endswith(("Error", "Exception")) for kind, _ in paste.exceptions):
        return None  # a raised error no catalogue holds is not a silent symptom: said so (cannot place), not guessed
    facts = _snapshot_facts(version)
    top = {p for p in facts["paths"] if "." not in p} | {s for s in facts["sections"] if "." not in s and s}
    pasted = _pasted_config(paste.lines, top)
    # The config the user pasted, read as check reads a file: its warnings about what it writes are the silent
    # misreadings (a run that goes on cannot be failing on check's errors), whatever words the user chose.
    causes: list[Cause] = _pasted_config_causes(pasted, version, lang) if pasted is not None else []
    if not causes and not (_SILENT_EN.search(text) or _SILENT_ZH.search(text)):
        return None
    # A key written at the top level whose name the release knows only inside a section: never read there.
    indents = {}
    for line in ([] if pasted is not None else text.split("\n")):
        written = re.match(r"^(\s*)\"?([A-Za-z_]\w*)\"?\s*:\s*", line)
        if written:
            indents.setdefault(written.group(2), len(written.group(1)))
    top_indent = min((indents[k] for k in indents if k in top), default=None)
    for name, indent in indents.items():
        if top_indent is None or indent != top_indent or name in top:
            continue
        nested = [p for p in facts["leaves"].get(name, []) if "." in p]
        if len(nested) == 1:
            causes.append(Cause([nested[0]], "move_key", _t(
                lang, f"move `{name}` inside `{nested[0].rsplit('.', 1)[0]}`: at the top level DeepSpeed never "
                      f"reads it (unknown top-level keys are ignored without a word).",
                chinese.text("explain.move_inside_at_the_top_level", name=name,
                             section=nested[0].rsplit('.', 1)[0])),
            _t(lang, "a key at the wrong level is silently ignored.", chinese.text("explain.a_key_at_the_wrong_level")),
            score=5))
    if not causes:
        # The words users write for the known silent misreadings (prose/symptoms.json, keyed by JSON path).
        causes = _symptom_data(text, facts, lang)
    if not causes:
        # A Trainer flag the user names (max_grad_norm) is the ds_config key the Trainer fills from it.
        flags = _trainer_flags()
        for flag in dict.fromkeys(w for w in _WORD.findall(text) if w in flags):
            path = flags[flag]
            causes.append(Cause([path, f"hf:--{flag}"], "set_auto", _t(
                lang, f"set `{path}` to \"auto\": the Trainer then fills it from --{flag}; a number written in "
                      f"ds_config is what DeepSpeed uses, whatever --{flag} says.",
                chinese.text("explain.set_to_auto_the_trainer_then", path=path, flag=flag)),
                _t(lang, f"DeepSpeed reads `{path}`, not the Trainer's --{flag}.",
                   chinese.text("explain.deepspeed_reads_not_the_trainer_s", path=path, flag=flag)), score=4))
        named = [p for p in paths_in(text, version) if not any(p in c.keys for c in causes)]
        for path in named[:2 - min(len(causes), 2)]:
            causes.append(Cause([path], "remove_key", _t(
                lang, f"`{path}` is read only under conditions your config does not meet (see `dsfields lookup "
                      f"{path}`): remove it, or change the setting that makes DeepSpeed read it.",
                chinese.text("explain.is_read_only_under_conditions_your", path=path)), _t(lang,
                    "the key is silently ignored in this setting.",
                                                   chinese.text("explain.the_key_is_silently_ignored_in")), score=3))
    if not causes:
        # Only a word of a key ("my offload does nothing"): the nested sections named by it, which DeepSpeed
        # ignores without a word when they sit at another level.
        words = {w.lower() for w in _WORD.findall(text) if len(w) >= 5}
        nested = sorted((p for p in facts["sections"] if p.count(".") == 1
                         and words & set(p.rsplit(".", 1)[-1].split("_"))), key=lambda p: (len(p), p))
        for path in nested[:2]:
            parent = path.rsplit(".", 1)[0]
            causes.append(Cause([path], "move_key", _t(
                lang, f"make sure `{path.rsplit('.', 1)[-1]}` sits inside `{parent}`: anywhere else DeepSpeed ignores "
                      f"it without a word (`dsfields check` your file shows where it is read).",
                chinese.text("explain.make_sure_sits_inside_anywhere_else", path_rsplit_1_1=path.rsplit('.', 1)[-1],
                             parent=parent)),
                _t(lang, "a section at the wrong level is silently ignored.",
                   chinese.text("explain.a_section_at_the_wrong_level")), score=1))
    if not causes:
        return None
    return Answer(layer="deepspeed", causes=causes)


_CONFIG_START = re.compile(r'^\s*(?:\{|"([A-Za-z_]\w*)"\s*:\s*\{)')
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


def _pasted_config(lines: list[str], top: set[str]) -> dict[str, Any] | None:
    """The ds_config (or a ``"section": {...}`` of one, ``top`` being the release's top-level names) a symptom
    paste quotes, as JSON; None when there is none or it does not parse."""
    for start, line in enumerate(lines):
        opening = _CONFIG_START.match(line)
        if not opening or (opening.group(1) and opening.group(1) not in top):
            continue  # a line from inside a section ("stage3_...": false) is an excerpt, not a config
        depth, seen, block = 0, False, []
        for current in lines[start:start + 400]:
            block.append(current)
            depth += current.count("{") + current.count("[") - current.count("}") - current.count("]")
            seen = seen or "{" in current
            if seen and depth <= 0:
                break
        text = _TRAILING_COMMA.sub(r"\1", "\n".join(block).strip().rstrip(","))
        for candidate in (text, "{" + text + "}"):
            try:
                value = json.loads(candidate)
            except ValueError:
                continue
            if isinstance(value, dict) and value:
                return value
        return None
    return None


_FINDING_ACTIONS = {"unknown key": "move_key", "removed key": "remove_key", "deprecated key": "rename_key",
                    "Python attribute name used as key": "rename_key", "duplicate key": "remove_key"}
"""What a fix to each kind of check finding does (every other kind: set a value)."""


def _pasted_config_causes(config: dict[str, Any], version: str, lang: str) -> list[Cause]:
    """check's warnings about keys the pasted config writes, as causes (its errors cannot be why a run that goes on
    misbehaves)."""
    from dsfields.check.engine import Checker, check_text
    from dsfields.check.findings import Options, Severity
    from dsfields.model.messages import localize

    missing = object()
    causes = []
    paths = _snapshot_facts(version)["paths"]
    for finding in check_text(json.dumps(config), Checker(load(version)), Options()).findings:
        if finding.severity is not Severity.WARNING or at_path(config, finding.path, missing) is missing:
            continue
        action = _FINDING_ACTIONS.get(finding.kind.value, "set_value")
        named = set(re.findall(r'"([\w.]+)"\s*:', finding.fix)) - {finding.path}
        if action == "rename_key" and all(f"{finding.path}.{n}" in paths for n in named):
            action = "set_value"  # the key stays, written another way ("zero_optimization": {"stage": 1})
        causes.append(Cause([finding.path], action,
                            localize(finding.fix, lang, "check."), localize(finding.message, lang, "check."),
                            score=5))
    return causes[:3]


@cache
def _accelerate_keys() -> frozenset[str]:
    """accelerate's own config keys (DeepSpeedPlugin fields and the config file's), newest ``generated/hf`` release."""
    folder = os.path.join(generated_root(), "hf")
    try:
        names = [n for n in os.listdir(folder) if n.startswith("accelerate-") and n.endswith((".json", ".json.gz"))]
    except OSError:
        return frozenset()
    if not names:
        return frozenset()
    newest = max(names, key=lambda n: _anykey(n.split("-", 1)[1].split(".json")[0]))
    rules = (_read_json(os.path.join(folder, newest.removesuffix(".gz"))) or {}).get("rules") or {}
    return frozenset(rules.get("plugin_env") or {}) | frozenset(rules.get("config_file_keys") or [])


@cache
def _trainer_flags() -> dict[str, str]:
    """TrainingArguments flag → the ds_config path the Trainer fills from it (newest ``generated/hf`` release)."""
    folder = os.path.join(generated_root(), "hf")
    try:
        names = [n for n in os.listdir(folder) if n.startswith("transformers-") and n.endswith((".json", ".json.gz"))]
    except OSError:
        return {}
    if not names:
        return {}
    newest = max(names, key=lambda n: _anykey(n.split("-", 1)[1].split(".json")[0]))
    document = _read_json(os.path.join(folder, newest.removesuffix(".gz"))) or {}
    flags: dict[str, str] = {}
    for path, fill in sorted(((document.get("fills") or {}).get("paths") or {}).items()):
        for flag in re.split(r"[|+()]", str(fill.get("hf_key") or "")):
            if flag.isidentifier() and flag not in flags:
                flags[flag] = path
    return flags


@cache
def _names(version: str) -> dict[str, list[str]]:
    """Config attribute / engine accessor → paths, as extracted with the release's catalogue."""
    document = load_messages(version) or {}
    return document.get("names") or {}


_STRING_FOR_NUMBER = re.compile(
    r"not supported between instances of '(?:str' and '(?:int|float)|(?:int|float)' and 'str)'"
    r"|unsupported operand type\(s\) for [^:]{1,3}: '(?:str' and '(?:int|float)|(?:int|float)' and 'str)'"
    r"|can't multiply sequence by non-int of type 'float'|'str' object cannot be interpreted as an integer"
    r"|could not convert string to float: '")
"""Python's TypeError/ValueError when a string meets arithmetic or a comparison with a number."""


def _keys_named(lines: Iterable[str], names: dict[str, list[str]], per_name: int) -> list[str]:
    """The paths the names of source ``lines`` stand for (``names``: name → paths), at most ``per_name`` a name, in
    the order the lines name them, each once."""
    keys: list[str] = []
    for line in lines:
        for name in re.findall(r"[A-Za-z_]\w*", line):
            for path in names.get(name, [])[:per_name]:
                if path not in keys:
                    keys.append(path)
    return keys


@cache
def _typed_names(version: str, frame_file: str) -> dict[str, list[str]]:
    """Names a failing line may use for a key: the release's config attributes and engine accessors, then the
    parameters of the optimizer or scheduler types defined in the failing frame's file (``scheduler.params.X``)."""
    found = {name: list(paths) for name, paths in _names(version).items()}
    module = frame_file.removesuffix(".py").replace("/", ".")
    raw = getattr(load(version), "raw", {}) or {}
    for catalogue_name in ("schedulers", "optimizers"):
        catalogue_facts = raw.get(catalogue_name) or {}
        section = catalogue_facts.get("section") or catalogue_name[:-1]
        prefix = f"{section}.{catalogue_facts.get('params_key') or 'params'}"
        for entry in (catalogue_facts.get("names") or {}).values():
            for described in entry.get("classes") or []:
                if not str(described.get("class", "")).startswith(module + "."):
                    continue
                for param in described.get("params") or {}:
                    found.setdefault(param, [])
                    if f"{prefix}.{param}" not in found[param]:
                        found[param].append(f"{prefix}.{param}")
    return found


def _string_for_number(paste: Paste, versions: list[str], lang: str) -> Answer | None:
    """A string where DeepSpeed computes with a number (``'>' not supported between instances of 'str' and
    'float'``): the failing line's names map to the keys it reads, and the usual string there is ``"auto"``, which
    only the HF Trainer's and accelerate's integrations fill in."""
    if not paste.exceptions:
        return None
    kind, said = paste.exceptions[-1]
    arithmetic = kind == "ZeroDivisionError" or (kind == "ValueError" and "math domain error" in said)
    if not (_STRING_FOR_NUMBER.search(said) or arithmetic):
        return None
    frame = paste.frames[-1] if paste.frames else None
    if frame is None or not frame[0].startswith("deepspeed/"):
        return None
    # The failing line: a rich frame's marked source, else the code line printed under the last frame.
    code = paste.source_lines[-3:] if paste.source_lines else []
    for at, line in enumerate(paste.lines):
        if _EXCEPTION.match(line) and paste.exceptions[-1][1] in line and at:
            code = code + [paste.lines[at - 1]]
    if not code:
        return None
    for version in versions:
        keys = _prefer_existing(_keys_named(reversed(code), _typed_names(version, frame[0]), 2), version)
        if not keys:
            continue
        listed = ", ".join(f"`{k}`" for k in keys[:3])
        where = f"{frame[0]}:{frame[1]}"
        if arithmetic:  # a value the line cannot compute with (0 or 1 under a division or a log)
            return Answer(layer="deepspeed", message=said, causes=[Cause(keys, "set_value", _t(
                lang, f"change {listed}: with the value written, the failing line ({where}) divides by zero or takes "
                      f"the logarithm of a number it cannot ({kind}); `dsfields lookup {keys[0]}` gives the range "
                      "DeepSpeed expects.", chinese.text("explain.arithmetic_fix", listed=listed, where=where,
                                                         kind=kind, key_0=keys[0])),
                _t(lang, f"the failing line ({where}) computes with {listed} and its value makes the arithmetic fail.",
                   chinese.text("explain.arithmetic_why", where=where, listed=listed)),
                release_span(key_releases(keys[0])) or "", where, None, 3)])
        return Answer(layer="deepspeed", message=paste.exceptions[-1][1], causes=[Cause(keys, "set_value", _t(
            lang, f"write a number for {listed}: the config holds a string there (often \"auto\", which only the HF "
                  "Trainer's or accelerate's DeepSpeed integration replaces; plain deepspeed.initialize reads it "
                  "as the string).",
            chinese.text("explain.string_for_number_fix", listed=listed)),
            _t(lang, f"the failing line ({where}) computes with {listed} and found a string.",
               chinese.text("explain.string_for_number_why", where=where, listed=listed)),
            release_span(key_releases(keys[0])) or "", where, None, 3)])
    return None


_STATEMENT = re.compile(r"^\s*(?:assert|raise)\b.*")


def _source_line(paste: Paste, versions: list[str], lang: str) -> Answer | None:
    """A pasted ``assert``/``raise`` statement no release's catalogue has: its names map to keys, and since no
    snapshotted release makes that check, the fix is a release that does not (or the keys it reads)."""
    statements = [line for line in paste.source_lines + paste.lines if _STATEMENT.match(line)]
    if not statements:
        return None
    statement = statements[-1]
    for version in versions:
        names = _names(version)
        if not names:
            continue
        keys = _prefer_existing(_keys_named([statement], names, 4), version)
        if not keys:
            return None
        span = release_span(available_versions(generated_root()))
        listed = ", ".join(f"`{k}`" for k in keys[:3])
        return Answer(layer="deepspeed", message=statement, causes=[Cause(keys, "upgrade", _t(
            lang, f"no DeepSpeed release of {span} makes this check: upgrade DeepSpeed, or change {listed} so that "
                  "it holds in the release you run.",
            chinese.text("explain.no_deepspeed_release_of_makes_this", span=span, listed=listed)),
            _t(lang, f"the statement reads {listed}; it comes from a release older than {span}.",
               chinese.text("explain.the_statement_reads_it_comes_from", listed=listed, span=span)), score=2)])
    return None


_QUOTED = re.compile(r"`([^`\n]{2,80})`|'([^'\n]{2,80})'|\"([^\"\n]{2,80})\"")
_KEEP_OUT = re.compile(r"\b(?:do not|don't|should not|must not|need not|cannot|can't|no need to) (?:be )?"
                       r"(?:set|specify|specified|pass|passed|provide|provided|include|included)\b"
                       r"|\bwill be (?:set|overridden|overwritten|filled)\b|\bis set (?:by|from|with|automatically)\b",
                       re.I)


_CONFIG = r"(?:the |your )?(?:ds_?config|deepspeed config(?:uration)?(?: file)?|config(?:uration)? file|config)\b"
_REMOVE_FROM = re.compile(r"\bremove (?:the |this |it |them )?(?:[`'\"]?[\w.]+[`'\"]? )?(?:key |section |entry )?from "
                          + _CONFIG + r"|\b(?:do not|don't|cannot|can't|must not|should not) "
                          r"(?:specify|set|pass|include) (?:an? |the )?[`'\"]?[\w.]+[`'\"]? in " + _CONFIG, re.I)
"""A message asking for a key to be taken out of the config ("Please remove the optimizer from the config file",
"You cannot specify an optimizer in the config file")."""


_ZERO_STAGE = re.compile(r"\bZeRO[- ]?(?:stage[- ]?)?([0-3])\b", re.I)


def _quoted_key(paste: Paste, versions: list[str], lang: str) -> Answer | None:
    """An error no catalogue holds (another library built on DeepSpeed refusing a ds_config key) whose text quotes
    a key of the release: that key; "do not set" / "will be set by" words ask for its removal."""
    if not paste.exceptions:
        return None
    text = paste.exceptions[-1][1]
    quoted = " ".join(next(g for g in m.groups() if g) for m in _QUOTED.finditer(text))
    version = versions[0]
    stage = _ZERO_STAGE.search(text)
    if not quoted and stage and "zero_optimization.stage" in _snapshot_facts(version)["paths"]:
        # "ZeRO-3" / "ZeRO stage 3", DeepSpeed's own name for zero_optimization.stage (its messages say so)
        return Answer(layer="other", message=text, causes=[Cause(["zero_optimization.stage"], "set_value", _t(
            lang, f"use another `zero_optimization.stage` than {stage.group(1)}, as the message asks (or what it "
                  "names as incompatible).", chinese.text("explain.zero_stage_other", stage=stage.group(1))),
            _t(lang, f"the error ({paste.exceptions[-1][0]}) refuses ZeRO stage {stage.group(1)}; it is raised "
                     "outside DeepSpeed's own checks.",
               chinese.text("explain.zero_stage_why", kind=paste.exceptions[-1][0], stage=stage.group(1))),
            score=2)])
    if not quoted:
        return None
    keys = [k for k in paths_in(quoted, version) if "." in k or k in _snapshot_facts(version)["paths"]]
    if not keys or len(keys) > 2:
        return None
    listed = ", ".join(f"`{k}`" for k in keys)
    if _KEEP_OUT.search(text):
        action, fix = "remove_key", _t(lang, f"remove {listed} from the ds_config: the message says the program that "
                                             "raised it sets it itself.",
                                       chinese.text("explain.quoted_key_remove", listed=listed))
    else:
        action, fix = "set_value", _t(lang, f"change {listed} as the message asks.",
                                      chinese.text("explain.quoted_key_change", listed=listed))
    return Answer(layer="other", message=text, causes=[Cause(keys, action, fix, _t(
        lang, f"the error ({paste.exceptions[-1][0]}) quotes {listed}; it is raised outside DeepSpeed's own checks.",
        chinese.text("explain.quoted_key_why", kind=paste.exceptions[-1][0], listed=listed)), score=2)])


def _narrow(answer: Answer, config: dict[str, Any], lang: str = "en") -> None:
    """Keys the user's file writes rank first within each cause (causes naming none of them go last), and each
    fix says what the file has now for its keys."""
    missing = object()

    def written(path: str) -> Any:
        return at_path(config, path, missing)

    for cause in answer.causes:
        cause.keys.sort(key=lambda k: written(k) is missing)
        now = [(k, written(k)) for k in cause.keys if written(k) is not missing]
        shown_now = ", ".join(f"`{k}` = {shown(json.dumps(v))[:60]}" for k, v in now[:4])
        if now:
            cause.fix += _t(lang, f" Your file has {shown_now}.", chinese.text("explain.your_file_has",
                                                                               shown_now=shown_now))
        elif cause.keys and not answer.not_config:
            cause.fix += _t(lang, " Your file writes none of these keys (DeepSpeed's default or the Trainer's "
                                  "fill applies).",
                            chinese.text("explain.your_file_writes_none_of_these"))
    answer.causes.sort(key=lambda c: not any(written(k) is not missing for k in c.keys))


# ----------------------------------------------------------------------------------------------- long form of an ID


def long_form(message_id: str, lang: str) -> str | None:
    """What ``dsfields explain ID`` prints: a catalogue message (DSnnnnnnnn) or one of check's rules (DSFnnnnn)."""
    if message_id.upper().startswith("DSF"):
        return _rule_long_form(message_id.upper(), lang)
    message = catalogue().get(message_id.upper())
    if message is None:
        return None
    occurrence = message.newest
    lines = [f"{message.id}  {message.type} ({message.kind}, {message.layer})",
             "  " + _t(lang, "message", chinese.text("explain.message_2")) + ": " + shown(message.pattern),
             "  " + _t(lang, "keys", chinese.text("explain.keys")) + ": " + (", ".join(occurrence.keys) or "-"),
             "  " + _t(lang, "reported when",
                       chinese.text("explain.condition_2")) + ": " + shown(occurrence.condition or "-"),
             "  " + _t(lang, "releases", chinese.text("explain.releases")) + ": "
             + release_span([o.version for o in message.occurrences]),
             "  " + _t(lang, "raised at", chinese.text("explain.raised_at"))
             + f": {occurrence.file}:{occurrence.line} ({occurrence.version})"]
    action, fix, _ = _fix(message, occurrence, occurrence.keys, lang)
    lines.append("  " + _t(lang, "fix", chinese.text("explain.fix")) + f" ({action}): {fix}")
    return "\n".join(lines)


def _rule_long_form(code: str, lang: str) -> str | None:
    from dsfields.check.codes import check_rules
    from dsfields.model.message_ids import describe

    found = describe(check_rules(), code)
    if found is None:
        return None
    name, summary = found
    if lang == "zh":  # the summaries are our English prose: the zh long form names the rule and where to read it
        return "\n".join([chinese.text("explain.code_dsfields_name", code=code, name=name),
                          chinese.text("explain.dsfields_check_code", code=code)])
    return "\n".join([f"{code}  dsfields check rule {name}", f"  says: {summary}",
                      f"  `dsfields check` prints [{code}] after each finding of this rule, its fix on the next line."])


# ----------------------------------------------------------------------------------------------- diff --messages


def message_changes(old: str, new: str, root: str | Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Catalogue entries of ``new`` whose ID ``old`` lacks (added) and of ``old`` that ``new`` lacks (removed)."""
    def entries(version: str) -> dict[str, dict[str, Any]]:
        document = load_messages(version, root)
        if document is None:
            raise UsageError(f"DeepSpeed {version} has no message catalogue "
                             "(python -m dsfields.extract.message_catalogue)")
        found: dict[str, dict[str, Any]] = {}
        for entry in document.get("messages", []):
            found.setdefault(entry["id"], entry)
        return found

    before, after = entries(old), entries(new)
    def place(entry: dict[str, Any]) -> tuple[str, int]:
        return entry["file"], entry["line"]

    added = sorted((after[i] for i in set(after) - set(before)), key=place)
    removed = sorted((before[i] for i in set(before) - set(after)), key=place)
    return added, removed


def render_message_changes(old: str, new: str, root: str | Path, fmt: str, lang: str) -> tuple[str, bool]:
    """``dsfields diff OLD NEW --messages`` in ``fmt`` (json, or text for every other style)."""
    added, removed = message_changes(old, new, root)
    if fmt == "json":
        def slim(entry: dict[str, Any]) -> dict[str, Any]:
            return {k: entry.get(k) for k in ("id", "type", "pattern", "keys", "file", "line")}

        document = {"old": old, "new": new, "added": [slim(e) for e in added], "removed": [slim(e) for e in removed]}
        return json.dumps(document, ensure_ascii=False, indent=1), bool(added or removed)
    lines = [_t(lang, f"Messages {old} -> {new}: {len(added)} added, {len(removed)} removed",
                chinese.text("explain.messages_added_removed", old=old, new=new, len_added=len(added),
                             len_removed=len(removed)))]
    for sign, group in (("+", added), ("-", removed)):
        for entry in group:
            keys = ", ".join(entry.get("keys") or []) or "-"
            lines.append(f"  {sign} {entry['id']} {entry['type']}: {shown(entry['pattern'])[:160]}")
            lines.append(f"      {entry['file']}:{entry['line']}  " + _t(lang, "keys",
                                                                         chinese.text("explain.keys")) + f": {keys}")
    return "\n".join(lines), bool(added or removed)


# ----------------------------------------------------------------------------------------------- command


def render_text(answer: Answer, lang: str) -> str:
    if answer.not_config:
        head = _t(lang, f"Not a config problem (layer: {answer.layer}).",
                  chinese.text("explain.not_a_config_problem_layer", answer_layer=answer.layer))
        return head + "\n" + _not_in_release(answer, lang, "  ") + "".join(f"  {c.fix}\n" for c in answer.causes)
    out = []
    if answer.message:
        text = shown(answer.message)[:300]
        out.append(_t(lang, f"Message ({answer.layer}): {text}", chinese.text("explain.message",
                                                                              answer_layer=answer.layer, text=text)))
    if answer.pinned:
        pinned = answer.pinned if answer.layer != "deepspeed" else f"DeepSpeed {answer.pinned}"
        out.append(_t(lang, f"The traceback's line pins the release: {pinned}.",
                      chinese.text("explain.the_traceback_s_line_pins_the", pinned=pinned)))
    if answer.not_in_release:
        out.append(_not_in_release(answer, lang).rstrip("\n"))
    for number, cause in enumerate(answer.causes, 1):
        out.append(f"{number}. " + _t(lang, "keys",
                                      chinese.text("explain.keys")) + ": " + (", ".join(cause.keys) or "-")
                   + (f"  [{cause.message_id}]" if cause.message_id else ""))
        out.append("   " + _t(lang, "why", chinese.text("explain.why")) + ": " + cause.why)
        out.append("   " + _t(lang, "fix", chinese.text("explain.fix")) + f" ({cause.action}): " + cause.fix)
        if cause.releases:
            out.append("   " + _t(lang, "releases", chinese.text("explain.releases")) + ": " + cause.releases
                       + (f"  ({cause.raised_at})" if cause.raised_at else ""))
    return "\n".join(out) + "\n"


def add_arguments(parser: Any) -> None:
    parser.add_argument("text", nargs="?", default="-", help="the pasted message, a message ID, or - for stdin")
    parser.add_argument("--version", dest="deepspeed_version", metavar="V", help="the DeepSpeed release you ran")
    parser.add_argument("--hf-version", metavar="T,A", help="transformers (and accelerate) releases you ran")
    parser.add_argument("--config", metavar="FILE",
                        help="your ds_config file: its keys rank first, and the fixed file is computed and checked")
    parser.add_argument("--fix-out", metavar="OUT", help="with --config: write the fixed file there (safe write)")
    parser.add_argument("--force", action="store_true",
                        help="with --fix-out: also write a read-only or hard-linked OUT (a hard-linked one in place)")
    parser.add_argument("--world-size", type=int, metavar="N",
                        help="with --config: the world size the run had (else the one the message printed, else 1)")
    parser.add_argument("--lang", choices=("en", "zh"), default=None, help="language of our explanations")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format")


def run(args: Any) -> int:
    from dsfields.model import prose

    lang = prose.language(args.lang)
    text = args.text
    if text == "-":
        raw: str | bytes = sys.stdin.buffer.read(MAX_PASTE + 1)[-MAX_PASTE:]
    else:
        raw = text
        if ID_SHAPE.fullmatch(text.strip()):
            long = long_form(text.strip(), lang)
            if long is None:
                raise UsageError(f"no message with ID {text.strip()}")
            sys.stdout.write(long + "\n")
            return 0
    version = args.deepspeed_version
    if version and version not in available_versions(generated_root()):
        raise UsageError(f"no snapshot for DeepSpeed {shown(version)}")
    config = None
    if args.config:
        from dsfields.configfile import ConfigFileError
        from dsfields.configfile import load as load_config

        try:
            loaded = load_config(Path(args.config))
        except ConfigFileError as exc:
            raise UsageError(str(exc)) from None
        config = getattr(loaded, "data", None)
        if not isinstance(config, dict):
            config = None
    hf: tuple[str, ...] = ()
    if args.hf_version:
        parts = [p.strip() for p in args.hf_version.split(",")]
        if not all(re.fullmatch(r"\d+(?:\.\d+){1,2}", p) for p in parts) or len(parts) > 2:
            raise UsageError(f"--hf-version {shown(args.hf_version)}: expected T or T,A (transformers, accelerate)")
        hf = tuple(f"{dist}-{p}" for dist, p in zip(("transformers", "accelerate"), parts, strict=False))
    if getattr(args, "fix_out", None) and config is None:
        raise UsageError("--fix-out needs --config FILE (a JSON object)")
    if getattr(args, "world_size", None) is not None and args.world_size < 1:
        raise UsageError("--world-size must be at least 1")
    answer = explain_text(raw, version=version, config=config, lang=lang, hf=hf)
    fixed = None
    if config is not None and answer.placed and not answer.not_config:
        from dsfields.explain_fix import fix_config

        fixed = fix_config(answer, config, version or sorted(available_versions(generated_root()), key=version_key)[-1],
                           world_size=getattr(args, "world_size", None))
        if getattr(args, "fix_out", None) and fixed.changes:
            from dsfields.model.safewrite import write_text

            write_text(args.fix_out, json.dumps(fixed.config, indent=2, ensure_ascii=False) + "\n",
                       force=getattr(args, "force", False))
    if args.format == "json":
        document = answer.as_json()
        if fixed is not None:
            document["fixed"] = {"release": fixed.version, "changes": [c.as_json() for c in fixed.changes],
                                 "check_errors_before": fixed.errors_before, "check_errors_after": fixed.errors_after,
                                 "config": fixed.config}
        sys.stdout.write(json.dumps(document, ensure_ascii=False, indent=1) + "\n")
    elif answer.placed:
        sys.stdout.write(render_text(answer, lang))
        if fixed is not None:
            from dsfields.explain_fix import render as render_fix

            sys.stdout.write(render_fix(fixed, lang))
    else:
        sys.stdout.write(_t(lang, "dsfields explain: cannot place this message in any release's catalogue.\n",
                            chinese.text("explain.dsfields_explain_cannot_place_this_message")))
    return 0 if answer.placed else 1
