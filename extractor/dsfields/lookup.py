"""``dsfields lookup``: the instant answer to "what is this DeepSpeed config field?".

Grepping DeepSpeed's source finds where a key is spelled, not what it means: the default may sit in
a ``*_DEFAULT`` constant, depend on the ZeRO stage, or be swallowed by a section that ignores
unknown keys. This answers from a committed snapshot instead — default, type, constraints, "auto",
deprecation, removal and the defining line — and must be about as quick as grep to be used like it.
So this module and everything it imports are stdlib only: no DeepSpeed, torch, pydantic or jinja2.

The answers live below this command: :mod:`dsfields.field_answer` (keys, sections, removed keys),
:mod:`dsfields.catalog_answer` (optimizer and scheduler types), :mod:`dsfields.goal_answer` (goals) and
:mod:`dsfields.inference` (``--inference``), all laid out by :mod:`dsfields.terminal`; this module parses the
query and picks which one answers.
"""

from __future__ import annotations

import sys

from dsfields.field_answer import Match, find, format_answer, history_lines, match_json, suggest
from dsfields.model import chinese, prose
from dsfields.model.messages import localize
from dsfields.model.records import Snapshot
from dsfields.model.store import available_versions, load_indexed, repo_generated_dir, resolve_version
from dsfields.terminal import Style, fill, terminal_width, write

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing, argparse and the history engine cost start-up time; annotations are strings anyway
    import argparse
    from typing import Any

    from dsfields.model.history import HistoryEvent


OPTIONS: tuple[tuple[str, str, str | None, str], ...] = (
    ("--version", "deepspeed_version", "V", "DeepSpeed version of the snapshot to answer from "
     "(default: the installed DeepSpeed's if snapshotted, else the newest)"),
    ("--json", "json", None, "print the snapshot records as JSON"),
    ("--history", "history", None, "also show in which releases the field changed"),
    ("--lang", "lang", "LANG", "language of our explanations: en or zh (default: zh when LANG is a zh locale, "
     "else en)"),
    ("--inference", "inference", None, "answer from the inference config (DeepSpeedInferenceConfig, what "
     "deepspeed.init_inference takes) instead of ds_config"),
)
"""(flag, attribute, metavar or None for a switch, help)."""


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "query",
        metavar="QUERY",
        help="a JSON key (stage3_max_live_parameters), python name (max_live_parameters), "
        "dotted path (zero_optimization.offload_param.device), section (zero_optimization), "
        "optimizer or scheduler type (optimizer:AdamW, WarmupDecayLR) or goal (memory, OOM, speed; in Chinese too)",
    )
    for flag, dest, metavar, text in OPTIONS:
        if metavar:
            parser.add_argument(flag, dest=dest, metavar=metavar, default=None, help=text)
        else:
            parser.add_argument(flag, dest=dest, action="store_true", help=text)


def run(args: argparse.Namespace) -> int:
    if getattr(args, "inference", False):  # issue 29: DeepSpeedInferenceConfig, the init_inference document
        from dsfields.inference import lookup_inference

        return lookup_inference(args)
    version = resolve_version(args.deepspeed_version)
    # The compact index lets a lookup decode only the records it shows; without it, the whole snapshot.
    snapshot = load_indexed(version)
    lang = prose.language(args.lang)
    other = _catalog_or_goal(snapshot, args, lang)
    if other is not None:
        return other
    matches = find(snapshot, args.query)
    if not matches:
        section = _model_section(snapshot, args.query)
        if section is not None:  # issue 38: a config class name (DeepSpeedBF16Config) lands on its section
            matches = find(snapshot, section)
    if not matches:
        other = _catalog_or_goal(snapshot, args, lang, plain=True)
        if other is not None:
            return other
        if _looks_pasted(args.query):  # issue 38: a pasted message goes to explain, not to "no field"
            handed = _hand_to_explain(args.query, snapshot.version, lang, bool(args.json))
            if handed is not None:
                return handed
    from dsfields.inference import inference_note

    # issue 29: the same word may be a key of init_inference's config
    also_inference = inference_note(args.query, snapshot, bool(matches))
    goal = _also_goal(args.query, matches)
    if goal is not None and not any(m.path.lower() == args.query.strip().lower() for m in matches):
        # A goal word that is only a nested key somewhere (zenflow's "offload"): the goal is what a user
        # asking "offload" means; the answer names the keys too.
        return _answer_goal(snapshot, args, lang, goal, also_keys=[m.path for m in matches])
    histories: dict[str, list[HistoryEvent]] = {}
    generated = repo_generated_dir() if args.history else None
    if args.history:
        from dsfields.model.history import field_histories

        histories = field_histories([m.path for m in matches], generated)
    if args.json:
        payload: dict[str, Any] = {
            "deepspeed_version": snapshot.version,
            "query": args.query,
            "lang": lang,
            "matches": [match_json(snapshot, m, lang) for m in matches],
            "suggestions": [] if matches else suggest(snapshot, args.query),
        }
        if args.history:
            for item in payload["matches"]:
                item["history"] = [e.as_dict() for e in histories[item["path"]]]
        if goal is not None:
            payload["also_goal"] = goal.name
        if also_inference is not None:
            payload["also_inference"] = also_inference
        import json

        # \u escapes only if the terminal needs them: still valid JSON, so scripts lose nothing.
        write(json.dumps(payload, indent=1, ensure_ascii=False) + "\n",
              lambda: json.dumps(payload, indent=1) + "\n")
        return 0 if matches else 1
    width = terminal_width()
    lines = format_answer(snapshot, args.query, matches, width, Style.for_stream(sys.stdout), lang)
    if args.history:
        versions = available_versions(generated)
        for m in matches:
            lines += [""] + ([m.path] if len(matches) > 1 else [])
            lines += history_lines(histories[m.path], versions, width, lang)
    if goal is not None:
        from dsfields.goal_answer import hint

        lines += hint(goal, snapshot, args.query.strip(), width, lang)
    if also_inference is not None:
        lines += [""] + fill(localize(also_inference["message"], lang, "lookup."), width)
    write("\n".join(line.rstrip() for line in lines) + "\n", lang=lang)
    return 0 if matches else 1


# --- pasted messages and config class names (issue 38) ---------------------------------------------


def _model_section(snapshot: Snapshot, query: str) -> str | None:
    """The section whose pydantic model class is ``query`` (``DeepSpeedZeroConfig`` → ``zero_optimization``)."""
    name = query.strip().rsplit(".", 1)[-1]
    if not name.isidentifier():
        return None
    for path, section in (snapshot.raw.get("sections") or {}).items():
        if path and str(section.get("model") or "").rsplit(".", 1)[-1] == name:
            return path
    return None


def _looks_pasted(query: str) -> bool:
    """A message rather than a key: several words, a line break, or an ``Error:`` head."""
    import re

    return "\n" in query or len(query.split()) >= 4 or bool(re.search(r"(?:Error|Exception|Warning)\b", query))


def _hand_to_explain(query: str, version: str, lang: str, as_json: bool) -> int | None:
    """Explain's answer when it places the message; None (lookup's own "no field" follows) when it cannot."""
    from dsfields.explain import explain_text, render_text

    answer = explain_text(query, lang=lang)
    if not answer.placed:
        return None
    if as_json:
        import json

        write(json.dumps({"deepspeed_version": version, "query": query, "explain": answer.as_json()},
                         indent=1, ensure_ascii=False) + "\n")
    else:
        head = chinese.text("lookup.this_looks_like_a_message_not") if lang == "zh" else (
            "This looks like a message, not a key; dsfields explain answers:")
        write(head + "\n" + render_text(answer, lang), lang=lang)
    return 0


# --- optimizer/scheduler types and goals (issue 28) ------------------------------------------------


def _also_goal(query: str, matches: list[Match]) -> Any:
    """The goal a one-word query also names (``checkpoint`` is a section and a goal), else None.

    Only words without ``_`` or ``.`` can be goal words, so a key lookup never reads the goal tags."""
    if not matches or "_" in query or "." in query:
        return None
    from dsfields.model.goals import goal_for

    return goal_for(query)


def _catalog_or_goal(snapshot: Snapshot, args: Any, lang: str, plain: bool = False) -> int | None:
    """The answer to ``optimizer:NAME``, ``scheduler:NAME`` or ``goal:WORD`` (``plain``: to a query that
    named no field: a goal word, or a type of either catalogue), or None when the query is none of them."""
    query = args.query.strip()
    if not plain and ":" not in query:
        return None
    if plain and "." in query:
        return None
    from dsfields import catalog_answer
    from dsfields.model.goals import goal_for

    wants_goal = query.lower().startswith("goal:")
    if wants_goal or plain:
        goal = goal_for(query)
        if goal is not None:
            if args.lang is None and any("\u2e80" <= char <= "\uffef" for char in query):
                lang = "zh"  # asked in Chinese (显存): answered in Chinese unless --lang says otherwise
            return _answer_goal(snapshot, args, lang, goal)
        if wants_goal:
            from dsfields.model.errors import UsageError
            from dsfields.model.goals import goals

            raise UsageError(f"no goal {query[5:].strip()!r}; goals: {', '.join(goals())}")
    prefixed = catalog_answer.split_query(query)
    if prefixed is None and not plain:
        return None
    section, name = prefixed if prefixed is not None else (None, query)
    found = catalog_answer.find_types(snapshot, name, section)
    if not found and section is None:
        # A class-like name (OneBitAdam) that no field has may be a type another release builds; the walk
        # over every release costs about a second, so plain key typos (lower case, "_") never pay it.
        if not (name[:1].isupper() and name.isalnum()):
            return None
        section = next((s for s in catalog_answer.SECTIONS
                        if catalog_answer.gone_from(catalog_answer.type_states(s, name), snapshot.version)), None)
        if section is None:
            return None
    states = {}
    if args.history or not found:
        for catalog_section in [c.section for c, _ in found] or [section]:
            states[catalog_section] = catalog_answer.type_states(catalog_section, name)
    versions = available_versions(repo_generated_dir()) if args.history else []
    width = terminal_width()
    if found:
        if args.json:
            items = []
            for catalog, entry in found:
                item = catalog_answer.type_json(catalog, entry, lang, snapshot)
                if args.history:
                    item["history"] = catalog_answer.type_history(states[catalog.section])
                items.append(item)
            return _json_answer(snapshot, args, lang, items)
        lines: list[str] = []
        for catalog, entry in found:
            lines += ([""] if lines else []) + catalog_answer.format_type(
                snapshot, catalog, entry, name, width, Style.for_stream(sys.stdout), lang)
            if args.history:
                events = catalog_answer.type_history(states[catalog.section])
                lines += [""] + catalog_answer.history_lines(events, versions, width, lang)
        write("\n".join(line.rstrip() for line in lines) + "\n", lang=lang)
        return 0
    assert section is not None
    where = catalog_answer.gone_from(states[section], snapshot.version)
    if where is None:
        if args.json:
            return _json_answer(snapshot, args, lang, [], catalog_answer.spelling_suggestions(snapshot, name, section))
        write("\n".join(catalog_answer.format_miss(snapshot, section, name, lang)) + "\n", lang=lang)
        return 1
    if args.json:
        item = catalog_answer.gone_json(section, name, where)
        if args.history:
            item["history"] = catalog_answer.type_history(states[section])
        _json_answer(snapshot, args, lang, [item])
        return 1  # this release builds no such type: a miss, with the releases that had it
    lines = catalog_answer.format_gone(section, name, snapshot.version, where, lang, width)
    if args.history:
        lines += [""] + catalog_answer.history_lines(catalog_answer.type_history(states[section]), versions,
                                                     width, lang)
    write("\n".join(line.rstrip() for line in lines) + "\n", lang=lang)
    return 1


def _answer_goal(snapshot: Snapshot, args: Any, lang: str, goal: Any, also_keys: list[str] | None = None) -> int:
    from dsfields import goal_answer

    if args.json:
        item = goal_answer.goal_json(snapshot, goal, lang) | {"also_keys": also_keys or []}
        return _json_answer(snapshot, args, lang, [item])
    width = terminal_width()
    lines = goal_answer.format_goal(snapshot, goal, width, Style.for_stream(sys.stdout), lang)
    if also_keys:
        lines += goal_answer.also_keys(args.query.strip(), also_keys, width, lang)
    write("\n".join(line.rstrip() for line in lines) + "\n", lang=lang)
    return 0


def _json_answer(snapshot: Snapshot, args: Any, lang: str, items: list[dict[str, Any]],
                 suggestions: list[str] | None = None) -> int:
    """The same envelope as a field answer's ``--json``: ``matches`` holds the type or goal records."""
    import json

    payload = {"deepspeed_version": snapshot.version, "query": args.query, "lang": lang, "matches": items,
               "suggestions": suggestions or []}
    write(json.dumps(payload, indent=1, ensure_ascii=False) + "\n", lambda: json.dumps(payload, indent=1) + "\n")
    return 0 if items else 1

