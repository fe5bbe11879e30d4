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
  "默认为 X", or "by default" / "默认" of clipping with a non-zero default.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from dsfields.model.prose import release_key

RELEASE = re.compile(r"(?<![\w.])(0\.\d+\.\d+)(?![\w]|\.\d)")
"""A DeepSpeed release number (0.x.y; other packages' versions, such as comet_ml 3.41.0, are not claims)."""
PRODUCT = "deepspeed"
"""The project's own name is no feature (a key somewhere is called ``deepspeed``)."""
BACKTICKED = re.compile(r"`([^`]+)`")
IDENT = re.compile(r"[A-Za-z][A-Za-z0-9_]*(?:\.[A-Za-z0-9_*]+)*")
WORD = re.compile(r"(?<![\w`.])([A-Za-z][A-Za-z0-9]*(?:[_-][A-Za-z0-9]+)*)(?![\w`])")
CAMEL = re.compile(r"[a-z][A-Z]")
CAPITALISED = re.compile(r"^[A-Z][a-z0-9]+$")
NUMBER = r"-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
VALUE = rf"(?:{NUMBER}|true|false|null|None|True|False)"
DEFAULT_CLAIMS = (
    re.compile(rf"\bdefaults? (?:to|is|of) `?({VALUE})`?(?![\w]|\.\d)"),
    re.compile(rf"\(default `?({VALUE})`?\)"),
    re.compile(rf"默认(?:值)?(?:为|是)\s*`?({VALUE})`?(?![\w]|\.\d)"),
)
WORD_DEFAULT = re.compile(r"\bdefaults to `?([A-Za-z][A-Za-z0-9_-]*(?:\.[A-Za-z0-9_-]+)*)`?(?![\w]|\.\d)")
"""A string default named in words ("defaults to fp32"): checked where the field's default is a string."""
OTHER_DEFAULT = re.compile(rf"\bdefault (?:of )?`?([a-z][a-z0-9_]*(?:\.[a-z0-9_]+)*)`? is `?({VALUE})`?(?![\w]|\.\d)")
"""Another key's default ("the default gradient_clipping is 1.0"), checked against that key in the release."""
NONZERO_CLAIMS = (re.compile(r"\bnon-zero default\b"), re.compile(r"默认(?:值)?(?:为)?非零|默认值不为\s*0"))
SENTENCE = re.compile(r"(?<=[.;:。；!?！？])\s+|\n+")


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

    @classmethod
    def of_raw(cls, snapshot: dict[str, Any]) -> Facts:
        fields = snapshot.get("fields") or {}
        paths = {*fields, *(snapshot.get("sections") or {}), *(snapshot.get("removed") or {})} - {""}
        names = {part for p in paths for part in p.split(".") if part != "*"}
        types = set()
        for key in ("optimizers", "schedulers"):
            catalog = snapshot.get(key)
            if isinstance(catalog, dict):
                for name, entry in (catalog.get("names") or {}).items():
                    types.add(name)
                    # A type's constructor arguments (weight_decay, betas) are keys of its params.
                    names |= {str(p) for p in _params_of(entry)}
        # A capitalised word names a product: a top-level section (Comet, Nebula) or a type (Muon); a nested
        # section's name is an ordinary word (timers.throughput is no "Throughput"). A removed key is one the
        # release still knows (it rejects it): naming it is no contradiction.
        sections = {s for s in [*(snapshot.get("sections") or {}), *(snapshot.get("removed") or {})]
                    if s and "." not in s}
        return cls(str(snapshot.get("deepspeed_version")), paths, names,
                   {_norm(n) for n in names | types}, {_norm(n) for n in sections | types},
                   {p: r.get("default") for p, r in fields.items() if isinstance(r, dict)})


@dataclass
class Vocabulary:
    """What any release has: a name only some releases have is a claim about those releases."""

    paths: set[str] = field(default_factory=set)
    names: set[str] = field(default_factory=set)
    features: set[str] = field(default_factory=set)
    products: set[str] = field(default_factory=set)

    def add(self, facts: Facts) -> None:
        self.paths |= facts.paths
        self.names |= facts.names
        self.features |= facts.features
        self.products |= facts.products


def _params_of(entry: Any) -> list[Any]:
    if not isinstance(entry, dict):
        return []
    out: list[Any] = []
    for cls in entry.get("classes") or []:
        if isinstance(cls, dict):
            out += list(cls.get("params") or {})
    return out + list(entry.get("params") or {}) if isinstance(entry.get("params"), dict | list) else out


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
    found += _default_claims(path, text, facts)
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
