"""The checker: one config judged against one snapshot, key by key, then the optimizer and the rules.

DeepSpeed reads most of its config with ``dict.get``: a typo is silently ignored, a removed key
fails only at start-up, a misspelt optimizer param fails minutes later at ``deepspeed.initialize``.
This checks a config against the snapshot of one DeepSpeed release — unknown, removed and deprecated
keys; types, enums and constraints as pydantic coerces them; ``"auto"`` as DeepSpeed alone or the
HF Trainer treats it; optimizer and scheduler names and params from the engine's own mapping; and
the cross-field rules of :mod:`dsfields.check.rules`. It reads the snapshot, and the HF Trainer's fill list
(:func:`dsfields.hf.trainer.fill_list`, from ``generated/hf/``) when a config has ``"auto"`` values or ``--hf``.

``"auto"`` policy. With ``--hf``, keys the HF Trainer fills (that fill list, read from transformers' own source)
are fine. Every other ``"auto"`` is judged by what DeepSpeed
alone does with it (the snapshot's ``auto`` record, measured at extraction): an *error* where
DeepSpeed raises, or stores the string where a number or boolean goes (it fails later); a
*warning* where DeepSpeed silently drops it and uses the default — the config works, but not as
its author believed, so the warning names that default. That is more truthful than calling every
``"auto"`` an error, and never stricter than DeepSpeed.
"""

from __future__ import annotations

import json
import operator

from dsfields.check.findings import RANK, FileReport, Finding, Kind, Options, Severity
from dsfields.check.launch_rules import launch_rule_findings
from dsfields.check.rules import View, evaluate
from dsfields.check.values import accepts
from dsfields.configfile import ConfigFile, ConfigFileError, Path_, dotted, load, parse
from dsfields.model.dotted import at_path, join
from dsfields.model.jsontypes import json_type
from dsfields.model.records import Catalog, CatalogEntry, CatalogParam, Field, HfTrainer, Section, Snapshot
from dsfields.model.wording import SpellingIndex, at_source, default_in_context, same_words

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing and pathlib cost check's start-up milliseconds; annotations are strings anyway
    from collections.abc import Callable
    from pathlib import Path
    from typing import Any


_ABSENT = object()
_COMPARE: dict[str, Callable[[Any, Any], bool]] = {
    "<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
"""The operators of a recorded comparison between two keys (``compared_with``)."""
"""A dotted replacement's value when some part of its path is not in the config."""
_UNREAD = object()
"""The history index not yet read (it may be read and found absent or stale: None)."""


def _fmt(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False) if value is not None else "null"



def _names_word(text: str, word: str) -> bool:
    """``word`` stands in ``text`` as a whole name: not inside a longer word or dotted name (no word character or
    ``.`` before it, no word character after it; a word character is what the regex ``\\w`` matches). A plain
    search, where one regex of every sibling cost ``check`` a compile of milliseconds per key a probe refused."""
    start = text.find(word)
    while start >= 0:
        end = start + len(word)
        before = text[start - 1] if start else ""
        after = text[end] if end < len(text) else ""
        if not (before and (before.isalnum() or before in "_.")) and not (after and (after.isalnum() or after == "_")):
            return True
        start = text.find(word, start + 1)
    return False

class Checker:
    """Indexes one snapshot once; :meth:`check` then judges parsed configs against it."""

    def __init__(self, snapshot: Snapshot, hf_trainer: HfTrainer | None | object = _UNREAD) -> None:
        self.snapshot = snapshot
        self.version = snapshot.version
        self._history_index: Any = _UNREAD
        self._key_spellings: SpellingIndex | None = None
        """``index.json`` as :func:`~dsfields.model.history.read_index` found it, read at the first unknown key."""
        self.sections = snapshot.sections
        self.fields = snapshot.fields
        self.removed = snapshot.removed
        self.catalogs = snapshot.catalogs
        self._hf_trainer = hf_trainer
        """The HF Trainer's fill list (:func:`dsfields.hf.trainer.fill_list`), read when first asked: only a config
        with "auto" values or ``--hf`` needs it."""

    @property
    def hf_trainer(self) -> HfTrainer | None:
        if self._hf_trainer is _UNREAD:
            from dsfields.hf.trainer import fill_list

            self._hf_trainer = fill_list()
        return self._hf_trainer  # type: ignore[return-value]

    @property
    def hf_fills(self) -> dict[str, Any] | None:
        """Path → where the HF Trainer fills that key's ``"auto"``; None without a fill list."""
        hf = self.hf_trainer
        return hf.paths if hf is not None else None

    @property
    def hf_version(self) -> str | None:
        hf = self.hf_trainer
        return hf.transformers_version if hf is not None else None

    # ------------------------------------------------------------ entry points

    def check(self, config: ConfigFile, options: Options) -> list[Finding]:
        run = _Run(self, config, options)
        run.file_level()
        run.section("", config.data, ())
        if self.snapshot.document != "inference":  # init_inference: no optimizer, batch or launch rules apply
            run.optimizers()
            run.rules()
            run.findings = launch_rule_findings(self, config, options, run.findings)  # hook: check/launch_rules.py
            if options.hf:  # the pair's fills of "auto" judged by this release's types (check/trainer_check.py)
                from dsfields.check.trainer_check import fill_type_findings

                run.findings = fill_type_findings(self, config, options, run.findings)
            # hook: check/world_check.py (rules confirmed in world.json: those of N ranks with --world-size N,
            # the features' own set-up refusals at every world size)
            from dsfields.check.world_check import world_rule_findings

            run.findings = world_rule_findings(self, config, options, run.findings)
        findings = sorted(run.findings, key=lambda f: (f.line or 0, RANK[f.severity], f.path, f.message))
        if options.hf:
            return findings
        from dsfields.check.trainer_check import hf_hint  # the one HF hint (rule hf-config), after the findings

        return hf_hint(config, self, findings)

    def history_index(self) -> dict[str, Any] | None:
        """``index.json`` if current (:func:`~dsfields.model.history.read_index`), read at the first removed or
        unknown key and kept for the others: judging it stats every release's snapshot."""
        if self._history_index is _UNREAD:
            from dsfields.model.history import read_index

            self._history_index = read_index()
        return self._history_index

    def key_spellings(self) -> SpellingIndex:
        """Every bare key of the release (``by_key``'s order) for :func:`same_words`, indexed at the first ask."""
        if self._key_spellings is None:
            self._key_spellings = SpellingIndex(self.snapshot.by_key)
        return self._key_spellings

    def departure_note(self, path: str) -> str:
        """" (removed in X, last in Y)" from the committed snapshots' history, or "" where it is not known."""
        from dsfields.model.history import EventKind, departure  # only for removed or unknown keys

        try:
            gone = departure(path, self.version, index=self.history_index())
        except (OSError, ValueError, KeyError, TypeError):
            return ""  # no history beside this snapshot (a hand-made one): the message stands alone
        if gone is None:
            return ""
        last = f", last in {gone.last}" if gone.last else ""
        if gone.renamed_to:
            return f' (renamed to "{gone.renamed_to}" in DeepSpeed {gone.version}{last})'
        verb = "removed" if gone.kind is EventKind.BECAME_REMOVED else "no longer read"
        return f" ({verb} in DeepSpeed {gone.version}{last})"

    def arrival(self, path: str) -> str | None:
        """The later committed release that introduced ``path`` (the history's ``arrival``), or None."""
        from dsfields.model.history import arrival

        try:
            return arrival(path, self.version, index=self.history_index())
        except (OSError, ValueError, KeyError, TypeError):
            return None

    def removed_name(self, section: str, name: str) -> tuple[str, str] | None:
        """``(removed in, last in)`` for an optimizer/scheduler name an older committed release built."""
        from dsfields.model.history import catalog_name_spans, next_release, version_key

        try:
            versions, spans = catalog_name_spans(section)
        except (OSError, ValueError, KeyError, TypeError):
            return None
        runs = spans.get(name) or spans.get(name.lower())
        if not runs:
            return None
        last = max((run[1] for run in runs if version_key(run[1]) < version_key(self.version)),
                   key=version_key, default=None)
        removed_in = next_release(versions, last) if last else None
        return (removed_in, last) if removed_in else None

    def hf_filled(self, options: Options) -> frozenset[str]:
        return frozenset(self.hf_fills or ()) if options.hf else frozenset()


_CONVERSIONS: dict[str, Any] = {"invalid literal for int()": int, "could not convert string to float": float}
"""The ValueError of each number conversion a dict reader may apply to a string (``int(d.get(key, 1))``)."""


def string_conversion(record: Field) -> Any:
    """``int`` or ``float`` where the key's probes show that DeepSpeed converts a string with it: the numeric
    string probe accepted, another string refused with that conversion's ValueError; else None."""
    numeric = record.probes.get('"1"') or {}
    if not numeric.get("ok"):
        return None
    for probe, verdict in record.probes.items():
        error = str(verdict.get("error") or "")
        if probe.startswith('"') and not verdict.get("ok") and error.startswith("ValueError"):
            for words, convert in _CONVERSIONS.items():
                if words in error:
                    return convert
    return None


_PROBE_TYPES = {"-1": "integer", "0": "integer", "1": "integer", "true": "boolean", '"1"': "string",
                '"false"': "string", "1.5": "number", "null": "null", "[]": "array", "{}": "object"}
"""The JSON type of each value probe but "auto" (extract/probes.py PROBES), which has its own record."""

SUGGESTION_BUDGET = 100
"""Unknown keys per file that get a spelling suggestion (difflib, ~4 ms each): a hostile file of
a million unknown keys must not cost hours."""


class _Run:
    """One config being checked: accumulates findings with their lines."""

    def __init__(self, checker: Checker, config: ConfigFile, options: Options) -> None:
        self.c = checker
        self.config = config
        self.options = options
        self.findings: list[Finding] = []
        self.hf_filled = checker.hf_filled(options)
        self.suggestions_left = SUGGESTION_BUDGET
        self.requirement_paths: set[str] = set()
        """Keys whose recorded requirement was reported: a hand-written rule saying the same is dropped."""

    def add(self, path: Path_ | str, severity: Severity, kind: Kind, message: str, fix: str,
            related: tuple[str, ...] = (), rule: str | None = None) -> None:
        key_path: Path_ = tuple(path.split(".")) if isinstance(path, str) else path
        if isinstance(path, str) and not path:
            key_path = ()
        line = self.config.line_of(key_path) if key_path else None
        self.findings.append(Finding(dotted(key_path), severity, kind, message, fix, line or 1, related, rule))

    # ------------------------------------------------------------ file level

    def file_level(self) -> None:
        if self.config.parse_note:
            self.add((), Severity.ERROR, Kind.SYNTAX, self.config.parse_note,
                     "write strict JSON (no comments, quoted keys)")
        for path, line in self.config.duplicates:
            if self.options.hf:
                self.findings.append(Finding(
                    dotted(path), Severity.WARNING, Kind.DUPLICATE_KEY,
                    "key repeated in one object; json.load (HF Trainer) silently keeps the last value",
                    "keep one of them", line))
            else:
                self.findings.append(Finding(
                    dotted(path), Severity.ERROR, Kind.DUPLICATE_KEY,
                    "key repeated in one object; DeepSpeed raises \"Duplicate keys in DeepSpeed config\"",
                    "keep one of them", line))
        if self.options.hf and self.c.hf_fills is None:
            self.add((), Severity.INFO, Kind.LIMITATION,
                     "no HF Trainer fill list (generated/hf/ has no transformers snapshot with one): every \"auto\" "
                     "is judged as DeepSpeed alone would",
                     "python -m dsfields.extract.hf.rule_witness writes it")

    # ------------------------------------------------------------ sections and keys

    def section(self, section: str, obj: dict[str, Any], where: Path_) -> None:
        record = self.c.sections.get(section)
        if record is not None and record.passthrough:
            self.group_entries(section, obj, where)
        if record is None or record.passthrough:
            return  # DeepSpeed hands this dict on whole (e.g. pipeline): any key is kept
        catalog = self.c.catalogs.get(section)
        snapshot = self.c.snapshot
        for key, value in obj.items():
            path = join(section, key)
            here = (*where, key)
            if catalog and key == catalog.params_key:
                continue  # judged against the class's signature in optimizers()
            if path in self.c.removed:
                removed = self.c.removed[path]
                when = self.c.departure_note(path).strip(" ()") or "removed"
                self.add(here, Severity.ERROR, Kind.REMOVED_KEY,
                         f"{when}: DeepSpeed {self.c.version} raises: {removed.message}", f'delete "{key}"')
                continue
            field_record = snapshot.by_section.get(section, {}).get(key)
            if field_record is None and not key.startswith(("_", "//", "#")):
                field_record = snapshot.by_section.get(section, {}).get("*")  # a user-named group (pattern path)
            if field_record is None:
                alias = snapshot.by_python_name.get(section, {}).get(key)
                if alias is not None:
                    self.add(here, Severity.INFO, Kind.ALIAS,
                             f'"{key}" is the Python name of "{alias.key}"; DeepSpeed accepts both spellings',
                             f'write "{alias.key}" as the documentation does')
                    field_record = alias
                elif key in snapshot.by_alias.get(section, {}):  # the inference document: pydantic aliases
                    field_record = snapshot.by_alias[section][key]
                    self.add(here, Severity.INFO, Kind.ALIAS,
                             f'"{key}" is an alias of "{field_record.key}"; DeepSpeed accepts both spellings',
                             f'write "{field_record.key}" as init_inference\'s arguments do')
                else:
                    self.unknown(section, key, here, record)
                    continue
            if field_record.deprecated:
                self.deprecated(section, key, obj, field_record, here)
            self.value(field_record, value, here)
            self.requirements(field_record, value, obj, here)
            # A dict of user-named entries is walked even where its own record is not marked a section
            # (0.19.8 curriculum_metrics): its entries' keys have records, choices and requirements.
            walk = field_record.is_section or join(field_record.path, "*") in self.c.sections
            if walk and isinstance(value, dict) and field_record.path in self.c.sections:
                self.section(field_record.path, value, here)
        self.group_entry(section, obj, where)
        self.section_requires(section, obj, where)
        self.comparisons(section, obj, where)

    def stating(self, section: str, fact: str) -> list[tuple[str, Field]]:
        """The keys of ``section`` (in order) whose record states ``fact`` (:meth:`Snapshot.paths_with`): the
        section's other records are not decoded."""
        stated = self.c.snapshot.paths_with(fact)
        return [(key, record) for key, record in sorted(self.c.snapshot.by_section.get(section, {}).items())
                if join(section, key) in stated]

    def section_requires(self, section: str, obj: dict[str, Any], where: Path_) -> None:
        """A given section without a key DeepSpeed then needs (compression ``weight_quantization`` without
        ``different_groups``): one error on the missing key, with DeepSpeed's message and the line raising it."""
        for key, record in self.stating(section, "required_with_section"):
            fact = record.required_with_section
            if fact is None or key in obj:
                continue
            self.findings.append(Finding(
                dotted((*where, key)), Severity.ERROR, Kind.REQUIRED_KEY,
                f'"{dotted(where)}" is given without "{key}"; DeepSpeed {self.c.version} raises: '
                f"{fact.get('message', '')}{at_source(fact.get('source'))}",
                f'add "{key}" to "{dotted(where)}"', self.config.line_of(where) or 1))

    def group_entries(self, section: str, obj: dict[str, Any], where: Path_) -> None:
        """The entries of a user-named group DeepSpeed iterates (``different_groups``, handed on whole, so its keys
        are not judged here): only the keys every entry must give are looked for, in the entry and below it."""
        entry = self.c.snapshot.by_section.get(section, {}).get("*")
        if entry is None or not entry.is_section:
            return
        for name, value in obj.items():
            if isinstance(value, dict):
                self.required_below(entry.path, value, (*where, name))

    def required_below(self, section: str, obj: dict[str, Any], where: Path_) -> None:
        self.group_entry(section, obj, where)
        for key, value in obj.items():
            record = self.c.snapshot.by_section.get(section, {}).get(key)
            if record is not None and record.is_section and isinstance(value, dict) and record.path in self.c.sections:
                self.required_below(record.path, value, (*where, key))

    def group_entry(self, section: str, obj: dict[str, Any], where: Path_) -> None:
        """An entry of a user-named group (``different_groups.<name>``) without a key DeepSpeed asserts in every
        entry: one error on the missing key, with DeepSpeed's message and the line that raises it."""
        parts = section.split(".")
        if "*" not in parts or len(where) != len(parts):
            return
        name = str(where[parts.index("*")])
        group = dotted(where[:parts.index("*")])
        for key, record in self.stating(section, "required_in_group"):
            fact = record.required_in_group
            if fact is None or key in obj:
                continue
            at = at_source(fact.get("source"))
            message = str(fact.get("message", "")).replace("<name>", name)
            self.findings.append(Finding(
                dotted((*where, key)), Severity.ERROR, Kind.REQUIRED_KEY,
                f'every entry of "{group}" must give "{key}", which "{name}" lacks; DeepSpeed {self.c.version} '
                f"raises: {message}{at}", f'add "{key}" to "{dotted(where)}"', self.config.line_of(where) or 1))

    def comparisons(self, section: str, obj: dict[str, Any], where: Path_) -> None:
        """Two keys of a section DeepSpeed compares (``schedule_offset <= schedule_offset_end``), each given or
        defaulted, where the key's read conditions hold: one error on the key, with DeepSpeed's message."""
        fields = self.c.snapshot.by_section.get(section, {})
        for key, record in self.stating(section, "compared_with"):
            for fact in record.compared_with:
                other = fields.get(fact["key"])
                if key not in obj:
                    continue  # its default may be the sibling's value (schedule_offset_end's is schedule_offset)
                mine = obj[key]
                theirs = obj.get(fact["key"], other.default if other is not None else None)
                if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (mine, theirs)):
                    continue
                if _COMPARE[fact["op"]](mine, theirs) or not self.conditions_hold(record):
                    continue
                at = at_source(fact.get("source"))
                given = "" if fact["key"] in obj else ", its default"
                self.add((*where, key), Severity.ERROR, Kind.CONSTRAINT,
                         f'"{key}" {_fmt(mine)} must be {fact["op"]} "{fact["key"]}" ({_fmt(theirs)}{given}); '
                         f"DeepSpeed {self.c.version} raises: {fact.get('message')}{at}",
                         f'make "{key}" {fact["op"]} "{fact["key"]}"')

    def conditions_hold(self, record: Field) -> bool:
        """Whether this config meets every test a key is read under (``method == "snip_momentum"``), an absent
        key taken at its default; False where a test cannot be judged."""
        for test in record.conditions:
            path = str(test.get("path", ""))
            if not path or "*" in path.split("."):
                return False
            node = at_path(self.config.data, path, _ABSENT)
            op = test.get("op")
            if op == "present":
                if node is _ABSENT:
                    return False
                continue
            if node is _ABSENT:
                default = self.c.fields.get(path)
                node = default.default if default is not None else None
            if op == "truthy" and not node or op == "==" and node != test.get("value"):
                return False
            if op not in ("truthy", "=="):
                return False
        return True

    def requirements(self, record: Field, value: Any, obj: dict[str, Any], here: Path_) -> None:
        """A value that needs another key of its section (``enabled: true`` ⇒ ``max_tokens``): one error on the
        missing key, at the line of the key that needs it, with DeepSpeed's message and the line that raises it."""
        for requirement in record.requires:
            needed = requirement["key"]
            if needed in obj or not record.requirement_applies(requirement, value):
                continue
            beside = requirement.get("with")
            if isinstance(beside, list) and not any(k in self.config.data for k in beside if isinstance(k, str)):
                continue  # needed only beside top-level keys this config does not set
            source = requirement.get("source") or {}
            where = f", {source.get('file')}:{source.get('line')}" if source.get("file") else ""
            self.requirement_paths.add(record.path)
            self.findings.append(Finding(
                dotted((*here[:-1], needed)), Severity.ERROR, Kind.REQUIRED_KEY,
                f'"{record.key}": {_fmt(value)} requires "{needed}", which is missing; DeepSpeed {self.c.version} '
                f"raises: {requirement.get('message')}{where}", f'add "{needed}" beside "{record.key}"',
                self.config.line_of(here) or 1, (dotted(here),)))

    def unknown(self, section: str, key: str, here: Path_, record: Section) -> None:
        where = f'"{section}"' if section else "the top level"
        mode = record.unknown_keys
        if mode == "ignored" and key.startswith(("_", "//", "#")):
            # "_comment": "..." is the usual way to annotate JSON; where DeepSpeed ignores it, it is harmless.
            self.add(here, Severity.INFO, Kind.UNKNOWN_KEY, f'"{key}" looks like a comment key; DeepSpeed '
                     f"{self.c.version} ignores it here", "")
            return
        if mode == "passed":
            receivers = ", ".join(sorted({r.get("to", "?") for r in record.passed_to})) or "another component"
            known = sorted(k for k in self.c.snapshot.by_section.get(section, {}) if k != "*")
            keys = f", whose keys are {', '.join(known)}" if known else ""
            copied = [r for r in record.passed_to if r.get("kind") == "iterate" and r.get("file")]
            if copied and len(copied) == len(record.passed_to):
                # `for k, v in section.items(): output[k] = v`: every key is kept for the engine to read.
                site = f"{copied[0]['file']}:{copied[0]['line']}"
                self.add(here, Severity.INFO, Kind.UNKNOWN_KEY,
                         f'"{key}" is not read by DeepSpeedConfig itself: every key of {where} is copied into '
                         f"DeepSpeed's config ({site}) for the component that uses it; it may read this key later",
                         self.suggest(section, key, delete=False))
                return
            self.add(here, Severity.INFO, Kind.UNKNOWN_KEY,
                     f'"{key}" is not read by DeepSpeedConfig: {where} is passed on whole to {receivers}{keys}; '
                     "it may read this key later", self.suggest(section, key, delete=False))
            return
        if mode == "error":
            severity = Severity.ERROR
            consequence = f"DeepSpeed {self.c.version} raises (extra inputs are not permitted)"
        elif mode == "kept":
            severity, consequence = Severity.WARNING, "DeepSpeed keeps it but never reads it"
        else:
            severity, consequence = Severity.WARNING, f"silently ignored by DeepSpeed {self.c.version}"
        self.suggestions_left -= 1
        fix = self.suggest(section, key) if self.suggestions_left >= 0 else (
            f"remove it or fix its spelling (no suggestions after {SUGGESTION_BUDGET} unknown keys)")
        note = self.c.departure_note(join(section, key)) if self.suggestions_left >= 0 else ""
        later = self.c.arrival(join(section, key)) if not note and self.suggestions_left >= 0 else None
        if later is not None:  # a key of a later release, not a typo: upgrading is the other fix
            note = f" (added in DeepSpeed {later})"
            fix = f"upgrade to DeepSpeed >= {later}, or remove it"
        self.add(here, severity, Kind.UNKNOWN_KEY, f'"{key}" is not a key of {where}{note}: {consequence}', fix)

    def suggest(self, section: str, key: str, delete: bool = True) -> str:
        import difflib  # only when suggesting: keeps start-up lean

        snapshot = self.c.snapshot
        own = list(snapshot.by_section.get(section, {})) + list(snapshot.by_python_name.get(section, {}))
        if section in self.c.catalogs:
            own.append(self.c.catalogs[section].params_key)
        lowered = {k.lower(): k for k in own}
        if key.lower() in lowered:
            return f'did you mean "{lowered[key.lower()]}"? (keys are case-sensitive)'
        if key.strip() in own:
            return f'remove the whitespace: "{key.strip()}"'
        reordered = same_words(key, own)
        if reordered is not None:
            return f'did you mean "{reordered}"? (the same words in another order or split)'
        moved = same_words(key, self.c.key_spellings())
        if moved is not None:  # the same words, a key of another section (comm_overlap at the top level)
            target = self.c.fields[snapshot.by_key[moved][0]].section
            place = f'"{target}"' if target else "the top level"
            return f'did you mean "{moved}"? (the same words in another order or split; it belongs in {place})'
        close = difflib.get_close_matches(key, own, n=2, cutoff=0.75)
        elsewhere = sorted(p for p in snapshot.by_key.get(key, []) if self.c.fields[p].section != section)
        if close and not elsewhere:
            return f'did you mean "{close[0]}"?' + (f' or "{close[1]}"?' if len(close) > 1 else "")
        if elsewhere:
            target = self.c.fields[elsewhere[0]].section
            place = f'"{target}"' if target else "the top level"
            also = f' (or did you mean "{close[0]}"?)' if close else ""
            there = at_path(self.config.data, target) if target else self.config.data
            if isinstance(there, dict) and key in there:  # moving it would write the key twice
                return f'"{key}" belongs in {place}, which already sets it: delete it here{also}'
            return f'"{key}" belongs in {place}: move it there{also}'
        everywhere = difflib.get_close_matches(key, list(snapshot.by_key), n=1, cutoff=0.85)
        if everywhere:
            return f'did you mean "{snapshot.by_key[everywhere[0]][0]}"?'
        if not delete:
            return ""
        return f'remove it (no DeepSpeed {self.c.version} key is named like it)'

    def deprecated(self, section: str, key: str, obj: dict[str, Any], record: Field, here: Path_) -> None:
        info = record.deprecated
        assert info is not None
        snapshot = self.c.snapshot
        new = info.new_param
        message = f'"{key}" is deprecated' + (f'; use "{snapshot.spelling(section, new)}" instead' if new else "")
        if info.message:
            message += f" ({info.message})"
        if new and info.set_new_param:
            replacement = snapshot.field_by_name(section, new)
            if "." in new:  # a path below this section (inference: mp_size -> tensor_parallel.tp_size)
                node: Any = obj
                below = section
                for part in new.split("."):
                    step = snapshot.field_by_name(below, part)
                    names = [part] + ([step.key, *(step.raw.get("aliases") or ())] if step else [])
                    written = next((n for n in names if isinstance(node, dict) and n in node), None)
                    node = node[written] if written is not None else _ABSENT
                    below = step.path if step else join(below, part)
                given = [new] if node is not _ABSENT else []
            else:
                spellings = {new} | ({replacement.key} if replacement else set())
                given = sorted(s for s in spellings if s in obj)
            if given and not record.is_pydantic:
                return  # a legacy dict-read alias (bfloat16): DeepSpeed reads only the replacement; a rule warns
            if given:
                self.add(here, Severity.ERROR, Kind.DEPRECATED_KEY,
                         f'"{key}" (deprecated) and its replacement "{given[0]}" are both set; DeepSpeed asserts '
                         "they are not given together", f'delete "{key}"', related=(join(section, given[0]),))
                return
        fix = f'rename to "{snapshot.spelling(section, new)}"' if new and " " not in new else f'delete "{key}"'
        if info.converts_value:
            fix += " (the value's form changes: check its documentation)"
        self.add(here, Severity.WARNING, Kind.DEPRECATED_KEY, message, fix)

    # ------------------------------------------------------------ values

    def value(self, record: Field, value: Any, here: Path_) -> None:
        path = record.path
        if isinstance(value, str) and value == "auto":
            self.auto(record, here)
            return
        if self.switched_off(record, here):
            self.declared_value(record, value, here)  # the verdicts hold with the feature on; its type still does
            return
        if not value and not record.is_pydantic and not record.is_section and record.refuses_falsy:
            # `assert self.results_dir`: the probes show every false or empty value refused with one message.
            self.add(here, Severity.ERROR, Kind.RUNTIME,
                     f"DeepSpeed {self.c.version} refuses a false or empty value here ({record.refuses_falsy})",
                     "give a non-empty value" + (f", e.g. the default {_fmt(record.default)}" if record.default
                                                 else ""))
            return
        shape = json_type(value)
        alternative = next((a for a in record.alternatives if a.get("json_type") == shape), None)
        if alternative is not None:
            self.add(here, Severity.INFO, Kind.COERCED,
                     f"{path}: {_fmt(value)} is an older form DeepSpeed {self.c.version} still accepts "
                     f"({alternative.get('means')})", f'write "{record.key}": {{ ... }} as the documentation does')
            return
        item = self.item_refused(record, value)
        if item is not None:
            self.add(here, Severity.ERROR, Kind.RUNTIME,
                     f"DeepSpeed {self.c.version} rejects {_fmt(value)} here (its item {_fmt(item[0])}, probed with "
                     f"[{item[1]}]: {record.item_probes[item[1]].get('error')})",
                     "give positive integers" if item[1] in ("-1", "0") else self._type_fix(record))
            return
        probe = record.probe_for(value)
        if probe is None and isinstance(value, str) and not record.choices:
            probe = self.string_refused(record)
        mark = len(self.findings)
        self.declared_value(record, value, here)
        if probe is None or probe[1].get("ok"):
            return
        if any(f.severity is Severity.ERROR for f in self.findings[mark:]):
            return  # the declared type or constraint already says why (its message names the rule)
        if any(str(probe[1].get("error")) == fact.get("message") for fact in record.compared_with):
            return  # measured against the sibling's default: the comparison judges the pair (comparisons())
        if self.wants_a_key_given(str(probe[1].get("error", "")), here):
            return  # the probe lacked a key this config has: its refusal says nothing about this value
        if record.is_pydantic and not str(probe[1].get("error", "")).startswith("ValidationError"):
            # Raised by DeepSpeedConfig outside the section's model, for this value set alone on
            # {"train_batch_size": 1}: a check across sections (fp16_master_weights_and_grads needs
            # ZeRO), which depends on the rest of the config; the cross-key rules judge that.
            return
        del self.findings[mark:]  # a warning such as "coerced to 1" would contradict DeepSpeed's verdict
        self.add(here, Severity.ERROR, Kind.WRONG_TYPE if record.is_pydantic else Kind.RUNTIME,
                 f"DeepSpeed {self.c.version} rejects {_fmt(value)} here (probed with {probe[0]}: "
                 f"{probe[1].get('error')})", self._type_fix(record))

    def switched_off(self, record: Field, here: Path_) -> bool:
        """Whether ``record``'s verdicts were probed with its section's switch on and this config leaves it off:
        ``elasticity.ignore_non_elastic_batch_info: false`` is refused beside batch keys only while elasticity
        is enabled; with it off DeepSpeed never looks at the value."""
        switch = record.switched_on or self.c.snapshot.probed_switched_on.get(record.path)
        if switch is None:
            return False
        node: Any = self.config.data
        for part in here[:-1]:
            node = node.get(part) if isinstance(node, dict) else None
        return not (isinstance(node, dict) and node.get(switch))

    @staticmethod
    def item_refused(record: Field, value: Any) -> tuple[Any, str] | None:
        """The first item of a list that the one-item list probes show refused (``micro_batch_sizes: [0, 2]``:
        ``[0]`` refused), with the probe standing for it; None otherwise or where the items were not probed."""
        probes = record.item_probes
        if not probes or not isinstance(value, list):
            return None
        for item in value:
            if isinstance(item, bool) or not isinstance(item, (int, float)) or item > 0:
                continue
            pid = "0" if item == 0 else "-1"
            if pid in probes and not probes[pid].get("ok"):
                return item, pid
        return None

    @staticmethod
    def string_refused(record: Field) -> tuple[str, dict[str, Any]] | None:
        """The verdict standing for a word no probe stands for (``"sometimes"``), where DeepSpeed refuses every
        string but "auto" with one message (zenflow ``select_interval``: 'If select_interval is a string, it
        must be "auto"'): both string probes refused alike, "auto" accepted. None otherwise."""
        probes = record.probes
        one, word, auto = probes.get('"1"'), probes.get('"false"'), probes.get('"auto"')
        if not (one and word and auto) or not auto.get("ok") or one.get("ok") or word.get("ok"):
            return None
        return ('"false"', word) if one.get("error") == word.get("error") else None

    def wants_a_key_given(self, error: str, here: Path_) -> bool:
        """Whether a probe's refusal names another key this config sets in the field's own section tree.

        A probe sets one key alone on a neutral base: where DeepSpeed refused it for want of another key
        (0.14.4 compression_training: "KeyError: 'different_groups'", "... different_groups must be
        specified" for every probed value), the verdict is about that key, not about this value, in a
        config that gives it. Top-level keys are not looked at (the batch arithmetic names them).
        """
        import re  # only where a probe refused the value: re is kept off check's start-up

        names: set[str] = set()
        node: Any = self.config.data
        for part in here[:-1]:
            node = node.get(part) if isinstance(node, dict) else None
            if isinstance(node, dict):
                names.update(k for k in node if isinstance(k, str) and len(k) > 3)
        names.difference_update(p for p in here if isinstance(p, str))
        return any(re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", error) for name in names)

    @staticmethod
    def converted_by_a_validator(record: Field, value: Any) -> tuple[str, Any] | None:
        """A probe and its stored value when every probe of ``value``'s JSON type was accepted, each stored as a
        one-item list of itself, although the declared type refuses that type: a before-validator wraps it
        (leaf_module's str -> [str]). Only that shape change: a lax boolean such as "maybe" is no such case."""
        shape = json_type(value)
        same = [(pid, v) for pid, v in record.probes.items() if _PROBE_TYPES.get(pid) == shape]
        if not same or not all(v.get("ok") and v.get("as") == [json.loads(pid)] for pid, v in same):
            return None
        pid, verdict = same[0]
        return pid, verdict["as"]

    def refusals_name_a_sibling(self, record: Field) -> bool:
        siblings = [k for k in self.c.snapshot.by_section.get(record.section, {}) if k not in (record.key, "*")]
        if not siblings:
            return False
        for verdict in record.probes.values():
            error = str(verdict.get("error") or "")
            if not verdict.get("ok") and error and any(_names_word(error, k) for k in siblings):
                return True
        return False

    def declared_value(self, record: Field, value: Any, here: Path_) -> None:
        """What the declared types, choices and constraints say about ``value`` (the probes come after)."""
        path = record.path
        types = record.json_types
        if record.is_section and path in self.c.sections and not isinstance(value, dict):
            if value is None and ("null" in types or record.is_pydantic and not types):
                return
            if record.is_pydantic and json_type(value) in types and value is not None:
                return  # a declared other form (inference moe: Union[bool, DeepSpeedMoEConfig]): the probes judge it
            self.add(here, Severity.ERROR, Kind.WRONG_TYPE, f"{path} is a section: it must be an object, "
                     f"got {json_type(value)}", f'write "{record.key}": {{ ... }}')
            return
        if record.is_pydantic:
            ok, coerced, exact = accepts(types, value)
            converted = self.converted_by_a_validator(record, value) if not ok else None
            if converted is not None:
                pid, stored = converted
                self.add(here, Severity.INFO, Kind.COERCED,
                         f"{json_type(value)} {_fmt(value)} where {' or '.join(types)} ({record.type}) is declared: a "
                         f"validator of DeepSpeed {self.c.version} converts it (the probe {pid} was stored as "
                         f"{_fmt(stored)})", "write the converted form as the documentation does")
                return
            if not ok:
                self.add(here, Severity.ERROR, Kind.WRONG_TYPE,
                         f"expected {' or '.join(types)} ({record.type}), got {json_type(value)} {_fmt(value)}; "
                         "DeepSpeed's validation rejects it", self._type_fix(record))
                return
            if not exact:
                self.add(here, Severity.WARNING, Kind.COERCED,
                         f"{json_type(value)} {_fmt(value)} where {' or '.join(types)} is expected; pydantic coerces "
                         f"it to {_fmt(coerced)}", f"write {_fmt(coerced)}")
        else:
            if not self.dict_value(record, value, here):
                return
            coerced = value
        self.choices(record, value, coerced, here)
        self.constraints(record, coerced, here)

    def dict_value(self, record: Field, value: Any, here: Path_) -> bool:
        """Dict-read keys are not validated by DeepSpeed: the raw value is used as is, later."""
        types = record.used_as
        if not record.requires and self.refusals_name_a_sibling(record):
            # A snapshot made before requirements were facts: its probes set the key alone, and DeepSpeed refused
            # for want of another key, so the accepted types say nothing about this value.
            return True
        if record.truthiness and isinstance(value, str) and value:
            self.add(here, Severity.WARNING, Kind.WRONG_TYPE,
                     f"the string {_fmt(value)}: DeepSpeed {self.c.version} tests this key's truth unvalidated, so any "
                     'non-empty string counts as true ("false" switches it on)', "write true or false without quotes")
            return False
        if not types:
            return True
        if value is None:
            self.add(here, Severity.WARNING, Kind.WRONG_TYPE,
                     f"null is passed on as None (the default {_fmt(record.default)} is not used)",
                     "remove the key to get the default")
            return False
        actual = json_type(value)
        if actual == "string" and not self.converts(record, value, here):
            return False
        if actual in types or (actual == "integer" and "number" in types):
            return True
        if record.used_as_guessed:
            # Only the default says this is a number: a boolean is one to Python, anything else breaks
            # the arithmetic that uses it, after deepspeed.initialize has returned.
            if actual == "boolean":
                self.add(here, Severity.WARNING, Kind.WRONG_TYPE,
                         f"{_fmt(value)} where a number is used (default {_fmt(record.default)}): DeepSpeed reads this "
                         f"key unvalidated and Python counts {_fmt(value)} as {int(value)}", f"write {int(value)}")
            else:
                self.add(here, Severity.ERROR, Kind.WRONG_TYPE,
                         f"{actual} {_fmt(value)} where a number is used (default {_fmt(record.default)}): "
                         "DeepSpeedConfig does not validate this key, so the run fails later, where DeepSpeed "
                         "computes with it", f"write a number, e.g. the default {_fmt(record.default)}")
            return False
        if actual == "number" and "integer" in types:
            if float(value).is_integer():
                return True
            self.add(here, Severity.ERROR, Kind.WRONG_TYPE, f"expected an integer, got {_fmt(value)}",
                     self._type_fix(record))
            return False
        if "boolean" in types and actual == "integer" and value in (0, 1):
            self.add(here, Severity.WARNING, Kind.WRONG_TYPE,
                     f"{value} where a boolean is expected (DeepSpeed reads this key unvalidated; it tests its truth)",
                     f"write {'true' if value else 'false'}")
            return False
        if set(types) & {"integer", "number"} and not isinstance(record.default, bool):
            # A boolean "works" where a number is read (Python counts True as 1): the probes record it, but
            # saying "a boolean is expected" of a number key would contradict the batch and range messages.
            types = [t for t in types if t != "boolean"]
        elif "boolean" in types and isinstance(value, str):
            # Unvalidated: "false" is a true string here, and some readers combine it with `|` and crash.
            self.add(here, Severity.ERROR, Kind.WRONG_TYPE,
                     f"the string {_fmt(value)} where a boolean is expected: DeepSpeed reads this key unvalidated "
                     "(any non-empty string counts as true)", "write true or false without quotes")
            return False
        self.add(here, Severity.ERROR, Kind.WRONG_TYPE,
                 f"expected {' or '.join(types)}, got {actual} {_fmt(value)}; DeepSpeed uses it unvalidated",
                 self._type_fix(record))
        return False

    def converts(self, record: Field, value: str, here: Path_) -> bool:
        """Whether DeepSpeed's number conversion of this key takes the string ``value``: where its probes show
        a numeric string accepted and another string refused by ``int()`` or ``float()`` (the key is read with
        ``int(d.get(...))``), a string is judged by that conversion, not taken as fine for being a string."""
        convert = string_conversion(record)
        if convert is None:
            return True
        try:
            convert(value)
        except ValueError as error:
            self.add(here, Severity.ERROR, Kind.WRONG_TYPE,
                     f"the string {_fmt(value)}: DeepSpeed {self.c.version} converts this key with "
                     f"{convert.__name__}(), which raises ValueError: {error}{at_source(record.raw.get('source'))}",
                     f"write a number without quotes, e.g. the default {_fmt(record.default)}"
                     if record.default is not None else "write a number without quotes")
            return False
        return True

    def _type_fix(self, record: Field) -> str:
        default = record.default
        if record.choices:
            return "use one of: " + ", ".join(_fmt(c) for c in record.choices)
        used = record.used_as or ["value"]
        if set(used) & {"integer", "number"} and not isinstance(default, bool):
            used = [t for t in used if t != "boolean"]  # as in dict_value: a number key, though True counts as 1
        wanted = " or ".join(used)
        article = "an" if wanted[0] in "aeiou" else "a"
        if default is not None:
            return f"write {article} {wanted}, e.g. the default {_fmt(default)}"
        return f"write {article} {wanted}"

    def choices(self, record: Field, raw: Any, coerced: Any, here: Path_) -> None:
        choices = record.choices
        if not choices or record.choices_source and not self.conditions_hold(record):
            return  # a class DeepSpeed builds only when the section is on (CurriculumScheduler, curriculum enabled)
        items = coerced if isinstance(coerced, list) and "array" in record.json_types else [coerced]
        fold = {"lower": str.lower, "upper": str.upper}.get(record.choices_normalized or "")
        for item in items:
            if fold is not None and isinstance(item, str) and fold(item) in choices:
                continue
            if item is None or any(item == c and type(item) is not bool for c in choices) or (
                    isinstance(item, bool) and int(item) in choices and bool not in map(type, choices)):
                continue
            built = record.choices_source
            when = (f"; DeepSpeed {self.c.version} raises when it builds {built.get('built')}: {built.get('message')} "
                    f"({built.get('file')}:{built.get('line')})") if built else ""
            self.add(here, Severity.ERROR, Kind.CHOICE,
                     f"{_fmt(item)} is not one of {', '.join(_fmt(c) for c in choices)}{when}",
                     f"use one of: {', '.join(_fmt(c) for c in choices)}" + self._close_choice(item, choices))
            return

    @staticmethod
    def _close_choice(item: Any, choices: list[Any]) -> str:
        import difflib  # only when suggesting: keeps start-up lean

        if not isinstance(item, str):
            return ""
        close = difflib.get_close_matches(item.lower(), [str(c).lower() for c in choices], n=1, cutoff=0.5)
        return f' (did you mean "{close[0]}"?)' if close else ""

    def constraints(self, record: Field, value: Any, here: Path_) -> None:
        limits = record.constraints
        if not limits:
            return
        words = {"gt": ">", "ge": ">=", "lt": "<", "le": "<="}
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            for name, op in words.items():
                if name in limits and limits[name] is not None and not _COMPARE[op](value, limits[name]):
                    self.add(here, Severity.ERROR, Kind.CONSTRAINT,
                             f"{_fmt(value)} is out of range: DeepSpeed requires {words[name]} {_fmt(limits[name])}",
                             f"use a value {words[name]} {_fmt(limits[name])}"
                             + (f" (default {_fmt(record.default)})" if record.default is not None else ""))
                    return
            step = limits.get("multiple_of")
            if step and value % step:
                self.add(here, Severity.ERROR, Kind.CONSTRAINT, f"{_fmt(value)} is not a multiple of {step}",
                         f"use a multiple of {step}")
        if isinstance(value, (str, list)):
            if "min_length" in limits and len(value) < limits["min_length"]:
                self.add(here, Severity.ERROR, Kind.CONSTRAINT, f"shorter than {limits['min_length']}",
                         "give a longer value")
            if "max_length" in limits and len(value) > limits["max_length"]:
                self.add(here, Severity.ERROR, Kind.CONSTRAINT, f"longer than {limits['max_length']}",
                         "give a shorter value")
        if isinstance(value, str) and limits.get("pattern") and not _search(limits["pattern"], value):
            self.add(here, Severity.ERROR, Kind.CONSTRAINT, f"does not match {limits['pattern']}", "fix the value")

    # ------------------------------------------------------------ "auto"

    def auto(self, record: Field, here: Path_) -> None:
        path = record.path
        if path in self.hf_filled:
            return
        behaviour = record.auto
        hf_note = ""
        if self.options.hf and self.c.hf_fills is not None:
            hf_note = f" (the HF Trainer of transformers {self.c.hf_version} does not fill this key)"
        default = self._default_text(record)
        if behaviour is None:
            self.add(here, Severity.ERROR, Kind.AUTO, f'"auto" where a section (object) is expected{hf_note}',
                     f'write "{record.key}": {{ ... }}')
        elif not behaviour.accepted:
            reason = behaviour.error or "it fails"
            self.add(here, Severity.ERROR, Kind.AUTO, f'DeepSpeed alone rejects "auto" here ({reason}){hf_note}',
                     f"write a value (default {default})" if default != "none" else "write a value")
        elif behaviour.becomes == "default":
            self.add(here, Severity.WARNING, Kind.AUTO,
                     f'DeepSpeed drops "auto" here and uses the default {default}{hf_note}',
                     f"write the value you want, or delete the key to get {default}")
        else:
            types = record.used_as
            probe = record.probes.get('"auto"')
            if not record.is_pydantic and isinstance(record.default, bool) and (probe is None or probe.get("ok")):
                self.add(here, Severity.WARNING, Kind.AUTO,
                         f'DeepSpeed keeps the literal string "auto" here, unvalidated: a non-empty string counts as '
                         f"true, so this switches it on{hf_note}", "write true or false")
            elif not types or "string" in types:
                self.add(here, Severity.WARNING, Kind.AUTO,
                         f'DeepSpeed keeps the literal string "auto" here (no special meaning){hf_note}',
                         f"write the value you want (default {default})")
            else:
                self.add(here, Severity.ERROR, Kind.AUTO,
                         f'DeepSpeed stores the string "auto" where {" or ".join(types)} is expected and fails when '
                         f"it uses it{hf_note}", f"write a value (default {default})")

    def _default_text(self, record: Field) -> str:
        stage = View(self.config.data, self.c.snapshot, self.hf_filled).zero_stage()
        return default_in_context(record, stage)

    # ------------------------------------------------------------ optimizer / scheduler

    def optimizers(self) -> None:
        if not self.c.catalogs:
            for section in ("optimizer", "scheduler"):
                if isinstance(self.config.data.get(section), dict) and "params" in self.config.data[section]:
                    self.add((section,), Severity.INFO, Kind.LIMITATION,
                             f"the {self.c.version} snapshot has no optimizer/scheduler catalog: params not checked",
                             "re-extract the snapshot with this dsfields")
            return
        for section, catalog in sorted(self.c.catalogs.items()):
            block = self.config.data.get(section)
            if isinstance(block, dict):
                self.one_optimizer(section, block, catalog)

    def one_optimizer(self, section: str, block: dict[str, Any], catalog: Catalog) -> None:
        kind = Kind.OPTIMIZER if catalog.label == "optimizer" else Kind.SCHEDULER
        type_key, params_key = catalog.type_key, catalog.params_key
        name = block.get(type_key)
        params = block.get(params_key)
        names = catalog.names
        if name is None:
            if params is not None:
                self.add((section, params_key), Severity.WARNING, kind,
                         f"{section}.{params_key} is ignored: DeepSpeed reads it only with {section}.{type_key}",
                         f'add "{type_key}", or delete "{params_key}"')
            return
        if not isinstance(name, str):
            self.add((section, type_key), Severity.ERROR, kind, f"{section}.{type_key} must be a string, got "
                     f"{json_type(name)}", f"name a {catalog.label}")
            return
        entry = names.get(name)
        if entry is None and name.lower() in names and names[name.lower()].case_insensitive:
            entry = names[name.lower()]
        if entry is None:
            import difflib  # only when suggesting: keeps start-up lean

            gone = self.c.removed_name(section, name)
            if gone is not None:
                removed_in, last = gone
                self.add((section, type_key), Severity.ERROR, kind,
                         f'{catalog.label} "{name}" is unknown to DeepSpeed {self.c.version}: removed in DeepSpeed '
                         f"{removed_in} (last in {last}); deepspeed.initialize fails",
                         f"use DeepSpeed {last} or older, or another {catalog.label} "
                         f"(`dsfields lookup {section}` lists those of {self.c.version})")
                return
            lower = {n.lower(): n for n in names}
            close = difflib.get_close_matches(name.lower(), list(lower), n=3, cutoff=0.6)
            hint = f'did you mean "{lower[close[0]]}"?' if close else f"see `dsfields lookup {section}`"
            where = " or ".join(catalog.fallback_modules)
            self.add((section, type_key), Severity.ERROR, kind,
                     f'{catalog.label} "{name}" is unknown to DeepSpeed {self.c.version} (neither its own nor in '
                     f"{where}); deepspeed.initialize fails", hint)
            return
        if params is None:
            return  # "params" absent: the scheduler rule reports it where the engine needs it
        if not isinstance(params, dict):
            self.add((section, params_key), Severity.ERROR, kind, f"{section}.{params_key} must be an object",
                     f'write "{params_key}": {{ ... }}')
            return
        self.params(section, name, entry, params, catalog, kind)

    def params(self, section: str, name: str, entry: CatalogEntry, params: dict[str, Any],
               catalog: Catalog, kind: Kind) -> None:
        params_key = catalog.params_key
        classes = entry.classes
        importable = [c for c in classes if c.importable and c.params is not None]
        class_names = " / ".join(c.name.rsplit(".", 1)[-1] for c in importable) or name
        open_ended = any(c.var_keyword for c in importable)
        accepted: dict[str, CatalogParam] = {}
        for cls in importable:
            accepted.update(cls.params or {})
        consumed = set(entry.engine_params)
        checkable = entry.params_passed and importable and len(importable) == len(classes) and not open_ended
        if not entry.params_passed:
            self.add((section, params_key), Severity.INFO, Kind.LIMITATION,
                     f"{name}: the engine builds this {catalog.label}'s arguments itself; params not checked", "")
        elif classes and not importable:
            missing = ", ".join(c.name for c in classes)
            self.add((section, params_key), Severity.INFO, Kind.LIMITATION,
                     f"{missing} was not importable at extraction; params not checked", "")
        for key, value in params.items():
            here = (section, params_key, key)
            path = f"{section}.{params_key}.{key}"
            rejected = catalog.rejected_params
            if key in rejected:
                self.add(here, Severity.ERROR, kind, f"DeepSpeed raises: {rejected[key]}",
                         f'delete "{key}"' + (' and use "gradient_clipping"' if "gradient_clipping" in
                                              rejected[key] else ""))
                continue
            if isinstance(value, str) and value == "auto" and path not in self.hf_filled:
                note = " (the HF Trainer does not fill it)" if self.options.hf else ""
                self.add(here, Severity.ERROR, Kind.AUTO,
                         f'"auto" is passed to {class_names} as the string "auto"{note}',
                         f"write a value (default {_fmt(accepted[key].default if key in accepted else None)})")
            if not checkable or key in accepted or key in consumed:
                continue
            self.add(here, Severity.ERROR, kind,
                     f'"{key}" is not a parameter of {class_names}: deepspeed.initialize fails with TypeError',
                     self._param_hint(key, name, accepted, catalog))
        if checkable:
            for key in sorted(accepted):
                if all(key in (c.params or {}) and (c.params or {})[key].required for c in importable) and (
                        key not in params and key not in consumed):
                    self.add((section, params_key), Severity.ERROR, kind,
                             f'{class_names} requires "{key}", which {section}.{params_key} does not give',
                             f'add "{key}"' + (' (or "auto" with the HF Trainer)'
                                               if f"{section}.{params_key}.{key}" in (self.c.hf_fills or {}) else ""))

    def _param_hint(self, key: str, name: str, accepted: dict[str, CatalogParam], catalog: Catalog) -> str:
        import difflib  # only when suggesting: keeps start-up lean

        # A parameter the class takes but DeepSpeed refuses (Lamb's max_grad_norm) is not offered as accepted.
        accepted = {k: v for k, v in accepted.items() if k not in catalog.rejected_params}
        close = difflib.get_close_matches(key, list(accepted), n=1, cutoff=0.7)
        takers = sorted(n for n, e in catalog.names.items() if n != name and any(
            key in (c.params or {}) for c in e.classes))
        preferred = [t for t in takers if catalog.names[t].origin == "deepspeed"] or takers
        elsewhere = f'"{key}" is a parameter of {", ".join(preferred[:3])}, not {name}' if preferred else ""
        if close:
            return f'did you mean "{close[0]}"?' + (f" ({elsewhere})" if elsewhere else "")
        if elsewhere:
            return f"delete it, or switch the type: {elsewhere}"
        return f'delete it; {name} takes: {", ".join(sorted(accepted)) or "no keyword parameters"}'

    # ------------------------------------------------------------ cross-field rules

    def rules(self) -> None:
        view = View(self.config.data, self.c.snapshot, self.hf_filled)
        if self.options.hf and self.options.world_size and isinstance(self.config.data, dict):
            from dsfields.hf.trainer import hf_insertions

            view.inserted = hf_insertions(self.config.data, self.options.hf_pair, self.options.world_size)
        for rule, violation in evaluate(view, self.options.world_size):
            if violation.paths[0] in self.requirement_paths:
                continue  # the snapshot's requirement fact said it, on the missing key
            severity = Severity(violation.severity)
            first, *rest = violation.paths
            self.add(first, severity, Kind.RULE, violation.message, violation.fix, related=tuple(rest), rule=rule.id)


def check_file(path: Path, checker: Checker, options: Options) -> FileReport:
    try:
        config = load(path, "hf" if options.hf else "deepspeed")
    except ConfigFileError as exc:
        return FileReport(str(path), error=str(exc))
    return FileReport(str(path), checker.check(config, options), config=config)


def check_text(text: str, checker: Checker, options: Options, name: str = "<config>") -> FileReport:
    try:
        config = parse(text, name, "hf" if options.hf else "deepspeed")
    except ConfigFileError as exc:
        return FileReport(name, error=str(exc))
    return FileReport(name, checker.check(config, options), config=config)


def _search(pattern: str, value: str) -> bool:
    import re  # a pattern constraint is rare: keeps start-up lean

    return re.search(pattern, value) is not None
