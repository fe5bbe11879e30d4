# `dsfields explain --config FILE` (issue 38): the user's file with the change each cause asks for, checked.
"""The fixed file behind ``explain --config FILE [--fix-out OUT]``.

For each cause :mod:`dsfields.explain` ranks, on the keys the user's file writes, the change its action asks for:

* the batch rule (a cause on the batch keys): the three values DeepSpeed will accept at the world size the message
  printed (or ``--world-size``), completed by :mod:`dsfields.model.batch` (the one home of the rule);
* ``set_value`` of a refused value: a value the release accepts — its default, the other boolean, one of its
  choices — the first that ``check`` no longer refuses;
* ``move_key``: the key moved to where the release reads it (the one place its name is a field, or the top-level
  section of that name);
* ``rename_key``: the key moved to its replacement (:func:`dsfields.model.renames.replacement_of`);
* ``remove_key`` / ``upgrade`` / ``downgrade``: the key deleted (for a release that lacks the key, deleting it is
  the change a file can make);
* ``set_auto``: ``"auto"``, judged as the HF Trainer fills it (``check --hf``).

Every candidate file is judged by ``check``'s own engine (:func:`dsfields.check.check_command.file_findings`): a
change is kept only when the file has fewer errors after it, so "check passes on the fixed file" is measured, never
assumed; :attr:`Fix.passes` says whether the final file has no error left.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from typing import Any

from dsfields.model import chinese
from dsfields.model.batch import BATCH_KEYS, complete, refusal
from dsfields.model.dotted import at_path, delete_in_place, put_in_place
from dsfields.model.termsafe import shown

_MISSING = object()


@dataclass
class Change:
    """One edit of the file: ``path`` set to ``new`` (``to``: moved there), or deleted (``new`` is None, no ``to``)."""

    action: str
    path: str
    old: Any
    new: Any = None
    to: str | None = None

    def words(self, lang: str) -> str:
        old = shown(json.dumps(self.old, ensure_ascii=False))[:80]
        if self.to:
            return (f"move `{self.path}` → `{self.to}`" if lang != "zh" else
                    chinese.text("explain_fix.move", self_path=self.path, self_to=self.to))
        if self.new is None:
            return (f"delete `{self.path}` (was {old})" if lang != "zh" else
                    chinese.text("explain_fix.delete_was", self_path=self.path, old=old))
        new = shown(json.dumps(self.new, ensure_ascii=False))[:80]
        return (f"set `{self.path}`: {old} → {new}" if lang != "zh" else
                chinese.text("explain_fix.set", self_path=self.path, old=old, new=new))

    def as_json(self) -> dict[str, Any]:
        document: dict[str, Any] = {"action": self.action, "path": self.path, "old": self.old}
        if self.to:
            document["to"] = self.to
        elif self.new is not None:
            document["new"] = self.new
        return document


@dataclass
class Fix:
    """The fixed file: its data, the changes made, and ``check``'s errors before and after."""

    config: dict[str, Any]
    changes: list[Change] = field(default_factory=list)
    errors_before: int = 0
    errors_after: int = 0
    version: str = ""

    @property
    def passes(self) -> bool:
        return self.errors_after == 0


# ----------------------------------------------------------------------------------------------- check as oracle


def _errors(config: dict[str, Any], version: str, hf: bool, world: int | None) -> list[Any]:
    """``check``'s error findings on ``config`` (``dsfields check --version V [--hf] [--world-size N]``)."""
    from dsfields.check.check_command import checker_for, file_findings
    from dsfields.check.findings import Options, Severity
    from dsfields.configfile import parse
    from dsfields.model.store import load_indexed

    checker = checker_for(load_indexed(version), hf)
    parsed = parse(json.dumps(config), "<fixed>", "hf" if hf else "deepspeed")
    options = Options(hf=hf, world_size=world)
    return [f for f in file_findings(checker, parsed, options) if f.severity is Severity.ERROR]


# ----------------------------------------------------------------------------------------------- the edits


def _number(value: Any) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return int(value) if float(value).is_integer() else None


def _world_from(message: str) -> int | None:
    """The world size DeepSpeed printed in its batch assertion (``16 != 1 * 8 * 2`` → 2)."""
    found = re.search(r"(\d+)\s*!=\s*(\d+)\s*\*\s*(\d+)\s*\*\s*(\d+)", message)
    return int(found.group(4)) if found else None


def _batch(config: dict[str, Any], world: int) -> list[Change]:
    """The batch keys set so that DeepSpeed's rule holds at ``world`` ranks: the micro batch and the accumulation
    the file gives are kept (a value below 1 becomes 1), the batch follows from them."""
    values = [config.get(k) for k in BATCH_KEYS]
    if any(isinstance(v, str) for v in values):
        return []  # "auto": the Trainer fills them
    tbs, micro, gas = (_number(v) for v in values)
    if refusal(tbs, micro, gas, world) is None:
        return []
    micro = micro if micro and micro > 0 else (max(1, tbs // world) if tbs and not gas else 1)
    gas = gas if gas and gas > 0 else 1
    wanted = complete(None, micro, gas, world)
    if wanted is None:
        return []
    changes = []
    for key, new in zip(BATCH_KEYS, (micro * gas * world, micro, gas), strict=True):
        old = config.get(key, _MISSING)
        if old is not _MISSING and old != new:  # a key the file leaves out is completed by DeepSpeed itself
            changes.append(Change("set_value", key, old, new))
    return changes


def _target(path: str, snapshot: Any) -> str | None:
    """Where the release reads the key of ``path`` instead: the one other field of that name, else the top-level
    section of that name (``zero_optimization.aio`` → ``aio``)."""
    leaf = path.rsplit(".", 1)[-1]
    others = [p for p, f in snapshot.fields.items() if f.key == leaf and p != path]
    if len(others) == 1:
        return others[0]
    if leaf in (getattr(snapshot, "sections", None) or {}) and leaf != path:
        return leaf
    return None


def _read_there(target: str, config: dict[str, Any], snapshot: Any) -> bool:
    """Whether a key moved to ``target`` would be read: not when its section has an ``enabled`` switch the file
    does not turn on (``bf16.loss_scale`` moved into a disabled ``fp16`` is dead weight: delete it instead)."""
    section = target.rsplit(".", 1)[0] if "." in target else ""
    switch = f"{section}.enabled" if section else ""
    return not (switch and switch in snapshot.fields and at_path(config, switch) is not True)


def _candidates(path: str, old: Any, snapshot: Any) -> list[Any]:
    """Values the release accepts for ``path``, most conservative first: its default, the other boolean, each
    choice."""
    record = snapshot.fields.get(path)
    if record is None:
        return []
    out: list[Any] = []
    default = record.comparable_default
    if default is not None and default != old:
        out.append(default)
    if isinstance(old, bool) or record.type == "bool":
        out.append(not old if isinstance(old, bool) else False)
    for choice in record.choices or []:
        if choice != old and choice not in out:
            out.append(choice)
    return out


def _edit(config: dict[str, Any], change: Change) -> dict[str, Any]:
    edited = copy.deepcopy(config)
    if change.to:
        delete_in_place(edited, change.path)
        if at_path(edited, change.to, _MISSING) is _MISSING:
            put_in_place(edited, change.to, copy.deepcopy(change.old))
    elif change.new is None:
        delete_in_place(edited, change.path)
    else:
        put_in_place(edited, change.path, change.new)
    return edited


def _proposals(cause: Any, config: dict[str, Any], snapshot: Any, world: int) -> list[list[Change]]:
    """The edits that would answer ``cause`` on ``config``, each a list applied together, best first."""
    if cause.action == "no_change":
        return []  # an info log: the file is not what it reports on
    written = [k for k in cause.keys if not k.startswith(("hf:", "accelerate:"))
               and at_path(config, k, _MISSING) is not _MISSING]
    out: list[list[Change]] = []
    if set(cause.keys) & set(BATCH_KEYS):
        batch = _batch(config, world)
        if batch:
            out.append(batch)
    for path in written:
        old = at_path(config, path)
        record = snapshot.fields.get(path)
        removal = [Change("remove_key", path, old)]
        if cause.action == "set_auto":
            out.append([Change("set_auto", path, old, "auto")])
        if cause.action == "rename_key" and record is not None:
            from dsfields.model.renames import replacement_of

            new = replacement_of(snapshot.fields, path, record)
            if new:
                out.append([Change("rename_key", path, old, to=new)])
        target = _target(path, snapshot) if record is None or cause.action == "move_key" else None
        if target and _read_there(target, config, snapshot):
            out.append([Change("move_key", path, old, to=target)])
        if cause.action == "set_value" and path not in BATCH_KEYS:
            out += [[Change("set_value", path, old, value)] for value in _candidates(path, old, snapshot)]
        out.append(removal)
    return out


def fix_config(answer: Any, config: dict[str, Any], version: str, *, world_size: int | None = None,
               hf: bool = False) -> Fix:
    """The file ``config`` with, for each cause of ``answer`` in rank order, the first edit that leaves ``check``
    (of ``version``) with fewer errors; stops once no error is left."""
    from dsfields.model.store import load_indexed

    snapshot = load_indexed(version)
    hf = hf or any(c.action == "set_auto" for c in answer.causes)
    world = world_size or _world_from(answer.message or "") or _world_from(
        " ".join(c.fix for c in answer.causes)) or 1
    current = copy.deepcopy(config)
    errors = _errors(current, version, hf, world)
    result = Fix(current, errors_before=len(errors), errors_after=len(errors), version=version)
    for cause in answer.causes:
        for edits in _proposals(cause, current, snapshot, world):
            candidate = current
            for change in edits:
                candidate = _edit(candidate, change)
            after = _errors(candidate, version, hf, world)
            if len(after) < len(errors) or (not errors and not after and edits[0].path in cause.keys[:1]):
                current, errors = candidate, after
                result.changes += edits
                break
        if not errors and result.changes:
            break
    current, errors = _same_rule(current, errors, result, version, hf, world)
    result.config = current
    result.errors_after = len(errors)
    return result


def _same_rule(config: dict[str, Any], errors: list[Any], result: Fix, version: str, hf: bool,
               world: int) -> tuple[dict[str, Any], list[Any]]:
    """The errors a paste left out (pydantic prints "5 validation errors" and users paste two): an error of the same
    kind in the same section as a key a change already answered gets the same change."""
    done = {(c.path.rpartition(".")[0], c.action) for c in result.changes if c.action in ("remove_key", "move_key")}
    for error in list(errors):
        section = error.path.rpartition(".")[0]
        for where, action in done:
            if where != section or at_path(config, error.path, _MISSING) is _MISSING:
                continue
            from dsfields.model.store import load_indexed

            old = at_path(config, error.path)
            target = _target(error.path, load_indexed(version)) if action == "move_key" else None
            change = Change(action, error.path, old, to=target) if target else Change("remove_key", error.path, old)
            candidate = _edit(config, change)
            after = _errors(candidate, version, hf, world)
            if len(after) < len(errors):
                config, errors = candidate, after
                result.changes.append(change)
            break
    return config, errors


def render(fix: Fix, lang: str) -> str:
    """The concrete change, as ``explain --config`` prints it under the causes."""
    if not fix.changes:
        return ("No change of your file answers these causes that `dsfields check` can confirm "
                f"(DeepSpeed {fix.version}).\n" if lang != "zh" else
                chinese.text("explain_fix.no_change_of_your_file_answers", fix_version=fix.version))
    head = (f"The fixed file (checked against DeepSpeed {fix.version}):" if lang != "zh" else
            chinese.text("explain_fix.the_fixed_file_checked_against_deepspeed", fix_version=fix.version))
    lines = [head] + [f"  - {c.words(lang)}" for c in fix.changes]
    if fix.passes:
        lines.append(f"  `dsfields check` passes on it (errors before: {fix.errors_before}; after: none)."
                     if lang != "zh" else chinese.text("explain_fix.dsfields_check_passes_on_it_errors",
                                                       fix_errors_before=fix.errors_before))
    else:
        lines.append(f"  `dsfields check` still reports errors on it (before: {fix.errors_before}; after: "
                     f"{fix.errors_after}): run `dsfields check` on it for the rest." if lang != "zh" else
                     chinese.text("explain_fix.dsfields_check_still_reports_errors_on",
                                  fix_errors_before=fix.errors_before, fix_errors_after=fix.errors_after))
    return "\n".join(lines) + "\n"
