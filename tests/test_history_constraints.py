"""History shows a key's constraint and choice changes (issue 39): ``ge`` → ``gt``, a choice list that changed.

Before, ``lookup --history`` and the site's history said nothing between "present in the oldest snapshot" and
the newest release for ``zero_optimization.reduce_bucket_size``, although 0.19.6 refuses the ``0`` that 0.19.5
took. The fixture half builds tiny snapshot trees (unit); the committed half derives every change from the
snapshots themselves and asks that history, lookup and diff each name it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dsfields.model.history import EventKind, field_histories, field_history
from dsfields.model.wording import constraints_text

Z = "zero_optimization"


def _tree(tmp_path: Path) -> Path:
    from test_history import field_record, write_snapshot

    write_snapshot(tmp_path, "0.1.0", [field_record(f"{Z}.bucket", constraints={"ge": 0}),
                                       field_record(f"{Z}.kind", choices=["a", "b"], json_types=["string"])])
    write_snapshot(tmp_path, "0.2.0", [field_record(f"{Z}.bucket", constraints={"gt": 0}),
                                       field_record(f"{Z}.kind", choices=["a", "b", "c"], json_types=["string"])])
    write_snapshot(tmp_path, "0.3.0", [field_record(f"{Z}.bucket", constraints={"gt": 0}),
                                       field_record(f"{Z}.kind", choices=None, json_types=["string"])])
    return tmp_path


@pytest.mark.unit
def test_constraint_and_choice_changes_are_history_events(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    bucket = [(e.version, e.kind, e.old, e.new) for e in field_history(f"{Z}.bucket", root)][1:]
    assert bucket == [("0.2.0", EventKind.CONSTRAINTS_CHANGED, {"ge": 0}, {"gt": 0})]
    kind = [(e.version, e.kind, e.old, e.new) for e in field_history(f"{Z}.kind", root)][1:]
    assert kind == [("0.2.0", EventKind.CHOICES_CHANGED, ["a", "b"], ["a", "b", "c"]),
                    ("0.3.0", EventKind.CHOICES_CHANGED, ["a", "b", "c"], None)]


@pytest.mark.unit
def test_lookup_and_the_site_word_them_in_both_languages(tmp_path: Path) -> None:
    from dsfields.docs.filters import history_phrase
    from dsfields.docs.i18n import translator
    from dsfields.field_answer import history_lines

    root = _tree(tmp_path)
    lines = "\n".join(history_lines(field_history(f"{Z}.bucket", root), ["0.1.0", "0.2.0", "0.3.0"], 100))
    assert "0.2.0–0.3.0  constraints changed: >= 0 → > 0" in lines
    zh = "\n".join(history_lines(field_history(f"{Z}.kind", root), ["0.1.0", "0.2.0", "0.3.0"], 100, "zh"))
    assert '可选值改变："a", "b" → "a", "b", "c"' in zh and "choices changed" not in zh
    events = [e.as_dict() for e in field_history(f"{Z}.bucket", root)]
    assert "constraints changed in **0.2.0**: `>= 0` → `> 0`" in history_phrase(events, "0.1.0", translator("en"))
    assert "**0.2.0** 取值范围变更：`>= 0` → `> 0`" in history_phrase(events, "0.1.0", translator("zh"))


@pytest.mark.data
def test_every_committed_constraint_and_choice_change_is_in_history_lookup_and_diff(capsys) -> None:
    from dsfields.cli import main
    from dsfields.model.store import available_versions, load

    versions = available_versions()
    expected: dict[str, list[tuple[str, EventKind]]] = {}
    previous = load(versions[0])
    for version in versions[1:]:
        snapshot = load(version)
        for path, record in snapshot.fields.items():
            old = previous.fields.get(path)
            if old is None:
                continue
            if (old.constraints or {}) != (record.constraints or {}):
                expected.setdefault(path, []).append((version, EventKind.CONSTRAINTS_CHANGED))
            if old.choices != record.choices:
                expected.setdefault(path, []).append((version, EventKind.CHOICES_CHANGED))
        previous = snapshot
    assert expected  # the committed releases do change some (reduce_bucket_size's bound in 0.19.6)
    histories = field_histories(sorted(expected))
    for path, changes in expected.items():
        said = [(e.version, e.kind) for e in histories[path]
                if e.kind in (EventKind.CONSTRAINTS_CHANGED, EventKind.CHOICES_CHANGED)]
        assert said == changes, path
    path, [(version, kind), *_] = next((p, c) for p, c in expected.items()
                                       if c[0][1] is EventKind.CONSTRAINTS_CHANGED)
    before = versions[versions.index(version) - 1]
    assert main(["lookup", path, "--history", "--version", versions[-1]]) == 0
    out = " ".join(capsys.readouterr().out.split())
    old_text = constraints_text(dict(load(before).fields[path].constraints)) or "none"
    new_text = constraints_text(dict(load(version).fields[path].constraints)) or "none"
    assert f"{version}" in out and f"constraints changed: {old_text} → {new_text}" in out
    assert main(["diff", before, version, "--format", "json"]) in (0, 1)
    diffed = capsys.readouterr().out
    assert path in diffed and "constraint_changed" in diffed
