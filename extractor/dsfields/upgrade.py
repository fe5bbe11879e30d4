"""``dsfields upgrade``: what going from DeepSpeed U to V changes for one config file; the engine migrate shares.

Everything comes from the committed snapshots: which keys a release reads, its defaults and their source
lines (through :mod:`dsfields.resolve`, which answers "the value DeepSpeed will use" per release), which
keys it removed and why, which optimizers it has, which sections reject unknown keys, and (for behaviour
``check`` can confirm against a launch) the launch rules' ``launch.json``. Nothing here lists a key by hand.

The comparison is ``resolve --version U`` on the file against ``resolve --version V`` on the file (or on
its migration): every key both releases read whose value differs is a change; a default that changed for a
key the file does not set is the usual one (``gradient_clipping`` 0.0 → 1.0).

Two headings are the other commands' own answers, asked, not re-derived (:class:`Judge`): "Keys no longer
read" is exactly the written keys ``resolve --version U`` reads and ``resolve --version V`` does not, and
"Values now refused" exactly the errors ``check --version V`` reports and ``check --version U`` did not
(a finding is the same one in both releases when its key and its rule are). The exit code is ``check``'s:
1 when DeepSpeed V refuses the file.
"""

from __future__ import annotations

import argparse
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dsfields.configfile import ConfigFile, ConfigFileError, load_loadable
from dsfields.model import chinese
from dsfields.model.dotted import at_path
from dsfields.model.errors import DsfieldsError, UsageError
from dsfields.model.history import EventKind, field_histories
from dsfields.model.records import Field, Snapshot
from dsfields.model.store import available_versions, load_requested, release_at, version_key
from dsfields.model.termsafe import shown
from dsfields.model.wording import json_text
from dsfields.resolve import AUTO_HF, IGNORED, NOT_GIVEN, PASSED_ON, REMOVED, Resolved, Resolver

UNCOMPARED = {IGNORED, REMOVED, NOT_GIVEN, AUTO_HF}
"""Resolve sources with no value DeepSpeed uses: an ignored or rejected key, a private "not given" marker, or an
``"auto"`` the HF Trainer fills (the Trainer's value, whichever the release)."""


# ---------------------------------------------------------------- which release a file was written for


@dataclass
class Guess:
    """The release a file was written for, as far as its keys tell."""

    version: str | None
    how: str
    low: str | None = None
    high: str | None = None


def _present(events: list[Any], versions: list[str]) -> set[str]:
    """The releases in which a key is read (present and not rejected), from its history events."""
    present: set[str] = set()
    state = False
    by_version: dict[str, list[Any]] = {}
    for event in events:
        by_version.setdefault(event.version, []).append(event)
    for version in versions:
        for event in by_version.get(version, []):
            if event.kind in (EventKind.INTRODUCED, EventKind.REINTRODUCED):
                state = True
            elif event.kind in (EventKind.REMOVED, EventKind.BECAME_REMOVED, EventKind.NO_LONGER_REJECTED):
                state = False
        if state:
            present.add(version)
    return present


def written_paths(data: Any, prefix: str = "") -> list[str]:
    """Every JSON path the file writes, nested ones included."""
    out: list[str] = []
    if isinstance(data, dict):
        for key, value in data.items():
            path = f"{prefix}.{key}" if prefix else str(key)
            out.append(path)
            out += written_paths(value, path)
    return out


def infer_release(data: dict[str, Any], generated: Path | None = None) -> Guess:
    """The release a file was most likely written for, from keys that only some releases read.

    The file's keys bound the releases that read all of them: a key removed after release B means the file
    is for B or older, a key introduced in A means A or newer. The guess is B where there is such an upper
    bound (the last release that still read every key), else A; with neither, there is no guess.
    """
    versions = available_versions(generated)
    if not versions:
        return Guess(None, "no snapshots")
    newest = load_requested(versions[-1], generated)
    params = tuple(f"{c.section}.{c.params_key}." for c in newest.catalogs.values() if c.section)
    # optimizer/scheduler params are the class's keyword arguments, not config keys a release reads
    paths = [p for p in written_paths(data) if not p.startswith(params)]
    histories = field_histories(paths, generated)
    candidates = set(versions)
    low_key = high_key = None
    for path in paths:
        events = histories.get(path) or []
        if not events:
            continue  # a key no release reads tells nothing about the release
        present = _present(events, versions)
        if not present or present == set(versions):
            continue
        narrowed = candidates & present
        if not narrowed:
            continue  # keys of releases that never overlap: ignore the odd one out rather than guess nothing
        if min(present, key=version_key) != versions[0] and (
                low_key is None or version_key(min(present, key=version_key)) > version_key(low_key[1])):
            low_key = (path, min(present, key=version_key))
        if max(present, key=version_key) != versions[-1] and (
                high_key is None or version_key(max(present, key=version_key)) < version_key(high_key[1])):
            high_key = (path, max(present, key=version_key))
        candidates = narrowed
    if candidates == set(versions):
        return Guess(None, "every key the file has is read by every snapshotted release "
                           f"({versions[0]} … {versions[-1]}), so its keys do not tell the release")
    ordered = sorted(candidates, key=version_key)
    low, high = ordered[0], ordered[-1]
    reasons = []
    if low_key:
        reasons.append(f"{low_key[0]} is read from {low_key[1]} on")
    if high_key:
        reasons.append(f"{high_key[0]} is read up to {high_key[1]}")
    span = f"{'; '.join(reasons)}: written for a release in {low} … {high}"
    # Any release in the span is as good as another only if none changed a default this file relies on.
    changed = _defaults_changed(data, newest, low, high, generated)
    if changed:
        shown = ", ".join(f"{path} in {version}" for path, version in changed[:4])
        more = f" and {len(changed) - 4} more" if len(changed) > 4 else ""
        return Guess(None, f"{span}, and DeepSpeed changed defaults this file relies on in between ({shown}{more})",
                     low, high)
    guess = high if high_key else low
    return Guess(guess, f"guessed {guess} ({span}; no default this file relies on changed in between)", low, high)


def _defaults_changed(data: dict[str, Any], newest: Snapshot, low: str, high: str,
                      generated: Path | None) -> list[tuple[str, str]]:
    """(path, release) for every key the file relies on the default of (resolve's keys it does not write) whose
    default changed in a release after ``low``, up to ``high``."""
    paths = {item.path for item in Resolver(newest).resolve(data) if not item.written}
    lo, hi = version_key(low), version_key(high)
    out = []
    for path, events in field_histories(sorted(paths), generated).items():
        for event in events:
            if event.kind is EventKind.DEFAULT_CHANGED and lo < version_key(event.version) <= hi:
                out.append((path, event.version))
    return sorted(out, key=lambda item: (version_key(item[1]), item[0]))


def choose_source(data: dict[str, Any], requested: str | None, generated: Path | None = None,
                  date: str | None = None, oldest: bool = False) -> tuple[Snapshot, str]:
    """The snapshot of the release the file was written for, and how it was chosen (exit 2 if it cannot be):
    ``--from U``, else ``--from-date`` (the newest release published by then), else a guess from the keys.
    ``oldest``: where the keys do not decide, the oldest release they allow (``upgrade``, whose changes each name
    their release) instead of exit 2 (``migrate``, which would write that release's values into the file)."""
    if requested is not None:  # `--from ""` (an unset shell variable) is refused, never a guess
        return load_requested(requested, generated), f"--from {requested}"
    if date:
        version, published = release_at(date, generated)
        return load_requested(version, generated), f"--from-date {date.strip()}: {version}, published {published}"

    guess = infer_release(data, generated)
    if guess.version is not None:
        return load_requested(guess.version, generated), guess.how
    if not oldest:
        raise UsageError(f"cannot tell which DeepSpeed release the file was written for ({guess.how}); "
                         "give it with --from U or --from-date YYYY-MM")
    # No single release: upgrade from the oldest the keys allow. Every change then names the release it came in,
    # so a reader skips those at or before their own release; --from or --from-date narrows it.
    versions = available_versions(generated)
    if not versions:
        raise UsageError("no snapshots to upgrade from")
    oldest = guess.low or versions[0]
    return load_requested(oldest, generated), (
        f"not guessed ({guess.how}): from the oldest release the keys allow, {oldest}; each change names the "
        "release it came in, so skip those at or before yours, or give --from U or --from-date YYYY-MM")


# ---------------------------------------------------------------- check and resolve, asked once per release

READ_NOT = {IGNORED, REMOVED}
"""Resolve sources of a written key DeepSpeed does not read: ignored (unknown, shadowed, deprecated and dropped)
or removed (DeepSpeed raises its removal message)."""


@dataclass
class Verdict:
    """What ``check --version V`` and ``resolve --version V`` say about one file."""

    findings: list[Any]
    """check's findings (:class:`dsfields.check.Finding`), as ``check`` prints them."""
    resolved: dict[str, Resolved]
    """resolve's keys by path."""

    @property
    def errors(self) -> dict[tuple[str, str | None], Any]:
        """check's errors by (key, rule): the identity of a finding across releases (its words name the release)."""
        out: dict[tuple[str, str | None], Any] = {}
        for finding in self.findings:
            if finding.severity.value == "error":
                out.setdefault((finding.path, finding.rule), finding)
        return out

    @property
    def reads(self) -> set[str]:
        """The written keys the release reads (resolve's written keys that are not ignored or removed)."""
        return {path for path, item in self.resolved.items() if item.written and item.source not in READ_NOT}


class Judge:
    """``check`` and ``resolve`` of one file, each run once per release however many pairs ask."""

    def __init__(self, config: ConfigFile | dict[str, Any], hf: bool = False) -> None:
        self.config = config if isinstance(config, ConfigFile) else ConfigFile("<upgrade>", config, "json")
        self.data: dict[str, Any] = self.config.data
        self.hf = hf
        self._verdicts: dict[str, Verdict] = {}

    def __call__(self, snapshot: Snapshot) -> Verdict:
        verdict = self._verdicts.get(snapshot.version)
        if verdict is None:
            from dsfields.check import Options
            from dsfields.check.check_command import checker_for, file_findings

            checker = checker_for(snapshot, self.hf)
            options = Options(hf=self.hf)
            findings = file_findings(checker, self.config, options)
            verdict = self._verdicts[snapshot.version] = Verdict(findings, resolved(snapshot, self.data, self.hf))
        return verdict

    def no_longer_read(self, old: Snapshot, new: Snapshot) -> list[str]:
        """The written keys ``resolve`` reads in ``old`` and not in ``new``, in the file's order."""
        gone = self(old).reads - self(new).reads
        return [path for path in self(old).resolved if path in gone]

    def onset(self, old: Snapshot, new: Snapshot, holds: Any) -> str:
        """The first release after ``old`` from which ``holds(verdict)`` is true in every release up to ``new``
        (``new`` itself where it is only true there): the release a refusal or a loss came in."""
        lo, hi = version_key(old.version), version_key(new.version)
        between = [v for v in available_versions() if lo < version_key(v) < hi]
        since = new.version
        for version in reversed(between):
            if not holds(self(load_requested(version))):
                break
            since = version
        return since

    def newly_refused(self, old: Snapshot, new: Snapshot) -> list[Any]:
        """check's errors in ``new`` that ``old`` did not report (same key, same rule), in check's order."""
        before = self(old).errors
        return [finding for key, finding in self(new).errors.items() if key not in before]


# ---------------------------------------------------------------- values that change


@dataclass
class ValueChange:
    """One key whose value DeepSpeed U (on the file) and DeepSpeed V (on the file or its migration) differ on."""

    path: str
    old: Any
    new: Any
    written: bool
    """The file sets this key (after migration)."""
    old_source: str
    new_source: str
    old_where: str = ""
    new_where: str = ""
    pinned: bool = False
    """``migrate --keep-behaviour`` wrote the old value into the file."""
    note: str = ""

    def as_dict(self) -> dict[str, Any]:
        out = {"path": self.path, "old": self.old, "new": self.new, "written": self.written,
               "old_source": self.old_source, "new_source": self.new_source, "pinned": self.pinned}
        for key in ("old_where", "new_where", "note"):
            if getattr(self, key):
                out[key] = getattr(self, key)
        return out


def where(snapshot: Snapshot, path: str) -> str:
    """``deepspeed/<file>:<line>`` of a key's reader in one release, as the snapshot records it."""
    record = snapshot.fields.get(path)
    source = record.source if record is not None else None
    if source is None:
        return ""
    return f"{source.file}:{source.line}" if source.line else source.file


def same(a: Any, b: Any) -> bool:
    """JSON equality (``true`` is not ``1``; ``1`` is ``1.0``), dicts compared on the old one's keys only:
    a dict default that gained keys keeps the values it had."""
    if isinstance(a, dict) and isinstance(b, dict):
        return all(k in b and same(v, b[k]) for k, v in a.items())
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return bool(a == b)


def resolved(snapshot: Snapshot, data: dict[str, Any], hf: bool = False) -> dict[str, Resolved]:
    return {item.path: item for item in Resolver(snapshot).resolve(data, hf=hf)}


def compare(old_data: dict[str, Any], old: Snapshot, new_data: dict[str, Any], new: Snapshot,
            hf: bool = False, judge: Judge | None = None) -> list[ValueChange]:
    """Every key both releases read whose value differs between ``old`` on ``old_data`` and ``new`` on
    ``new_data``. A key only one of them reads is not a value change (a removal or an addition). ``hf``: an
    ``"auto"`` the HF Trainer fills is the Trainer's value in both releases, not a change. ``judge``: the file's
    resolves, already asked (``old_data`` and ``new_data`` are then its data)."""
    before = judge(old).resolved if judge is not None else resolved(old, old_data, hf)
    after = judge(new).resolved if judge is not None else resolved(new, new_data, hf)
    changes = []
    for path, item in before.items():
        if item.source in UNCOMPARED or item.source == PASSED_ON:
            continue
        now = after.get(path)
        if now is None or now.source in UNCOMPARED or now.source == PASSED_ON:
            continue
        if same(item.value, now.value):
            continue
        changes.append(ValueChange(path, item.value, now.value, now.written, item.source, now.source,
                                   where(old, path), where(new, path)))
    return changes


def pinnable(snapshot: Snapshot, path: str, value: Any) -> bool:
    """Whether writing ``value`` at ``path`` is accepted by the release (its types, choices and probes)."""
    from dsfields.check.values import accepts

    record: Field | None = snapshot.fields.get(path)
    if record is None or record.is_section or record.deprecated is not None:
        return False
    if isinstance(value, dict):
        return False
    ok, _, _ = accepts(record.json_types, value)
    if value is None and record.json_types and "null" not in record.json_types:
        ok = False
    if ok and record.choices is not None and value not in record.choices:
        ok = False
    probe = record.probe_for(value)
    if probe is not None and not probe[1].get("ok", True):
        ok = False
    return ok


# ---------------------------------------------------------------- the upgrade report


@dataclass
class Item:
    kind: str
    path: str
    text: str
    data: dict[str, Any] = field(default_factory=dict)


KINDS = ("removed", "renamed", "rejected", "still", "defaults", "lost", "new")
HEADINGS = {
    "en": {"removed": "Keys no longer read", "renamed": "Keys renamed or deprecated",
           "rejected": "Now refused (errors check reports in the new release, not in the old)",
           "still": "Refused by both releases (errors check reports in the old release too)",
           "defaults": "Defaults that change for keys the file does not set", "lost": "Behaviour the file loses",
           "new": "New keys in the sections the file uses"},
    "zh": {"removed": chinese.text("upgrade.removed"), "renamed": chinese.text("upgrade.renamed"),
           "rejected": chinese.text("upgrade.rejected"),
           "still": chinese.text("upgrade.still"),
           "defaults": chinese.text("upgrade.defaults"), "lost": chinese.text("upgrade.lost"),
           "new": chinese.text("upgrade.heading_new")},
}
class Words(dict[str, str]):
    """One language's words of the report, which know their language (``lang``): the check findings quoted in
    the report are localized to it."""

    def __init__(self, lang: str, words: dict[str, str]) -> None:
        super().__init__(words)
        self.lang = lang


_WORDS = {
    "en": {"title": "Upgrading {file} from DeepSpeed {u} to {v}", "none": "nothing", "from": "from",
           "default": "default", "removed_msg": "DeepSpeed {v}: {message}",
           "gone": "read by DeepSpeed {u} ({where}); DeepSpeed {v} does not read it",
           "deprecated_ignored": "deprecated in DeepSpeed {v}, which ignores the value; use {new}",
           "renamed": "deprecated in DeepSpeed {since}; use {new}",
           "renamed_carried": "deprecated in DeepSpeed {since}; its value is carried to {new}",
           "refused": "DeepSpeed {v} refuses it (from {since} on; {u} did not): {message}",
           "still": "DeepSpeed {v} refuses it, as {u} did: {message}",
           "optimizer": "optimizer {name}: DeepSpeed {u} has it, DeepSpeed {v} does not (it has {names})",
           "launch": "launch rule {rule}: confirmed by a launch of DeepSpeed {u} but not of DeepSpeed {v}",
           "launch_new": "launch rule {rule}: confirmed by a launch of DeepSpeed {v}, not of DeepSpeed {u}",
           "new_key": "new in DeepSpeed {since} (default {default}; {where})",
           "changed_in": "changed in DeepSpeed {since}", "gone_since": "not read from DeepSpeed {since} on",
           "written_change": "written in the file; DeepSpeed {v} reads the value differently",
           "colon": ": ", "and": ", ", "or_earlier": " or earlier", "after_release": "",
           "choose": "; no value keeps it: choose {options}"},
    "zh": {"title": chinese.text("upgrade.title"), "none": chinese.text("upgrade.none"),
           "from": chinese.text("upgrade.from"),
           "default": chinese.text("upgrade.default"), "removed_msg": chinese.text("upgrade.removed_msg"),
           "gone": chinese.text("upgrade.gone"),
           "deprecated_ignored": chinese.text("upgrade.deprecated_ignored"),
           "renamed": chinese.text("upgrade.renamed_3"),
           "renamed_carried": chinese.text("upgrade.renamed_carried_2"),
           "refused": chinese.text("upgrade.refused_2"),
           "still": chinese.text("upgrade.still_2"),
           "optimizer": chinese.text("upgrade.optimizer"),
           "launch": chinese.text("upgrade.launch"),
           "launch_new": chinese.text("upgrade.launch_new"),
           "new_key": chinese.text("upgrade.new_key_2"),
           "changed_in": chinese.text("upgrade.changed_in"), "gone_since": chinese.text("upgrade.gone_since"),
           "written_change": chinese.text("upgrade.written_change"),
           "colon": "：", "and": "、", "or_earlier": chinese.text("upgrade.or_earlier"), "after_release": " ",
           "choose": chinese.text("upgrade.choose")},
}
WORDS = {lang: Words(lang, words) for lang, words in _WORDS.items()}


def _sections_used(data: dict[str, Any]) -> set[str]:
    """The sections (dict-valued paths) the file writes."""
    out = {""}
    for path in written_paths(data):
        if isinstance(at_path(data, path), dict):
            out.add(path)
    return out


def _event_releases(paths: list[str], kinds: tuple[EventKind, ...], old: Snapshot | None, new: Snapshot,
                    generated: Path | None = None) -> dict[str, list[str]]:
    """For each path, the releases after ``old`` (None: from the first) up to ``new`` in which its history has one
    of ``kinds``: the release a change came in, which a long jump must name (a key added in 0.10.0 is not "new in
    0.19.8")."""
    lo, hi = version_key(old.version) if old is not None else (), version_key(new.version)
    out: dict[str, list[str]] = {}
    for path, events in field_histories(sorted(set(paths)), generated).items():
        found = [e.version for e in events if e.kind in kinds and lo < version_key(e.version) <= hi]
        if found:
            out[path] = sorted(set(found), key=version_key)
    return out


def report(data: dict[str, Any] | ConfigFile, old: Snapshot, new: Snapshot, lang: str = "en", hf: bool = False,
           judge: Judge | None = None) -> list[Item]:
    """What upgrading from ``old`` to ``new`` changes for this file, grouped by :data:`KINDS`. ``judge``: the
    file's check and resolve answers, shared between reports (one per release, however many pairs)."""
    w = WORDS[lang]
    u, v = old.version, new.version
    judge = judge if judge is not None else Judge(data, hf)
    data = judge.data
    items: list[Item] = []
    after = judge(new).resolved
    gone = judge.no_longer_read(old, new)
    for path in gone:  # exactly what resolve U reads and resolve V does not
        record = new.fields.get(path)
        extra: dict[str, Any] = {"basis": "resolve", "old_source": judge(old).resolved[path].source,
                                 "new_source": after[path].source if path in after else None}
        if path in new.removed:
            text = w["removed_msg"].format(v=v, message=new.removed[path].message)
            extra["message"] = new.removed[path].message
        elif record is not None and record.deprecated is not None:
            text = w["deprecated_ignored"].format(v=v, new=record.deprecated.new_param or "-")
        else:
            text = w["gone"].format(u=u, v=v, where=where(old, path) or "-")
        extra["since"] = judge.onset(old, new, lambda verdict, p=path: p not in verdict.reads)
        text += w["colon"] + w["gone_since"].format(since=extra["since"])
        items.append(Item("removed", path, text, extra))
    # the release that deprecated it, which may be older than the file's own (then DeepSpeed U warned already)
    deprecated = _event_releases(written_paths(data), (EventKind.DEPRECATED, EventKind.RENAMED), None, new)
    for path in written_paths(data):
        record = new.fields.get(path)
        if path in gone or record is None or record.deprecated is None:
            continue
        info = record.deprecated
        key = "renamed_carried" if info.set_new_param and info.new_param else "renamed"
        since = (deprecated.get(path) or [v])[-1]
        # deprecated in the first snapshotted release: the snapshots cannot tell how much earlier
        first = since == (available_versions() or [since])[0]
        since_text = since + (w["or_earlier"] if first else w["after_release"])
        text = w[key].format(since=since_text, new=info.new_param or "-")
        items.append(Item("renamed", path, text, {"new_param": info.new_param, "since": since}))
    items += _refused(judge, old, new, w)
    changes = compare(data, old, data, new, hf, judge)
    changed_in = _event_releases([c.path for c in changes], (EventKind.DEFAULT_CHANGED, EventKind.TYPE_CHANGED),
                                 old, new)
    for change in changes:
        if change.path in changed_in:
            change.note = w["changed_in"].format(since=w["and"].join(changed_in[change.path]))
        if change.written:
            if not any(i.path == change.path for i in items):  # the file's own value, read differently
                items.append(Item("lost", change.path,
                                  f"{json_text(change.old)} → {json_text(change.new)}: "
                                  + w["written_change"].format(v=v), change.as_dict()))
            continue
        items.append(Item("defaults", change.path,
                          f"{json_text(change.old)} → {json_text(change.new)} "
                          f"({u}: {change.old_where or '-'}; {v}: {change.new_where or '-'})"
                          + (f"{w['colon']}{change.note}" if change.note else ""), change.as_dict()))
    items += _lost(data, old, new, judge(old).resolved, w)
    items += _launch_changes(judge, old, new, w)
    items += _new_keys(data, old, new, w)
    order = {kind: i for i, kind in enumerate(KINDS)}
    return sorted(items, key=lambda i: order[i.kind])


def _refused(judge: Judge, old: Snapshot, new: Snapshot, w: Words) -> list[Item]:
    """Exactly the errors ``check --version V`` reports and ``check --version U`` did not, in check's words (in the
    report's language, as ``check --lang`` prints them); a fractional number at an integer key names the nearest
    values the new release accepts."""
    from dsfields.model.messages import localize

    out = []
    fresh = judge.newly_refused(old, new)
    still = [f for f in judge(new).errors.values() if f not in fresh]
    for finding in fresh + still:
        message = finding.message
        # localized as check prints it, after "key: ", so the catalogue's phrases match
        shown = localize(": " + message, w.lang, "check.")
        shown = shown[2:] if shown.startswith(": ") else shown[1:] if shown.startswith("：") else shown
        kind = "rejected" if finding in fresh else "still"
        identity = (finding.path, finding.rule)
        since = judge.onset(old, new, lambda verdict, i=identity: i in verdict.errors) if kind == "rejected" else ""
        text = w["refused" if kind == "rejected" else "still"].format(u=old.version, v=new.version, message=shown,
                                                                      since=since)
        value = at_path(judge.data, finding.path) if finding.path else None
        choose = choices_for(new, finding.path, value) if finding.path else []
        if choose:
            text += w["choose"].format(options=" / ".join(json_text(c) for c in choose))
        out.append(Item(kind, finding.path, text, {"basis": "check", "check": finding.as_dict(),
                                                           "choose": choose, **({"since": since} if since else {})}))
    return out


def choices_for(snapshot: Snapshot, path: str, value: Any) -> list[Any]:
    """The nearest values the release accepts for a fractional number at an integer key: floor and ceiling,
    each kept only where the release's probes (or types) accept it."""
    import math

    record = snapshot.fields.get(path)
    if record is None or not isinstance(value, float) or value.is_integer():
        return []
    out = []
    for candidate in sorted({math.floor(value), math.ceil(value)}):
        if pinnable(snapshot, path, candidate):
            out.append(candidate)
    return out


def _lost(data: dict[str, Any], old: Snapshot, new: Snapshot, before: dict[str, Resolved],
          w: Words) -> list[Item]:
    out = []
    for section in sorted({n for n in (old.catalogs or {})}):
        old_catalog, new_catalog = old.catalogs.get(section), new.catalogs.get(section)
        value = data.get(section)
        if old_catalog is None or new_catalog is None or not isinstance(value, dict):
            continue
        name = value.get(old_catalog.type_key)
        if not isinstance(name, str):
            continue
        key = name.lower() if name.lower() in old_catalog.names else name
        if key in old_catalog.names and key not in new_catalog.names and name not in new_catalog.names:
            names = ", ".join(sorted(n for n in new_catalog.names if n.islower()))
            out.append(Item("lost", f"{section}.{old_catalog.type_key}",
                            w["optimizer"].format(name=name, u=old.version, v=new.version, names=names),
                            {"name": name}))
    for path, value in data.items():
        if path in new.removed and path not in old.removed and path in old.fields:
            enabled = before.get(f"{path}.enabled")
            if value is False or enabled is not None and enabled.value is False:
                continue  # switched off in the file: nothing is lost
            out.append(Item("lost", path, w["removed_msg"].format(v=new.version, message=new.removed[path].message)))
    return out


def _launch_changes(judge: Judge, old: Snapshot, new: Snapshot, w: Words) -> list[Item]:
    """Launch rules that fire on this file in one release and not the other, where ``launch.json`` confirms them.
    One that newly fires as an error is already among the refusals (it is a check error); the others are
    behaviour the file meets in one release only."""
    from dsfields.check import Kind
    from dsfields.model.messages import localize

    fired: dict[str, dict[str, Any]] = {}
    for snapshot in (old, new):
        fired[snapshot.version] = {f.rule or f.message: f for f in judge(snapshot).findings if f.kind is Kind.LAUNCH}
    out = []
    for rule in sorted(set(fired[old.version]) - set(fired[new.version])):
        out.append(Item("lost", "", w["launch"].format(rule=rule, u=old.version, v=new.version),
                        {"rule": rule, "message": fired[old.version][rule].message}))
    for rule in sorted(set(fired[new.version]) - set(fired[old.version])):
        finding = fired[new.version][rule]
        if finding.severity.value == "error":
            continue
        # check's finding is English; the text form speaks the report's language (the json form keeps it).
        shown = localize(": " + finding.message, w.lang, "check.")
        shown = shown[2:] if shown.startswith(": ") else shown[1:]
        out.append(Item("lost", "", w["launch_new"].format(rule=rule, u=old.version, v=new.version)
                        + w["colon"] + shown, {"rule": rule, "message": finding.message}))
    return out


def _new_keys(data: dict[str, Any], old: Snapshot, new: Snapshot, w: Words) -> list[Item]:
    """Keys the new release reads in the sections the file writes and the old release did not read."""
    used = _sections_used(data)
    params = tuple(f"{c.section}.{c.params_key}" for c in new.catalogs.values() if c.section)
    resolver = Resolver(new)
    stage = _stage(data)
    wanted = []
    for path, record in sorted(new.fields.items()):
        if record.section not in used or path in old.fields or record.deprecated is not None or record.pattern:
            continue
        if record.section.startswith(params) or not resolver.relevant(path, stage):
            continue  # a class's keyword arguments; a ZeRO knob of another stage
        if record.section == "":
            continue  # a new top-level key is a new feature, not a knob of a section the file uses
        wanted.append((path, record))
    since = _event_releases([p for p, _ in wanted], (EventKind.INTRODUCED, EventKind.REINTRODUCED), old, new)
    out = []
    for path, record in wanted:
        default = json_text(record.default)
        default = default if len(default) <= 60 else default[:57] + "..."
        added = (since.get(path) or [new.version])[-1]
        out.append(Item("new", path, w["new_key"].format(since=added, default=default,
                                                          where=where(new, path) or "-"),
                        {"default": record.default, "since": added}))
    return out


def _stage(data: dict[str, Any]) -> int | None:
    zero = data.get("zero_optimization")
    if isinstance(zero, bool):
        return int(zero)
    stage = zero.get("stage", 0) if isinstance(zero, dict) else 0
    return stage if isinstance(stage, int) and not isinstance(stage, bool) else None


def render(items: list[Item], name: str, old: str, new: str, fmt: str, lang: str) -> str:
    w, headings = WORDS[lang], HEADINGS[lang]
    if fmt == "json":
        return json.dumps({"file": name, "from": old, "to": new, "lang": lang,
                           "items": [{"kind": i.kind, "path": i.path, "text": i.text, **i.data} for i in items]},
                          indent=1, ensure_ascii=False)
    # A file name, key or value from the data never starts a line of its own (a name with "\n" in it)
    title = w["title"].format(file=shown(name), u=old, v=new)
    lines = [f"# {title}" if fmt == "markdown" else title]
    for kind in KINDS:
        group = [i for i in items if i.kind == kind]
        lines.append("")
        lines.append(f"## {headings[kind]}" if fmt == "markdown" else headings[kind] + w["colon"].rstrip())
        if not group:
            lines.append(f"- {w['none']}" if fmt == "markdown" else f"  {w['none']}")
        for item in group:
            path = (f"`{shown(item.path)}`: " if fmt == "markdown" else f"{shown(item.path)}: ") if item.path else ""
            lines.append(f"- {path}{shown(item.text)}" if fmt == "markdown" else f"  {path}{shown(item.text)}")
    return "\n".join(lines)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", type=Path, metavar="FILE", help="a ds_config file (JSON or hjson)")
    parser.add_argument("--from", dest="source", metavar="U", default=None,
                        help="the DeepSpeed release the file was written for (default: guessed from its keys)")
    parser.add_argument("--from-date", dest="from_date", metavar="DATE", default=None,
                        help="when the file was written (YYYY, YYYY-MM or YYYY-MM-DD): --from is the newest release "
                             "published by then (generated/releases.json)")
    parser.add_argument("--to", required=True, metavar="V", help="the DeepSpeed release to upgrade to")
    parser.add_argument("--format", choices=["text", "markdown", "json"], default="text")
    parser.add_argument("--hf", action="store_true", help='the file is for the HF Trainer: its "auto" values are '
                                                          "the Trainer's in both releases")
    parser.add_argument("--lang", choices=sorted(WORDS), default=None,
                        help="report language (default: zh under a zh_* LANG, else en)")


def _language(requested: str | None) -> str:
    import os

    if requested:
        return requested
    return "zh" if os.environ.get("LANG", "").startswith("zh") else "en"


def run(args: argparse.Namespace) -> int:
    """Print the report; exit 1 where DeepSpeed V refuses the file (``check --version V`` has an error), as
    ``check`` does."""
    if args.source is not None and getattr(args, "from_date", None):
        raise UsageError("give --from or --from-date, not both")
    try:
        config = load_loadable(args.file, args.hf)  # what DeepSpeed (or, with --hf, the Trainer) cannot load
    except ConfigFileError as exc:
        raise DsfieldsError(str(exc)) from None
    new = load_requested(args.to)
    old, how = choose_source(config.data, args.source, date=getattr(args, "from_date", None), oldest=True)
    lang = _language(args.lang)
    judge = Judge(config, args.hf)
    items = report(config.data, old, new, lang, args.hf, judge)
    text = render(items, str(args.file), old.version, new.version, args.format, lang)
    if args.format != "json" and not args.source:
        from dsfields.model.messages import localize

        label = "--from" if lang == "en" or getattr(args, "from_date", None) else chinese.text("upgrade.from_2")
        text += f"\n\n({label}: {localize(how, lang, 'error.')})"
    print(text)
    return 1 if judge(new).errors else 0
