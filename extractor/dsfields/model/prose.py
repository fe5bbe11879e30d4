"""Our own explanations of each field, in English and Chinese, kept as data keyed by JSON path.

DeepSpeed's docstrings say what a key is called; users need to know what DeepSpeed *does* with the
value, its unit, when to change it and what it interacts with. Those texts are written by us from
DeepSpeed's code and live in ``dsfields/prose/<lang>/<top-level key>.toml`` (``top-level.toml`` for
scalar top-level keys, ``optimizers.toml`` / ``schedulers.toml`` for the ``type`` catalogues). The
TOML files are the source; ``prose/<lang>.jsonl`` is the same content compiled for speed
(``python -m dsfields.model.prose --compile``; a test keeps it current), because ``lookup`` must start
about as fast as grep and ``tomllib`` costs more than the rest of a lookup together. One line per
source file, so a lookup decodes only the line it needs; each line records its source's size, and a
source edited since (its size differs) is read from the TOML instead. The wheel ships only the compiled
form (``pyproject.toml`` leaves ``prose/<lang>/`` out): where a language's TOML folder is absent, its
``.jsonl`` is the prose.

A key is a JSON path, or a pattern with ``*`` standing for one user-named key
(``compression_training.weight_quantization.different_groups.*.params.start_bits``). The tests
check every key against the snapshots (a note for a path no release has fails) and report the
coverage per release and language (:func:`coverage`).

A sentence true for one release is not true for all 77: each entry, and each piece of its ``summary``,
``body`` or ``pitfall``, may say which releases it holds for. A part is either a string or a list of
pieces ``{text = "...", since = "0.19.3"}``; the pieces whose conditions hold are joined, so two pieces
with opposite conditions are one text replaced by another. The conditions (:data:`CONDITIONS`), on an
entry or a piece: ``since`` / ``until`` (releases, both inclusive), ``requires`` / ``lacks`` (JSON
paths, or ``type:NAME`` for an optimizer/scheduler type, that the release's snapshot has / lacks) and
``default`` / ``default_not`` (the field's default in that release is / is not this value). The site,
``lookup`` and ``schema`` all pass the release shown as a :class:`Scope`; ``tests/test_prose_facts.py``
renders every field of every release through :func:`explain` and checks the text against that
release's facts.
"""

from __future__ import annotations

import json
import os
from functools import cache

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing and pathlib cost lookup's start-up milliseconds; annotations are strings anyway
    from pathlib import Path
    from typing import Any

_PROSE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(__file__))), "prose")
LANGUAGES = ("en", "zh")
TOP_LEVEL_FILE = "top-level"
CATALOG_FILES = {"optimizer": "optimizers", "scheduler": "schedulers"}
HF_AUTO_FILE = "hf_auto"
"""What the HF Trainer puts in for ``"auto"``, per JSON path: ``value`` and ``from`` (not explanations)."""


def __getattr__(name: str) -> Any:
    if name == "PROSE_DIR":  # a Path for callers; built on first use so that lookup never imports pathlib
        from pathlib import Path

        return Path(_PROSE_DIR)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _root() -> str:
    """The prose folder: ``PROSE_DIR`` when a caller (a test) has set it, else this package's."""
    return os.fspath(globals().get("PROSE_DIR", _PROSE_DIR))


class Explanation:
    """Our text about one path (or one optimizer/scheduler type) in one language.

    A plain class, not a NamedTuple: ``typing`` is not imported on ``lookup``'s start-up path.
    """

    __slots__ = ("key", "lang", "summary", "body", "pitfall", "params")

    def __init__(self, key: str, lang: str, summary: str, body: str, pitfall: str | None = None,
                 params: dict[str, str] | None = None) -> None:
        self.key = key
        """The entry's key as written: a path, a pattern, or a type name."""
        self.lang = lang
        self.summary = summary
        self.body = body
        self.pitfall = pitfall
        self.params = params or {}
        """For optimizer/scheduler types: parameter name → one line."""

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Explanation) and self.as_dict() == other.as_dict()

    def __repr__(self) -> str:
        return f"Explanation({self.key!r}, {self.lang!r})"

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"key": self.key, "lang": self.lang, "summary": self.summary, "body": self.body,
                               "pitfall": self.pitfall}
        if self.params:
            out["params"] = dict(self.params)
        return out


def language(requested: str | None = None) -> str:
    """``--lang`` if given, else Chinese when the locale says so (``LANG=zh_CN.UTF-8``), else English."""
    if requested:
        lang = requested.lower().split("_")[0].split("-")[0]
        if lang not in LANGUAGES:
            from dsfields.model.errors import UsageError

            raise UsageError(f"--lang {requested!r}: dsfields speaks {', '.join(LANGUAGES)}")
        return lang
    for variable in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(variable)
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "en"


def file_for(path: str) -> str:
    """The prose file (without ``.toml``) holding ``path``'s entry."""
    top, dot, _ = path.partition(".")
    return top if dot or top in _files_with_sections() else TOP_LEVEL_FILE


@cache
def _files_with_sections() -> frozenset[str]:
    # A section key (``zero_optimization``) has its own file; a scalar top-level key lives in top-level.toml.
    names: set[str] = set()
    for lang in LANGUAGES:
        names.update(file_names(lang))
    return frozenset(names - {TOP_LEVEL_FILE, HF_AUTO_FILE, *CATALOG_FILES.values()})


def _sources_shipped(lang: str) -> bool:
    """Whether ``prose/<lang>/`` (the TOML sources) is here: a checkout, not an installed wheel."""
    return os.path.isdir(os.path.join(_root(), lang))


def file_names(lang: str) -> list[str]:
    """The prose files of ``lang`` (without ``.toml``) in file-name order: the TOML sources, or the compiled lines
    where the sources are not shipped."""
    if _sources_shipped(lang):
        listing = os.listdir(os.path.join(_root(), lang))
        return [n[:-len(".toml")] for n in sorted(listing) if n.endswith(".toml") and not n.startswith(".")]
    text, names, marker = _compiled_lines(lang), [], b'\n{"file": '
    start = text.find(marker)
    while start >= 0:
        start += len(marker)
        end = text.find(b", ", start)  # compile_language writes the name, then ", "size"
        name = json.loads(text[start:end].decode("utf-8")) if end > start else None
        if isinstance(name, str):
            names.append(name)
        start = text.find(marker, start)
    return names  # in the sources' order: compile_language writes them sorted


@cache
def _compiled_lines(lang: str) -> bytes:
    """``prose/<lang>.jsonl`` undecoded: a lookup decodes the one line it needs (:func:`_compiled`)."""
    try:
        with open(os.path.join(_root(), f"{lang}.jsonl"), "rb") as handle:
            return handle.read()
    except OSError:
        return b""


def _compiled(lang: str, name: str) -> dict[str, Any] | None:
    text = _compiled_lines(lang)
    quoted = json.dumps(name)  # as compile_language spells it
    start = text.find(b'\n{"file": ' + quoted.encode() + b",")
    if start < 0 or not name:
        return None
    end = text.find(b"\n", start + 1)
    try:
        data = json.loads(text[start + 1:end if end >= 0 else len(text)].decode("utf-8"))
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


@cache
def read_file(lang: str, name: str) -> dict[str, Any]:
    """One prose file ({} when absent): from the compiled JSON when it is current, else the TOML."""
    path = os.path.join(_root(), lang, f"{name}.toml")
    try:
        size = os.stat(path).st_size
    except OSError:
        if _sources_shipped(lang):
            return {}
        compiled = _compiled(lang, name)  # an installed wheel: the compiled form is all there is
        entries = compiled.get("entries") if compiled is not None else None
        return entries if isinstance(entries, dict) else {}
    compiled = _compiled(lang, name)
    if compiled is not None and compiled.get("size") == size and isinstance(compiled.get("entries"), dict):
        return compiled["entries"]
    return _parse(path)


def _parse(path: Path | str) -> dict[str, Any]:
    import tomllib

    with open(path, "rb") as handle:
        return tomllib.load(handle)


def compile_language(lang: str) -> str:
    """``prose/<lang>.jsonl``: a header line, then one line per ``prose/<lang>/*.toml`` (sorted, byte-stable)."""
    lines = [json.dumps({"generated_by": "python -m dsfields.model.prose --compile", "lang": lang})]
    from pathlib import Path

    for path in sorted((Path(_root()) / lang).glob("*.toml")):
        entries = json.dumps(_parse(path), sort_keys=True, ensure_ascii=False)
        lines.append(f'{{"file": {json.dumps(path.stem)}, "size": {path.stat().st_size}, "entries": {entries}}}')
    return "\n".join(lines) + "\n"


CONDITIONS = ("since", "until", "requires", "lacks", "default", "default_not")
"""The keys of an entry or a piece that say where it holds (see the module docstring)."""


def release_key(version: str) -> tuple[int, ...]:
    """``"0.10.3"`` → ``(0, 10, 3)``: release order without ``packaging`` (not on lookup's start-up path)."""
    out = []
    for part in version.split("."):
        digits = ""
        for char in part:
            if not char.isdigit():
                break
            digits += char
        out.append(int(digits or 0))
    return tuple(out)


class Scope:
    """The release a text is shown for: its version and what its snapshot has (paths, types, defaults)."""

    __slots__ = ("version", "_has", "_default")

    def __init__(self, version: str, has: Any, default: Any = None) -> None:
        self.version = version
        self._has = has
        """``has(path_or_type)``: ``True`` when the release's snapshot has the JSON path (a field, a section
        or a removed key) or, for ``type:NAME``, builds that optimizer/scheduler type."""
        self._default = default
        """``default(path)``: the field's default in this release (``Scope.MISSING`` when it has none)."""

    MISSING = object()

    def has(self, name: str) -> bool:
        return bool(self._has(name))

    def default(self, path: str) -> Any:
        return self._default(path) if self._default else Scope.MISSING

    @classmethod
    def of_raw(cls, snapshot: dict[str, Any]) -> Scope:
        """The scope of a snapshot as its JSON dict (the site)."""
        fields = snapshot.get("fields") or {}
        named = {*fields, *(snapshot.get("sections") or {}), *(snapshot.get("removed") or {})}
        types = set()
        for key in ("optimizers", "schedulers"):
            catalog = snapshot.get(key)
            if isinstance(catalog, dict):
                types |= {type_name(n, e) for n, e in (catalog.get("names") or {}).items()}

        def default(path: str) -> Any:
            record = fields.get(path)
            return record.get("default") if isinstance(record, dict) else Scope.MISSING

        return cls(str(snapshot.get("deepspeed_version") or ""),
                   lambda n: bool({n, n.lower()} & types) if n.startswith("type:") else n in named, default)

    @classmethod
    def of_snapshot(cls, snapshot: Any) -> Scope:
        """The scope of a :class:`~dsfields.model.records.Snapshot` (lookup, schema)."""
        def has(name: str) -> bool:
            if name.startswith("type:"):
                types = {type_name(n, e.raw) for c in snapshot.catalogs.values() for n, e in c.names.items()}
                return bool({name, name.lower()} & types)
            return name in snapshot.fields or name in snapshot.sections or name in snapshot.removed

        def default(path: str) -> Any:
            record = snapshot.fields.get(path)
            return record.default if record is not None else Scope.MISSING

        return cls(snapshot.version, has, default)


def type_name(name: str, entry: Any) -> str:
    """How a ``type:NAME`` condition names a catalogue entry: in lower case for a type DeepSpeed provides (matched
    in any case, or built from a ``deepspeed.`` class), exactly for a ``torch.optim`` fallback, whose presence
    depends on the torch the snapshot was extracted with (``torch.optim.Muon`` in 0.10.3's), not on DeepSpeed:
    ``type:muon`` is DeepSpeed's Muon, never torch's."""
    return f"type:{name.lower()}" if own_type(entry) else f"type:{name}"


def own_type(entry: Any) -> bool:
    """Whether a catalogue entry (its JSON) is a type DeepSpeed provides: matched in any case, or built from a
    ``deepspeed.`` class; else a ``torch.optim`` fallback that the extraction's torch happened to have."""
    if not isinstance(entry, dict):
        return False
    classes = [c.get("class") for c in (entry.get("classes") or []) if isinstance(c, dict)]
    return bool(entry.get("case_insensitive")) or any(str(c).startswith("deepspeed.") for c in classes)


def holds(conditions: dict[str, Any], path: str, scope: Scope | None) -> bool:
    """Whether an entry's or a piece's conditions hold for ``path`` shown in ``scope`` (no scope: all hold)."""
    if scope is None:
        return True
    shown = release_key(scope.version)
    if "since" in conditions and shown < release_key(str(conditions["since"])):
        return False
    if "until" in conditions and shown > release_key(str(conditions["until"])):
        return False
    if any(not scope.has(str(n)) for n in _names(conditions.get("requires"))):
        return False
    if any(scope.has(str(n)) for n in _names(conditions.get("lacks"))):
        return False
    if "default" in conditions and not _same(scope.default(path), conditions["default"]):
        return False
    return not ("default_not" in conditions and _same(scope.default(path), conditions["default_not"]))


def _names(value: Any) -> list[Any]:
    return [] if value is None else [value] if isinstance(value, str) else list(value)


def _same(a: Any, b: Any) -> bool:
    # 0 and 0.0 are one JSON number; True is not 1.
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    return a == b


def _part(value: Any, path: str, scope: Scope | None) -> str:
    """A summary/body/pitfall: a string, or the pieces of a list whose conditions hold, concatenated.

    A piece carries its own trailing space or paragraph break; where a piece is left out, the stronger
    of its break and the one before it is kept, so leaving out a paragraph's last sentence does not glue
    two paragraphs together.
    """
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    out, pending = "", ""
    for piece in value if isinstance(value, list) else [value]:
        if isinstance(piece, str):
            text, held = piece, True
        elif isinstance(piece, dict):
            text, held = str(piece.get("text") or ""), holds(piece, path, scope)
        else:
            continue
        core = text.rstrip()
        gap = text[len(core):]
        if held and core:
            out += (pending if out else "") + core
            pending = gap
        elif gap.count("\n") > pending.count("\n"):
            pending = gap
    return out.strip()


def _entry(key: str, lang: str, raw: Any, path: str = "", scope: Scope | None = None) -> Explanation | None:
    if not isinstance(raw, dict) or not holds(raw, path or key, scope):
        return None
    summary = _part(raw.get("summary"), path or key, scope)
    if not summary:
        return None
    params = raw.get("params")
    # a parameter's text may be pieces with conditions too (a sentence naming a scheduler some releases lack)
    shown = {str(k): _part(v, path or key, scope) for k, v in params.items()} if isinstance(params, dict) else {}
    return Explanation(key, lang, summary, _part(raw.get("body"), path or key, scope),
                       _part(raw.get("pitfall"), path or key, scope) or None, {k: v for k, v in shown.items() if v})


def matches(pattern: str, path: str) -> bool:
    """``a.*.b`` matches ``a.x.b``: ``*`` stands for exactly one user-named key."""
    want, have = pattern.split("."), path.split(".")
    return len(want) == len(have) and all(w == "*" or w == h for w, h in zip(want, have, strict=True))


def explain(path: str, lang: str, scope: Scope | None = None) -> Explanation | None:
    """Our explanation of ``path`` in ``lang`` as it holds for the release ``scope`` (every piece when
    ``None``): the exact entry, else the first pattern that matches."""
    table = read_file(lang, file_for(path))
    exact = _entry(path, lang, table.get(path), path, scope)
    if exact is not None or path in table:
        return exact
    for key, raw in table.items():
        if "*" in key and matches(key, path):
            return _entry(key, lang, raw, path, scope)
    return None


@cache
def is_scoped(path: str, lang: str) -> bool:
    """Whether ``path``'s entry in ``lang`` has any condition (else every release is shown the same text)."""
    table = read_file(lang, file_for(path))
    raw = table.get(path)
    if raw is None:
        raw = next((r for k, r in table.items() if "*" in k and matches(k, path)), None)
    if not isinstance(raw, dict):
        return False
    if any(c in raw for c in CONDITIONS):
        return True
    return any(isinstance(raw.get(part), list) for part in ("summary", "body", "pitfall"))


def explain_shown(path: str, lang: str, scope: Scope | None) -> Explanation | None:
    """What a reader of release ``scope`` is shown about ``path`` in ``lang``: :func:`explain`, in English
    where the translation is missing. The one function the site, ``lookup`` and ``schema`` use."""
    return explain(path, lang, scope) or (explain(path, "en", scope) if lang != "en" else None)


def explain_type(section: str, name: str, lang: str, scope: Scope | None = None) -> Explanation | None:
    """Our explanation of an optimizer or scheduler ``type`` (``section`` is ``optimizer``/``scheduler``)."""
    catalog = CATALOG_FILES.get(section)
    if catalog is None:
        return None
    table = read_file(lang, catalog)
    raw = table.get(name)
    if raw is None:
        lowered = {k.lower(): k for k in table}
        key = lowered.get(name.lower())
        raw = table.get(key) if key else None
        name = key or name
    return _entry(name, lang, raw, f"{section}.type", scope)


def all_entries(lang: str) -> dict[str, dict[str, Explanation]]:
    """Every entry of ``lang``: file name → key → explanation (for tests, coverage and the site)."""
    out: dict[str, dict[str, Explanation]] = {}
    for name in file_names(lang):
        if name == HF_AUTO_FILE:
            continue
        table = read_file(lang, name)
        out[name] = {k: e for k, raw in table.items() if (e := _entry(k, lang, raw)) is not None}
    return out


def hf_auto(path: str, lang: str, scope: Scope | None = None) -> dict[str, str] | None:
    """What the HF Trainer writes for ``"auto"`` at ``path``: ``{"value", "from"}`` in ``lang``, or None
    (also where the entry's conditions do not hold for ``scope``)."""
    entry = read_file(lang, HF_AUTO_FILE).get(path)
    if not isinstance(entry, dict) or not holds(entry, path, scope):
        return None
    return {"value": str(entry.get("value", "")), "from": str(entry.get("from", ""))}


class Coverage:
    """How much of one release one language explains."""

    __slots__ = ("version", "lang", "explained", "total", "missing")

    def __init__(self, version: str, lang: str, explained: int, total: int, missing: tuple[str, ...]) -> None:
        self.version, self.lang, self.explained, self.total, self.missing = version, lang, explained, total, missing


def coverage(fields: dict[str, Any], version: str, lang: str, *, leaves_only: bool = True) -> Coverage:
    """How many of a release's field paths (``fields``: path → record with ``is_section``) we explain."""
    paths = sorted(p for p, record in fields.items()
                   if not (leaves_only and getattr(record, "is_section", False)))
    missing = tuple(p for p in paths if explain(p, lang) is None)
    return Coverage(version, lang, len(paths) - len(missing), len(paths), missing)


def main(argv: list[str] | None = None) -> int:
    """``python -m dsfields.model.prose [--compile]``: the coverage of every committed release per language,
    or (``--compile``) rewrite ``prose/<lang>.json`` from the TOML sources."""
    import sys

    from dsfields.model.store import available_versions, load, write_atomic

    if "--compile" in (sys.argv[1:] if argv is None else argv):
        for lang in LANGUAGES:
            from pathlib import Path

            write_atomic(Path(_root()) / f"{lang}.jsonl", compile_language(lang))
            print(Path(_root()) / f"{lang}.jsonl")
        return 0
    for version in available_versions():
        fields = load(version).fields
        cells = []
        for lang in LANGUAGES:
            cov = coverage(fields, version, lang)
            cells.append(f"{lang} {cov.explained}/{cov.total}")
        print(f"{version:>8}  " + "  ".join(cells))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
