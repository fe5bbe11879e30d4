"""Curated goal tags and optimizer class choices: which fields serve a goal, which class a type builds.

A user who hits an OOM asks "which knobs trade memory?", not for a key name. The answer is curated
data, not code: ``prose/goals.toml`` tags JSON paths with goals (memory, speed, communication,
offload, checkpoint), each with a rank and a one-line why in English and Chinese; the words that ask
for a goal (``OOM``, ``显存``) are data in the same file. ``prose/class_choice.toml`` says, per
optimizer ``type`` and class, under which setting DeepSpeed's engine builds that class — the
snapshot lists the classes a type may build, not the branch that picks one. Both are checked
against the snapshots by ``tests/test_goals.py``. Stdlib only (model layer).
"""

from __future__ import annotations

import os
from functools import cache

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_PROSE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "prose")
GOALS_FILE = os.path.join(_PROSE_DIR, "goals.toml")
CLASS_CHOICE_FILE = os.path.join(_PROSE_DIR, "class_choice.toml")


class Tag:
    """One field tagged with one goal: its rank (1 = change first) and why, per language."""

    __slots__ = ("path", "goal", "rank", "why")

    def __init__(self, path: str, goal: str, rank: int, why: dict[str, str]) -> None:
        self.path, self.goal, self.rank, self.why = path, goal, rank, why

    def text(self, lang: str) -> str:
        return self.why.get(lang) or self.why.get("en", "")

    def as_dict(self, lang: str) -> dict[str, Any]:
        return {"path": self.path, "rank": self.rank, "why": self.text(lang)}


class Goal:
    """A goal: the words that ask for it, its title per language and its tags in rank order."""

    __slots__ = ("name", "words", "title", "tags")

    def __init__(self, name: str, words: tuple[str, ...], title: dict[str, str], tags: tuple[Tag, ...]) -> None:
        self.name, self.words, self.title, self.tags = name, words, title, tags

    def title_in(self, lang: str) -> str:
        return self.title.get(lang) or self.title.get("en", self.name)


def _load(path: str) -> dict[str, Any]:
    import tomllib  # only a goal or catalogue answer pays for it; a field lookup never loads these files

    try:
        with open(path, "rb") as handle:
            return tomllib.load(handle)
    except OSError:
        return {}


@cache
def goals() -> dict[str, Goal]:
    """Every goal of ``goals.toml``, its tags sorted by rank then path."""
    data = _load(GOALS_FILE)
    tagged: dict[str, list[Tag]] = {}
    for path, by_goal in (data.get("tags") or {}).items():
        for goal, entry in by_goal.items():
            why = {lang: str(entry[lang]) for lang in ("en", "zh") if entry.get(lang)}
            tagged.setdefault(goal, []).append(Tag(path, goal, int(entry.get("rank", 999)), why))
    out = {}
    for name, spec in (data.get("goals") or {}).items():
        words = tuple(dict.fromkeys([name, *(str(w).lower() for w in spec.get("words") or ())]))
        title = {lang: str(spec[lang]) for lang in ("en", "zh") if spec.get(lang)}
        tags = tuple(sorted(tagged.get(name, ()), key=lambda t: (t.rank, t.path)))
        out[name] = Goal(name, words, title, tags)
    return out


def read_from() -> str:
    """The release whose code the goal whys were read from."""
    return str(_load(GOALS_FILE).get("read_from") or "?")


def goal_for(word: str) -> Goal | None:
    """The goal ``word`` asks for (``OOM`` → memory, ``通信`` → communication), or None."""
    wanted = word.strip().lower()
    if wanted.startswith("goal:"):
        wanted = wanted[len("goal:"):].strip()
    if not _may_name_a_goal(wanted):
        return None
    for goal in goals().values():
        if wanted in goal.words:
            return goal
    return None


def _may_name_a_goal(wanted: str) -> bool:
    """False only when ``goals.toml`` cannot name ``wanted`` as a goal or a goal word: it is nowhere in the file as a
    quoted string or a ``[goals.NAME]`` table. Most one-word lookups (``fp16``) are no goal, and parsing the
    file costs them ~15 ms (tomllib's import and parse) that the answer does not need. A file with escapes
    (``\\u663e``) is always parsed."""
    text = _lowered_goals_text()
    return text is None or "\\" in text or any(f"{o}{wanted}{c}" in text
                                              for o, c in (('"', '"'), ("'", "'"), ("goals.", "]")))


@cache
def _lowered_goals_text() -> str | None:
    try:
        with open(GOALS_FILE, "rb") as handle:
            return handle.read().decode("utf-8").lower()
    except (OSError, UnicodeDecodeError):
        return None


def tags_by_path() -> dict[str, list[Tag]]:
    """JSON path → its tags (every goal), for the lookup of one field and for tests."""
    out: dict[str, list[Tag]] = {}
    for goal in goals().values():
        for tag in goal.tags:
            out.setdefault(tag.path, []).append(tag)
    return out


@cache
def class_choice() -> dict[str, Any]:
    """``class_choice.toml``: ``read_from`` and section → type → class → {en, zh}."""
    return _load(CLASS_CHOICE_FILE)


def runs_when(section: str, type_name: str, class_name: str, lang: str, scope: Any = None) -> str | None:
    """When DeepSpeed's engine builds ``class_name`` for ``section.type`` (our words), or None if not curated. A
    text may be pieces with conditions, as prose is (``scope``: the release shown, a ``prose.Scope``; a clause
    about ZenFlow is left out where the release has none)."""
    from dsfields.model.prose import _part

    entry = (class_choice().get(section) or {}).get(type_name, {}).get(class_name)
    if not isinstance(entry, dict):
        return None
    return _part(entry.get(lang) or entry.get("en"), f"{section}.type", scope) or None
