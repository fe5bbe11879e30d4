"""Where a deprecated key now lives: the one answer behind ``diff``'s renames, the history, ``migrate`` and
``upgrade`` (they must agree)."""

from __future__ import annotations

from dsfields.model.records import Field


def replacement_of(fields: dict[str, Field], path: str, record: Field) -> str | None:
    """The JSON path deprecated field ``path`` points to: its ``new_param`` is a Python attribute name (or key) of
    the same section. The one definition behind ``diff``'s renames and the history's (they must agree)."""
    new_param = record.deprecated.new_param if record.deprecated is not None else None
    if not new_param:
        return None
    section = record.section
    for other_path, other in fields.items():
        if other_path != path and other.python_name == new_param and other.section == section:
            return other_path
    candidate = f"{section}.{new_param}" if section else new_param
    return candidate if candidate in fields and candidate != path else None
