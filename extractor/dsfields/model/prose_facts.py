"""Our prose checked against one release's facts: what a text shown for a release claims that the release contradicts.

Prose is written by us (``dsfields/prose``), the facts are extracted (``generated/<version>/``). A sentence
written while reading the newest release easily ends up on an older release's page, where it names a key
the release lacks ("ZenFlow"), a default it does not have ("DeepSpeed clips by default" where the default
is 0.0) or a later release ("In 0.19.8 ..."). :func:`contradictions` finds those claims in one rendered
text; ``tests/test_prose_facts.py`` runs it over every field of every release in both languages.

What counts as a claim is deliberately narrow, so that a finding is a real contradiction:

- a release number later than the release shown;
- a key: a backticked dotted path, or a snake_case name, that some release has as a JSON path or key
  name and the release shown has nowhere (fields, sections, removed keys);
- a feature: a CamelCase or capitalised word whose spelling without case, ``_`` and ``-`` is a section,
  key or optimizer/scheduler type of some release, and of none in the release shown (``ZenFlow`` is
  ``zenflow``, ``Muon`` is the ``muon`` optimizer);
- the field's own default, where a sentence about no other key says "defaults to X" / "default X" /
  "默认为 X", or "by default" / "默认" of clipping with a non-zero default;
- an identifier (issue 39): a class, function, constant, optimizer/scheduler type or model name, spelled as
  code (backticked, CamelCase, ``snake_case``, ``UPPER_CASE``, ``name()``), that some release's snapshot
  records in one of its identifier slots (:func:`identifiers_of`) and the release shown records nowhere
  (``DeepSpeedCPULion`` before 0.11.0, ``get_bfloat16_config`` before 0.17.1, ``WarmupCosineLR``);
- a name of the release's source (issue 39, continued; :mod:`dsfields.model.source_names`): a function, class or
  module spelled as code that some release's source defines and the release shown does not
  (``_configure_master_weights`` before 0.18.3, ``deepspeed/checkpoint/ds_to_universal.py`` before 0.11.2), a
  CamelCase feature word that begins no name of the release shown but names of another (``AutoEP``:
  ``AutoEPConfig``), and a ``deepspeed.`` dotted name whose module the release has but which that module does not
  define (``deepspeed.comm.start_profiling_op``, a method of the comms logger, never a function of the module).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from dsfields.model import chinese, source_names
from dsfields.model.prose import own_type, release_key

RELEASE = re.compile(r"(?<![\w.])(0\.\d+\.\d+)(?![\w]|\.\d)")
"""A DeepSpeed release number (0.x.y; other packages' versions, such as comet_ml 3.41.0, are not claims)."""
PRODUCT = "deepspeed"
"""The project's own name is no feature (a key somewhere is called ``deepspeed``)."""
BACKTICKED = re.compile(r"`([^`]+)`")
IDENT = re.compile(r"[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z0-9_*]+)*")
CODE_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_*]+)*")
"""A dotted name as code spells it: a private name (``_configure_master_weights``) keeps its underscore."""
WORD = re.compile(r"(?<![\w`.])([A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)*)(?![\w`])")
CAMEL = re.compile(r"[a-z][A-Z]")
CAPITALISED = re.compile(r"^[A-Z][a-z0-9]+$")
NUMBER = r"-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
VALUE = rf"(?:{NUMBER}|true|false|null|None|True|False)"
DEFAULT_CLAIMS = (
    re.compile(rf"\bdefaults? (?:to|is|of) `?({VALUE})`?(?![\w]|\.\d)"),
    re.compile(rf"\(default `?({VALUE})`?\)"),
    re.compile(chinese.text("model.prose_facts.default_claim", VALUE=VALUE)),
)
WORD_DEFAULT = re.compile(r"\bdefaults to `?([A-Za-z][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*)`?(?![\w]|\.\d)")
"""A string default named in words ("defaults to fp32"): checked where the field's default is a string."""
OTHER_DEFAULT = re.compile(rf"\bdefault (?:of )?`?([a-z][a-z0-9_]*(?:\.[a-z0-9_]+)*)`? is `?({VALUE})`?(?![\w]|\.\d)")
"""Another key's default ("the default gradient_clipping is 1.0"), checked against that key in the release."""
NONZERO_CLAIMS = (re.compile(r"\bnon-zero default\b"),
                  re.compile(chinese.text("model.prose_facts.nonzero_default_claim")))
BOOLEANS_REFUSED = (re.compile(r"\bbooleans (?:are|get) rejected\b", re.IGNORECASE),
                    re.compile(chinese.text("model.prose_facts.booleans_refused_claim")))
"""A claim that the key refuses ``true``/``false``: checked against the release's value probe of ``true``."""
SENTENCE = re.compile("(?<=[.;:。；!?！？])\\s+|\\n+")
MODULE_FILE = re.compile(r"^deepspeed(?:/\w+)+\.py$")
"""A module of DeepSpeed named by its file (``deepspeed/checkpoint/ds_to_universal.py``)."""
UNKNOWN = object()


CODE_WORD = re.compile(r"(?<![\w.`])([A-Za-z_][A-Za-z0-9_]*)(?![\w`])")
UPPER = re.compile(r"^[A-Z][A-Z0-9]*_[A-Z0-9_]+$")


def _split(dotted: Any) -> list[str]:
    """The parts of a dotted Python name (``deepspeed.ops.lion.DeepSpeedCPULion``) or a key path."""
    return [part for part in str(dotted).split(".") if part and part != "*"] if dotted else []


def identifiers_of(snapshot: dict[str, Any]) -> set[str]:
    """Every identifier one release's snapshot records in a slot that names code: key names and Python names,
    section model classes, reader functions, constants and their default names, removal tables, string choices,
    optimizer/scheduler types, their classes (every part of the dotted name) and parameters, enum names. Words of
    docstrings and messages are not identifiers: a release does not have a class because a message names it."""
    out: set[str] = set()

    def source(record: Any) -> None:
        if isinstance(record, dict):
            out.update(_split(record.get("function")))
            out.update(_split(record.get("table")))

    for path, record in (snapshot.get("fields") or {}).items():
        out.update(_split(path))
        if not isinstance(record, dict):
            continue
        out.update(_split(record.get("python_name")))
        source(record.get("source"))
        constant = record.get("constant")
        if isinstance(constant, dict):
            out.update(_split(constant.get("name")))
            out.update(_split(constant.get("default_name")))
        for choice in record.get("choices") or []:
            if isinstance(choice, str):
                out.add(choice)
        out.update(_split(record.get("enum")))
    for path, record in (snapshot.get("sections") or {}).items():
        out.update(_split(path))
        if isinstance(record, dict):
            out.update(_split(record.get("model")))
            source(record.get("source"))
    for path, record in (snapshot.get("removed") or {}).items():
        out.update(_split(path))
        if isinstance(record, dict):
            source(record.get("source"))
    for key in ("optimizers", "schedulers"):
        catalog = snapshot.get(key)
        if not isinstance(catalog, dict):
            continue
        for name, entry in (catalog.get("names") or {}).items():
            out.add(name)
            out.update(str(p) for p in _params_of(entry))
            for cls in (entry.get("classes") or []) if isinstance(entry, dict) else []:
                if isinstance(cls, dict):
                    out.update(_split(cls.get("class")))
                    source(cls.get("source"))
    for name, enum in (snapshot.get("enums") or {}).items():
        out.update(_split(name))
        if isinstance(enum, dict):
            out.update(_split(enum.get("class")))
    return {i for i in out if i and (i[0].isalpha() or i[0] == "_")}


def _distinctive(word: str) -> bool:
    """A word only code spells so: CamelCase, ``snake_case`` or ``UPPER_CASE``; a plain lower-case word (``step``,
    ``auto``) is a word of the language as much as a name (``optimizer.step()``)."""
    return "_" in word.strip("_") or bool(CAMEL.search(word)) or bool(UPPER.match(word))


def code_words(text: str) -> list[str]:
    """The distinctive words ``text`` spells as code (:func:`_distinctive`): each such part of a backticked dotted
    name, and outside backticks every such word."""
    out = []
    for quoted in BACKTICKED.findall(text):
        for ident in CODE_IDENT.findall(quoted):
            out += [part for part in _split(ident) if _distinctive(part)]
    bare = BACKTICKED.sub(" ", text)
    out += [match.group(1) for match in CODE_WORD.finditer(bare) if _distinctive(match.group(1))]
    return out


def words_of(snapshot: dict[str, Any]) -> set[str]:
    """Every word anywhere in a snapshot, its docstrings and messages included: a class the release's own texts
    name (``DeepSpeedConfig``, which no slot of an old snapshot records) is one the release has."""
    import json

    text = json.dumps(snapshot, ensure_ascii=False)
    # dotted names too: a docstring of the release that names `deepspeed.inference.HFBertLayerPolicy` is DeepSpeed's
    # own words, shown as they are, not a claim of ours
    return set(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", text)) | set(re.findall(r"[A-Za-z_]\w*(?:\.\w+)+", text))


def _norm(name: str) -> str:
    return name.lower().replace("_", "").replace("-", "")


@dataclass
class Facts:
    """What one release's snapshot has, as prose names it."""

    version: str
    paths: set[str]
    names: set[str]
    """Every key name (the last part of a path) and section name."""
    features: set[str]
    """:func:`_norm` of every key name, section part and optimizer/scheduler type."""
    products: set[str] = field(default_factory=set)
    """:func:`_norm` of every top-level section and optimizer/scheduler type: what a capitalised word names
    (``Muon``, ``Comet``), where a key name would be an ordinary word starting a sentence (``Offload``)."""
    defaults: dict[str, Any] = field(default_factory=dict)
    identifiers: set[str] = field(default_factory=set)
    """:func:`identifiers_of` the snapshot: classes, functions, constants, types as code spells them."""
    words: set[str] = field(default_factory=set)
    """:func:`words_of` the snapshot: an identifier named anywhere in it is one the release has."""
    takes_true: dict[str, bool] = field(default_factory=dict)
    """Path → whether the release accepts ``true`` there, for keys whose ``true`` was probed."""
    source: source_names.SourceNames | None = None
    """What the release's source defines (None where the index lacks the release: no source claim is judged)."""
    prefixes: frozenset[str] = frozenset()
    """:func:`camel_prefixes` of ``source.names``: the CamelCase words a name the release spells begins with."""
    tails: set[str] = field(default_factory=set)
    """:func:`tails_of` the paths."""

    @classmethod
    def of_raw(cls, snapshot: dict[str, Any], source: Any = UNKNOWN) -> Facts:
        """``source``: the release's :class:`~dsfields.model.source_names.SourceNames`; by default read from the
        committed index for the snapshot's version."""
        fields = snapshot.get("fields") or {}
        paths = {*fields, *(snapshot.get("sections") or {}), *(snapshot.get("removed") or {})} - {""}
        names = {part for p in paths for part in p.split(".") if part != "*"}
        types = set()
        for key in ("optimizers", "schedulers"):
            catalog = snapshot.get(key)
            if isinstance(catalog, dict):
                for name, entry in (catalog.get("names") or {}).items():
                    if own_type(entry):
                        types.add(name)
                    # A type's constructor arguments (weight_decay, betas) are keys of its params.
                    names |= {str(p) for p in _params_of(entry)}
        # A capitalised word names a product: a top-level section (Comet, Nebula) or a type (Muon); a nested
        # section's name is an ordinary word (timers.throughput is no "Throughput"). A removed key is one the
        # release still knows (it rejects it): naming it is no contradiction.
        sections = {s for s in [*(snapshot.get("sections") or {}), *(snapshot.get("removed") or {})]
                    if s and "." not in s}
        version = str(snapshot.get("deepspeed_version"))
        if source is UNKNOWN:
            source = source_names.of_release(version)
        return cls(version, paths, names,
                   {_norm(n) for n in names | types}, {_norm(n) for n in sections | types},
                   {p: r.get("default") for p, r in fields.items() if isinstance(r, dict)},
                   identifiers_of(snapshot), words_of(snapshot), _takes_true(fields), source,
                   camel_prefixes(source.names) if source is not None else frozenset(), tails_of(paths))


@dataclass
class Vocabulary:
    """What any release has: a name only some releases have is a claim about those releases."""

    paths: set[str] = field(default_factory=set)
    names: set[str] = field(default_factory=set)
    features: set[str] = field(default_factory=set)
    products: set[str] = field(default_factory=set)
    identifiers: set[str] = field(default_factory=set)
    source_names: set[str] = field(default_factory=set)
    """Every name some release's source defines (a function, class or module)."""
    source_qualified: set[str] = field(default_factory=set)
    prefixes: set[str] = field(default_factory=set)
    tails: set[str] = field(default_factory=set)

    def add(self, facts: Facts) -> None:
        self.paths |= facts.paths
        self.tails |= facts.tails
        self.names |= facts.names
        self.features |= facts.features
        self.products |= facts.products
        self.identifiers |= facts.identifiers
        if facts.source is not None:
            self.source_names |= facts.source.defined
            self.source_qualified |= facts.source.qualified
            self.prefixes |= camel_prefixes(facts.source.defined)


@cache
def camel_prefixes(names: frozenset[str]) -> frozenset[str]:
    """Each CamelCase head a name begins with, up to a capital that starts a new word or an ``_``: ``AutoEPMoELayer``
    gives ``Auto``, ``AutoEP``, ``AutoEPMo``, ``AutoEPMoE``...; ``ZenFlowCPUAdam`` gives ``ZenFlow``. A feature word
    of prose (``AutoEP``) is one a release has when a class or function of its source begins with it."""
    out: set[str] = set()
    for name in names:
        out.update(_heads(name))
    return frozenset(out)


@cache
def _heads(name: str) -> tuple[str, ...]:
    """:func:`camel_prefixes` of one name (the same names recur in every release's source)."""
    return (*(name[:at] for at in range(2, len(name)) if name[at].isupper() or name[at] == "_"), name)


def _params_of(entry: Any) -> list[Any]:
    if not isinstance(entry, dict):
        return []
    out: list[Any] = []
    for cls in entry.get("classes") or []:
        if isinstance(cls, dict):
            out += list(cls.get("params") or {})
    return out + list(entry.get("params") or {}) if isinstance(entry.get("params"), dict | list) else out


def _takes_true(fields: dict[str, Any]) -> dict[str, bool]:
    out = {}
    for path, record in fields.items():
        probe = ((record.get("probes") or {}).get("true") if isinstance(record, dict) else None) or {}
        if isinstance(probe, dict) and "ok" in probe:
            out[path] = bool(probe["ok"])
    return out


def _value(text: str) -> Any:
    lowered = text.lower()
    if lowered in ("true", "false"):
        return lowered == "true"
    if lowered in ("null", "none"):
        return None
    return float(text)


def _same_number(claimed: Any, actual: Any) -> bool:
    if isinstance(claimed, bool) or isinstance(actual, bool) or claimed is None or actual is None:
        return claimed is actual
    if isinstance(actual, int | float):
        return float(actual) == claimed
    return False


def _keys_in(text: str) -> list[str]:
    """Identifiers the text names as keys: inside backticks, and snake_case words outside them."""
    out = []
    for quoted in BACKTICKED.findall(text):
        out += IDENT.findall(quoted)
    bare = BACKTICKED.sub(" ", text)
    out += [w for w in WORD.findall(bare) if "_" in w]
    return out


def contradictions(path: str, text: str, facts: Facts, vocabulary: Vocabulary) -> list[str]:
    """Each claim of ``text`` (shown for ``path`` on ``facts.version``'s pages) that the release contradicts."""
    found: list[str] = []
    shown = release_key(facts.version)
    for number in RELEASE.findall(text):
        if release_key(number) > shown:
            found.append(f"names release {number}, later than {facts.version}")
    for name in _keys_in(text):
        name = name.rstrip(".")
        if "." in name:
            head, _, leaf = name.rpartition(".")
            if head in ("optimizer.params", "scheduler.params") and leaf in facts.names:
                continue  # a constructor argument of a type the release builds
            if name in vocabulary.paths and name not in facts.paths:
                found.append(f"names key {name}, which {facts.version} lacks")
            elif name not in vocabulary.paths and name in vocabulary.tails and name not in facts.tails:
                found.append(f"names key {name}, which {facts.version} lacks")  # a path written from a section down
        elif name in vocabulary.names and name not in facts.names and "_" in name:
            found.append(f"names key {name}, which {facts.version} lacks")
    bare = BACKTICKED.sub(" ", text)
    for word in WORD.findall(bare):
        if "_" in word:
            continue
        norm = _norm(word)
        if norm == PRODUCT:
            continue
        if CAMEL.search(word):
            if norm in vocabulary.features and norm not in facts.features:
                found.append(f"names {word}, which {facts.version} lacks")
        elif CAPITALISED.match(word) and norm in vocabulary.products and norm not in facts.features:
            found.append(f"names {word}, which {facts.version} lacks")
    for quoted in BACKTICKED.findall(text):  # `Muon`, `Lion`: a type named as code is the same claim
        norm = _norm(quoted)
        if CAPITALISED.match(quoted) and norm in vocabulary.products and norm not in facts.features:
            found.append(f"names {quoted}, which {facts.version} lacks")
    said = " ".join(found)
    for word in dict.fromkeys(code_words(text)):
        if word in vocabulary.identifiers and word not in facts.identifiers and word not in facts.words \
                and f" {word}," not in said and f" {word.lower()}," not in said:
            found.append(f"names {word}, which {facts.version} lacks")
    found += _source_claims(text, facts, vocabulary, " ".join(found))
    found += _default_claims(path, text, facts)
    return found


def tails_of(paths: set[str]) -> set[str]:
    """Each dotted tail of the paths, a path written from a section down: ``zero_optimization.offload_optimizer.ratio``
    gives ``offload_optimizer.ratio`` (a single key name is no tail: key names are checked as names)."""
    out = set()
    for path in paths:
        parts = path.split(".")
        out.update(".".join(parts[at:]) for at in range(1, len(parts) - 1))
    return out


@cache
def _lowered(names: frozenset[str]) -> str:
    return "\n".join(sorted(n.lower() for n in names))


def _spelled_within(word: str, source: source_names.SourceNames) -> bool:
    """Whether the release's source spells the feature word inside a name in any case (``LoRA`` in ``fuse_lora``): a
    feature the release has under a lower-case spelling is one it has."""
    return word.lower() in _lowered(source.names)


def _source_claims(text: str, facts: Facts, vocabulary: Vocabulary, said: str) -> list[str]:
    """What ``text`` names of DeepSpeed's source that the release's source does not define (module docstring)."""
    source = facts.source
    if source is None:
        return []
    found: list[str] = []

    def lacks(name: str, what: str = "") -> None:
        if f" {name}," not in said and not any(f" {name}," in f for f in found):
            found.append(f"names {name}, which {facts.version} {what or 'lacks'}")

    for word in dict.fromkeys(code_words(text)):
        if word in facts.identifiers or word in facts.words or word in source.names:
            continue
        if word in vocabulary.source_names or (CAMEL.search(word) and word in vocabulary.prefixes
                                               and word not in facts.prefixes and not _spelled_within(word, source)):
            lacks(word)
    bare = BACKTICKED.sub(" ", text)
    for word in WORD.findall(bare):  # a feature word (AutoEP) that begins names of other releases only
        if CAMEL.search(word) and "_" not in word and word not in facts.prefixes and word in vocabulary.prefixes \
                and word not in facts.words and word not in facts.identifiers and not _spelled_within(word, source):
            lacks(word)
    for quoted in BACKTICKED.findall(text):
        quoted = quoted.strip()
        if MODULE_FILE.match(quoted):
            module = quoted[:-len(".py")].replace("/", ".")
            if module not in source.modules:
                lacks(quoted)
            continue
        for dotted in IDENT.findall(quoted):
            parts = dotted.rstrip(".").split(".")
            if parts[0] != PRODUCT or len(parts) < 2:
                continue
            known = max((n for n in range(1, len(parts) + 1) if ".".join(parts[:n]) in source.qualified), default=0)
            prefix = ".".join(parts[:known])
            if known == len(parts) or prefix not in source.modules:
                continue  # all of it defined, or an attribute of an object the module defines
            name = ".".join(parts[:known + 1])
            if name in facts.words or dotted.rstrip(".") in facts.words:
                continue  # the release's own texts (a docstring shown as it is) spell it so
            lacks(name, "lacks" if name in vocabulary.source_qualified else "does not define (nor does any release)")
    return found


def _path_named(name: str, facts: Facts) -> str | None:
    if name in facts.defaults:
        return name
    matches = [p for p in facts.defaults if p.rpartition(".")[2] == name]
    return matches[0] if len(matches) == 1 else None


def _default_claims(path: str, text: str, facts: Facts) -> list[str]:
    found = []
    for sentence in SENTENCE.split(text):
        for name, claimed in OTHER_DEFAULT.findall(sentence):
            other = _path_named(name, facts)
            if other is not None and not _same_number(_value(claimed), facts.defaults[other]):
                found.append(f"says {other} defaults to {claimed}; {facts.version}'s is {facts.defaults[other]!r}")
    if facts.takes_true.get(path) and any(p.search(text) for p in BOOLEANS_REFUSED):
        found.append(f"says booleans are rejected; {facts.version} accepts true")
    if path not in facts.defaults:
        return found
    actual = facts.defaults[path]
    key = path.rpartition(".")[2]
    for sentence in SENTENCE.split(text):
        others = [k for k in _keys_in(sentence) if k.rpartition(".")[2] != key]
        if others:  # the default named may be another key's
            continue
        for pattern in DEFAULT_CLAIMS:
            for claimed in pattern.findall(sentence):
                if not _same_number(_value(claimed), actual):
                    found.append(f"says the default is {claimed}; {facts.version}'s is {actual!r}")
        if isinstance(actual, str):
            for claimed in WORD_DEFAULT.findall(sentence):
                if claimed.lower() != actual.lower() and claimed.lower() not in ("true", "false", "null", "none"):
                    found.append(f"says the default is {claimed}; {facts.version}'s is {actual!r}")
        for pattern in NONZERO_CLAIMS:
            if pattern.search(sentence) and (actual in (0, None) or actual is False):
                found.append(f"says the default is non-zero; {facts.version}'s is {actual!r}")
    return found
