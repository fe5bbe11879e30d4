"""Compatibility shim: names old DeepSpeed releases import that the shared environment lacks.

placeholder
"""

from __future__ import annotations


def install() -> list[str]:
    """Add the missing names; return the dotted names added."""
    return []
