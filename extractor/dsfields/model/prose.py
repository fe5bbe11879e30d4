"""Our own explanations of each field, in English and Chinese, kept as data keyed by JSON path.

DeepSpeed's docstrings say what a key is called; users need to know what DeepSpeed *does* with the
value, its unit, when to change it and what it interacts with. Those texts are written by us from
DeepSpeed's code and live in ``dsfields/prose/<lang>/<top-level key>.toml`` (``top-level.toml`` for
scalar top-level keys, ``optimizers.toml`` / ``schedulers.toml`` for the ``type`` catalogues). The
TOML files are the source; ``prose/<lang>.jsonl`` is the same content compiled for speed
(``python -m dsfields.model.prose --compile``; a test keeps it current), because ``lookup`` must start
about as fast as grep and ``tomllib`` costs more than the rest of a lookup together. One line per
source file, so a lookup decodes only the line it needs; each line records its source's size, and a
source edited since (its size differs) is read from the TOML instead.

A key is a JSON path, or a pattern with ``*`` standing for one user-named key
(``compression_training.weight_quantization.different_groups.*.params.start_bits``). The tests
check every key against the snapshots (a note for a path no release has fails) and report the
coverage per release and language (:func:`coverage`).
"""

from __future__ import annotations

import os
from functools import cache

from dsfields.model import jsonlite

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
    names = set()
    for lang in LANGUAGES:
        try:
            listing = os.listdir(os.path.join(_root(), lang))
        except OSError:  # absent, or not a folder
            continue
        names |= {n[:-len(".toml")] for n in listing if n.endswith(".toml") and not n.startswith(".")}
    return frozenset(names - {TOP_LEVEL_FILE, HF_AUTO_FILE, *CATALOG_FILES.values()})


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
    quoted = jsonlite.dumps(name) if name.isascii() else _json().dumps(name)  # as compile_language spells it
    start = text.find(b'\n{"file": ' + quoted.encode() + b",")
    if start < 0 or not name:
        return None
    end = text.find(b"\n", start + 1)
    try:
        data = jsonlite.loads(text[start + 1:end if end >= 0 else len(text)].decode("utf-8"))
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
        return {}
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
    json = _json()
    lines = [json.dumps({"generated_by": "python -m dsfields.model.prose --compile", "lang": lang})]
    from pathlib import Path

    for path in sorted((Path(_root()) / lang).glob("*.toml")):
        entries = json.dumps(_parse(path), sort_keys=True, ensure_ascii=False)
        lines.append(f'{{"file": {json.dumps(path.stem)}, "size": {path.stat().st_size}, "entries": {entries}}}')
    return "\n".join(lines) + "\n"


def _json() -> Any:
    import json  # writers only: lookup reads through jsonlite

    return json


def _entry(key: str, lang: str, raw: Any) -> Explanation | None:
    if not isinstance(raw, dict) or not isinstance(raw.get("summary"), str):
        return None
    params = raw.get("params")
    return Explanation(key, lang, raw["summary"].strip(), str(raw.get("body") or "").strip(),
                       (str(raw["pitfall"]).strip() or None) if raw.get("pitfall") else None,
                       {str(k): str(v) for k, v in params.items()} if isinstance(params, dict) else {})


def matches(pattern: str, path: str) -> bool:
    """``a.*.b`` matches ``a.x.b``: ``*`` stands for exactly one user-named key."""
    want, have = pattern.split("."), path.split(".")
    return len(want) == len(have) and all(w == "*" or w == h for w, h in zip(want, have, strict=True))


def explain(path: str, lang: str) -> Explanation | None:
    """Our explanation of ``path`` in ``lang``: the exact entry, else the first pattern that matches."""
    table = read_file(lang, file_for(path))
    exact = _entry(path, lang, table.get(path))
    if exact is not None:
        return exact
    for key, raw in table.items():
        if "*" in key and matches(key, path):
            return _entry(key, lang, raw)
    return None


def explain_type(section: str, name: str, lang: str) -> Explanation | None:
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
    return _entry(name, lang, raw)


def all_entries(lang: str) -> dict[str, dict[str, Explanation]]:
    """Every entry of ``lang``: file name → key → explanation (for tests, coverage and the site)."""
    out: dict[str, dict[str, Explanation]] = {}
    from pathlib import Path

    folder = Path(_root()) / lang
    for file in sorted(folder.glob("*.toml")) if folder.is_dir() else []:
        if file.stem == HF_AUTO_FILE:
            continue
        table = read_file(lang, file.stem)
        out[file.stem] = {k: e for k, raw in table.items() if (e := _entry(k, lang, raw)) is not None}
    return out


def hf_auto(path: str, lang: str) -> dict[str, str] | None:
    """What the HF Trainer writes for ``"auto"`` at ``path``: ``{"value", "from"}`` in ``lang``, or None."""
    entry = read_file(lang, HF_AUTO_FILE).get(path)
    if not isinstance(entry, dict):
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
