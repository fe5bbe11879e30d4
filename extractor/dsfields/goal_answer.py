"""``dsfields lookup memory`` (``OOM``, ``speed``, ``显存``, ...): the fields that serve a goal, ranked.

"My ZeRO-3 run OOMs: which knobs trade memory?" names no key. The tags (``prose/goals.toml``,
:mod:`dsfields.model.goals`) are curated per JSON path; this shows those the release has, in rank
order, each with its type, default and our one-line why, and names the tagged paths the release
lacks instead of dropping them silently. Stdlib only, like ``lookup``.
"""

from __future__ import annotations

from dsfields.model import chinese
from dsfields.model.goals import Goal, Tag, read_from
from dsfields.model.records import Snapshot
from dsfields.model.wording import default_text, type_text
from dsfields.terminal import wrap

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_LABELS = chinese.ByLanguage(
    {
        "head": "{goal}: {title} — {count} fields in DeepSpeed {version}, the first ones first",
        "missing": "tagged for {goal} but not in DeepSpeed {version}: {paths}",
        "more": "Why each serves the goal is read from DeepSpeed {read}'s code{note}. `dsfields lookup PATH` "
                "explains each; `dsfields lookup {goal} --lang zh` in Chinese.",
        "older": "; this release may differ in detail",
        "estimate": "For your own config, `dsfields estimate FILE --params N` counts the memory it needs and ranks "
                    "its knobs by the bytes each change saves (the OOM list).",
        "keys": "“{query}” is also the key of {paths}: `dsfields lookup PATH` answers for it.",
        "hint": "“{query}” is also a goal: `dsfields lookup goal:{goal}` lists the {count} fields that serve it "
                "({title}).",
    },
    lambda: {
        "head": chinese.text("goal_answer.head"),
        "missing": chinese.text("goal_answer.missing"),
        "more": chinese.text("goal_answer.more"),
        "older": chinese.text("goal_answer.older"),
        "estimate": chinese.text("goal_answer.estimate"),
        "keys": chinese.text("goal_answer.keys"),
        "hint": chinese.text("goal_answer.hint"),
    },
)


def _label(lang: str, key: str, **values: Any) -> str:
    return _LABELS.get(lang, _LABELS["en"])[key].format(**values)


def split(snapshot: Snapshot, goal: Goal) -> tuple[list[Tag], list[Tag]]:
    """The goal's tags whose field ``snapshot`` has (rank order), and those it lacks."""
    present = [t for t in goal.tags if t.path in snapshot.fields]
    return present, [t for t in goal.tags if t.path not in snapshot.fields]


def format_goal(snapshot: Snapshot, goal: Goal, width: int, style: Any, lang: str = "en") -> list[str]:
    present, missing = split(snapshot, goal)
    lines = wrap(_label(lang, "head", goal=goal.name, title=goal.title_in(lang), count=len(present),
                        version=snapshot.version), width, "", "    ")
    lines[0] = style.bold(goal.name) + lines[0][len(goal.name):]
    lines.append("")
    number_width = len(str(len(present)))
    indent = " " * (4 + number_width)
    for number, tag in enumerate(present, 1):
        record = snapshot.fields[tag.path]
        head = wrap(f"{str(number).rjust(number_width)}. {tag.path}  {type_text(record, compact=True)} "
                    f"{default_text(record, compact=True)}", width, "  ", indent)
        head[0] = head[0].replace(tag.path, style.bold(tag.path), 1)
        lines += head
        lines += wrap(tag.text(lang), width, indent, indent)
    if missing:
        lines += [""] + wrap(_label(lang, "missing", goal=goal.name, version=snapshot.version,
                                    paths=", ".join(t.path for t in missing)), width, "", "    ")
    read = read_from()
    note = "" if read == snapshot.version else _LABELS.get(lang, _LABELS["en"])["older"]
    lines += [""] + wrap(_label(lang, "more", goal=goal.name, read=read, note=note), width, "", "")
    if goal.name == "memory":  # journey "my ZeRO-3 run OOMs": the answer for one config is estimate's OOM list
        lines += wrap(_label(lang, "estimate"), width, "", "")
    return lines


def hint(goal: Goal, snapshot: Snapshot, query: str, width: int, lang: str) -> list[str]:
    """The line under a field or section answer whose query is also a goal word (``checkpoint``)."""
    count = len(split(snapshot, goal)[0])
    return [""] + wrap(_label(lang, "hint", query=query, goal=goal.name, count=count, title=goal.title_in(lang)),
                       width, "", "")


def also_keys(query: str, paths: list[str], width: int, lang: str) -> list[str]:
    """The line under a goal answer whose word is also a nested key (zenflow's ``offload``)."""
    return [""] + wrap(_label(lang, "keys", query=query, paths=", ".join(paths)), width, "", "")


def goal_json(snapshot: Snapshot, goal: Goal, lang: str) -> dict[str, Any]:
    present, missing = split(snapshot, goal)
    return {
        "kind": "goal",
        "why_read_from": read_from(),
        "goal": goal.name,
        "title": goal.title_in(lang),
        "words": list(goal.words),
        "fields": [tag.as_dict(lang) | {"field": snapshot.fields[tag.path].raw} for tag in present],
        "missing_in_release": [tag.as_dict(lang) for tag in missing],
    }
