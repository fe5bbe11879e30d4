# Issue 38's figures: how `dsfields explain` does on pasted messages with verified answers (a JSONL file).
"""Score ``dsfields explain`` on cases (``pasted``, ``release``, ``not_config``, ``answer_keys``, ``fix_actions``).

``python bench/explain_score.py [CASES.jsonl ...]`` (default: ``bench/explain_corpus.jsonl``) prints one line per
case and the figures of issue 38's acceptance: right key, right fix, confidently wrong (a key named, not a right
one), not-a-config messages named as such. Aliases count as the same key (``stage3_*``, ``bfloat16``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from dsfields.explain import explain_text
from dsfields.model.store import available_versions


def _plain(path: str) -> str:
    return path.replace("stage3_", "").replace("bfloat16", "bf16")


def score(path: Path) -> dict[str, float]:
    versions = set(available_versions())
    totals = {"config": 0, "key": 0, "fix": 0, "wrong": 0, "not_config": 0, "named_not_config": 0}
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        case = json.loads(line)
        release = case.get("release")
        answer = explain_text(case["pasted"], version=release if release in versions else None).as_json()
        first = answer["causes"][0] if answer["causes"] else {}
        keys = first.get("keys") or []
        answers = {_plain(k) for k in case["answer_keys"]}
        if case["not_config"]:
            totals["not_config"] += 1
            good = answer["not_config"] and not any(c["keys"] for c in answer["causes"])
            totals["named_not_config"] += good
            totals["wrong"] += bool(keys)
        else:
            totals["config"] += 1
            key_ok = bool(keys) and _plain(keys[0]) in answers
            fix_ok = key_ok and first.get("action") in case["fix_actions"]
            totals["key"] += key_ok
            totals["fix"] += fix_ok
            totals["wrong"] += bool(keys) and not key_ok
            good = fix_ok
        print(f"{'ok  ' if good else 'MISS'} {case['id']}: {keys[:2]} {first.get('action')} {first.get('message_id')}")
    cases = totals["config"] + totals["not_config"]
    figures = {
        "cases": cases,
        "right_key": totals["key"] / max(totals["config"], 1),
        "right_fix": totals["fix"] / max(totals["config"], 1),
        "confidently_wrong": totals["wrong"] / max(cases, 1),
        "not_config_named": totals["named_not_config"] / max(totals["not_config"], 1),
    }
    print(json.dumps(figures))
    return figures


if __name__ == "__main__":
    for name in sys.argv[1:] or [str(Path(__file__).with_name("explain_corpus.jsonl"))]:
        score(Path(name))
