"""Curated tables (docs groups, prose) name only keys the snapshots have, and say what they leave out."""

from __future__ import annotations

from fnmatch import fnmatchcase

import pytest

from dsfields.docs import groups
from dsfields.model.store import available_versions, load

pytestmark = pytest.mark.data


@pytest.fixture(scope="module")
def top_keys() -> set[str]:
    keys: set[str] = set()
    for version in available_versions():
        snapshot = load(version)
        keys |= {p.split(".", 1)[0] for p in (*snapshot.fields, *snapshot.removed) if p}
    return keys


def test_every_key_a_docs_group_names_exists_in_some_release(top_keys):
    named = [k for g in groups.GROUPS for k in g.keys if not groups._is_pattern(k)]
    assert sorted(k for k in named if k not in top_keys) == []


def test_every_group_pattern_matches_some_release_key(top_keys):
    patterns = [k for g in groups.GROUPS for k in g.keys if groups._is_pattern(k)]
    dead = [p for p in patterns if not any(fnmatchcase(k, p) for k in top_keys)]
    assert dead == []


def test_unmapped_keys_are_reported_not_dropped(top_keys):
    """Keys no rule matches land in misc and are listed; today there are none (the list is printed if any)."""
    unmapped = sorted(k for k in top_keys if groups.group_rule(k)[1] is None)
    for key in unmapped:
        assert groups.group_of(key) is groups.MISC
    assert unmapped == [], f"add a group rule for: {unmapped}"
