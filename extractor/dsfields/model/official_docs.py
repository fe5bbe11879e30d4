"""Where DeepSpeed's official config page disagrees with DeepSpeed's code, per release.

``generated/<version>/official_docs.json`` holds what ``docs/_pages/config-json.md`` at the release's tag
states (each key's JSON path, line, bracketed type and default; written by ``dev/official_docs.py``, no
text of the page). The code's facts are the snapshot's. A reader comparing the site's 5e7 with the
official 5e8 should be told which one DeepSpeed runs, and where: :func:`disagreements`.

Compared: a leaf key whose page states a JSON default and whose code has a non-null default (a null
default is "not set", derived elsewhere: nothing to compare). Where a validator decides per ZeRO stage
(``effective_default``), the page must match every stage to agree. Types: where both the page and the
code name one plain type (boolean, integer, float, string; a pydantic ``bool``/``int``/``float``/``str``),
they must be the same one (:data:`PLAIN_TYPES`); anything richer (``any``, enums, unions) is not compared.
"""

from __future__ import annotations

import json
import os
from collections import namedtuple

from dsfields.model.batch import BATCH_KEYS
from dsfields.model.records import reader_constant

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing costs lookup's start-up (it asks this module for the key it answers about)
    from typing import Any

FILE = "official_docs.json"
PLAIN_TYPES = {"boolean": "bool", "bool": "bool", "integer": "int", "int": "int", "float": "float",
               "string": "str", "str": "str"}
"""The page's and the code's spellings of the plain types, to one name."""


class Disagreement(namedtuple("Disagreement", "path docs code source docs_line docs_ref kind", defaults=("default",))):
    """Where the official page and the code disagree about one key. A namedtuple, not a dataclass: ``lookup`` asks
    this module, and ``dataclasses`` imports ``inspect``, which costs its start-up.

    ``docs``: what the page states; ``code``: the code's default, or {stage: value} where a validator decides per
    ZeRO stage; ``source``: where the code's default is defined (``{"file", "line"}``); ``docs_ref``: the tag the
    page was read at (``v0.10.3``); ``kind``: ``default`` or ``type`` (then ``docs`` and ``code`` are type names).
    """

    __slots__ = ()


def load(version: str, generated: str | os.PathLike[str] | None = None) -> dict[str, Any] | None:
    """The release's extracted official-page facts, or None where none were extracted (no tag)."""
    from dsfields.model.store import generated_file, generated_root, read_generated

    root = os.fspath(generated) if generated else generated_root()
    path = os.path.join(root, version, FILE)
    if generated_file(path) is None:  # no page read for this release (or no such release): nothing opened
        return None
    try:
        data = json.loads(read_generated(path))  # or its .gz in a wheel
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) and isinstance(data.get("keys"), dict) else None


def _same(docs: Any, code: Any) -> bool:
    if isinstance(docs, bool) or isinstance(code, bool):
        return docs is code
    if isinstance(docs, int | float) and isinstance(code, int | float):
        return float(docs) == float(code)
    if isinstance(docs, str) and isinstance(code, str):
        return docs.lower() == code.lower()
    return docs == code


def disagreements(snapshot: dict[str, Any], docs: dict[str, Any] | None) -> list[Disagreement]:
    """Every key whose official default differs from the code's, in path order (``snapshot``: its JSON)."""
    if not docs:
        return []
    fields = snapshot.get("fields") or {}
    out = []
    for path in sorted(docs["keys"]):
        out += disagreements_of(path, fields.get(path), docs)
    return out


def disagreements_of(path: str, record: Any, docs: dict[str, Any] | None) -> list[Disagreement]:
    """Where the official page disagrees with the code about one key (``record``: its JSON record): its type, then
    its default. ``lookup`` asks this for the key it answers about; the site asks :func:`disagreements`."""
    stated = (docs or {}).get("keys", {}).get(path)
    if not isinstance(stated, dict) or not isinstance(record, dict) or record.get("is_section"):
        return []
    ref = str((docs.get("source") or {}).get("ref") or "") if docs else ""
    out = []
    source = reader_constant(record) or record.get("source") or {}
    where = {"file": source.get("file"), "line": source.get("default_line") or source.get("line")}
    docs_type, code_type = PLAIN_TYPES.get(str(stated.get("type"))), PLAIN_TYPES.get(str(record.get("type")))
    if docs_type and code_type and docs_type != code_type:
        out.append(Disagreement(path, stated.get("type"), record.get("type"), where,
                                int(stated.get("line") or 0), ref, "type"))
    if "default" not in stated:
        return out
    effective = record.get("effective_default")
    if isinstance(effective, dict) and effective:
        if all(_same(stated["default"], v) for v in effective.values()):
            return out
        code: Any = dict(effective)
    else:
        code = record.get("default")
        # A null default is the code's answer too (steps_per_print: the page says 10, the code None, so nothing
        # is printed); only a deprecated key's null means "not given" rather than a default, and a batch key's that
        # DeepSpeed derives from the others (the batch rule: accumulation 1 where only the micro batch is given).
        if (code is None and (record.get("deprecated") or path in BATCH_KEYS)) or _same(stated["default"], code):
            return out
    out.append(Disagreement(path, stated["default"], code, where, int(stated.get("line") or 0), ref))
    return out
