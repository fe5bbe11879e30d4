"""Extract what DeepSpeed's official config page states, per release: ``python dev/official_docs.py REPO``.

REPO is a git clone of deepspeedai/DeepSpeed (no work tree needed). For every committed release with a
tag ``vX.Y.Z`` it reads ``docs/_pages/config-json.md`` at that tag; a release newer than every tag the clone
has (a clone taken between releases) is compared with the newest page the clone holds, the last commit that
changed the page on the clone's HEAD, and its ``source`` says so (``"untagged": true``, the commit and its
date). Either way it writes
``generated/<version>/official_docs.json``: for each key the page documents, its JSON path in that
release's snapshot, the line, the type in brackets (``[integer]``) and the default its table states,
when that default is a JSON value. Only these facts are kept, never the page's text (its prose is
DeepSpeed's, not ours). ``dsfields.model.official_docs`` compares them with the code's facts.

A heading names a bare key (``***stage3_prefetch_bucket_size***: [integer]``) or one qualified by its section
(``**fp16:loss_scale**: [float]``, placed at that path where the release has it); a bare key is placed under the
last section heading the page opened (``***zero_optimization***: [dictionary]``) when the release has
that path, else as a top-level key, else where the release has exactly one key of that name; a
heading that cannot be placed is counted in ``unplaced``.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT / "extractor"))

from dsfields.model.store import available_versions, repo_generated_dir  # noqa: E402

PAGE = "docs/_pages/config-json.md"
OUTPUT = "official_docs.json"
HEADING = re.compile(r"^\s*(?:<i>)?\*\*\*?([A-Za-z_][A-Za-z0-9_]*(?::[A-Za-z_][A-Za-z0-9_]*)*)\*\*\*?(?:</i>)?\s*:\s*"
                     r"\[([^\]]*)\]")
"""A key's heading: a bare key (``***stage3_prefetch_bucket_size***: [integer]``) or one qualified by its section
(``**fp16:loss_scale**: [float]``)."""
SECTION_IN_EXAMPLE = re.compile(r'^\s*"([A-Za-z_][A-Za-z0-9_]*)"\s*:\s*\{')
NUMBER = re.compile(r"^-?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$")


def value_of(cell: str, stated_type: str = "") -> tuple[bool, Any]:
    """(is a JSON value, the value) of a table's Default cell (a bare word is a string for a [string] key)."""
    text = re.sub(r"</?i>|\*\*|`", "", cell).strip()
    if stated_type == "string" and re.fullmatch(r"(?:[A-Za-z]|/)[A-Za-z0-9_./-]*", text) and text.lower() not in (
            "true", "false", "null", "none", "n/a"):
        return True, text  # a bare word or path (``/local_nvme``) of a [string] key
    if text[:1] in "[{" and text[-1:] in "]}":
        try:
            return True, json.loads(text)  # ``[]``, ``{}``: a JSON array or object as written
        except ValueError:
            return False, None
    if text.lower() in ("true", "false"):
        return True, text.lower() == "true"
    if text.lower() in ("null", "none"):
        return True, None
    if NUMBER.match(text):
        number = float(text)
        return True, int(number) if number.is_integer() and "." not in text else number
    if len(text) >= 2 and text[0] == text[-1] == '"' and '"' not in text[1:-1]:
        return True, text[1:-1]
    return False, None


def default_after(lines: list[str], start: int, stated_type: str) -> tuple[bool, Any]:
    """The Default cell of the first table after the heading at ``start`` (before the next heading)."""
    for i in range(start + 1, min(start + 12, len(lines))):
        if HEADING.match(lines[i]):
            break
        if lines[i].lstrip().startswith("|"):
            header = [c.strip().lower() for c in lines[i].strip().strip("|").split("|")]
            if "default" not in header or i + 2 >= len(lines):
                return False, None
            row = [c.strip() for c in lines[i + 2].strip().strip("|").split("|")]
            column = header.index("default")
            return value_of(row[column], stated_type) if column < len(row) else (False, None)
    return False, None


def extract(text: str, snapshot: dict[str, Any]) -> dict[str, Any]:
    fields = snapshot.get("fields") or {}
    sections = set(snapshot.get("sections") or {})
    known = set(fields) | sections
    lines = text.splitlines()
    keys: dict[str, Any] = {}
    unplaced = 0
    current = ""
    opening = False  # after a "###" heading, its first JSON example names the section it documents
    for number, line in enumerate(lines):
        if line.startswith("### "):
            current, opening = "", True
            continue
        example = SECTION_IN_EXAMPLE.match(line) if opening else None
        if example:
            name = example.group(1)
            # a top-level section of that name first (curriculum_learning, not data_efficiency's)
            placed = [s for s in sections if s == name] or [s for s in sections if s.endswith("." + name)]
            if len(placed) == 1:
                current = placed[0]
            opening = False
            continue
        match = HEADING.match(line)
        if not match:
            continue
        opening = False
        name, stated_type = match.group(1), match.group(2).strip().lower()
        path = None
        if ":" in name:  # qualified by its section: that path where the release has it, else its bare key
            qualified = name.replace(":", ".")
            if qualified in known:
                path = qualified
            name = name.rpartition(":")[2]
        prefix = current
        while path is None:  # innermost open section first, then its parents, then the top level
            candidate = f"{prefix}.{name}" if prefix else name
            if candidate in known:
                path = candidate
                break
            if not prefix:
                break
            prefix = prefix.rpartition(".")[0]
        if path is None:  # one key of that name inside the open section, else in the whole release
            matches = [p for p in known if p.rpartition(".")[2] == name]
            inside = [p for p in matches if current and p.startswith(current + ".")]
            path = inside[0] if len(inside) == 1 else matches[0] if len(matches) == 1 else None
        if path is None:
            unplaced += 1
            continue
        if path in sections:
            current = path
        record: dict[str, Any] = {"line": number + 1, "type": stated_type}
        ok, value = default_after(lines, number, stated_type)
        if ok:
            record["default"] = value
        keys.setdefault(path, record)
    return {"keys": dict(sorted(keys.items())), "unplaced": unplaced}


def version_key(text: str) -> tuple[int, ...]:
    """``0.19.5`` as (0, 19, 5); () for anything that is not a plain release number."""
    return tuple(int(p) for p in text.split(".")) if re.fullmatch(r"\d+(?:\.\d+)*", text) else ()


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True, text=True).stdout


def main(argv: list[str]) -> int:
    if not argv:
        print("usage: python dev/official_docs.py DEEPSPEED_GIT_DIR", file=sys.stderr)
        return 2
    repo = Path(argv[0])
    tags = set(git(repo, "tag").split())
    newest_tag = max((version_key(t[1:]) for t in tags if version_key(t[1:])), default=())
    generated = repo_generated_dir()
    missing = []
    for version in available_versions(generated):
        tag = f"v{version}"
        if tag in tags:
            commit = git(repo, "rev-list", "-n", "1", tag).strip()
            source = {"repo": "deepspeedai/DeepSpeed", "ref": tag, "commit": commit, "file": PAGE}
        elif version_key(version) > newest_tag:  # released after the clone was taken: its newest page
            commit, date = git(repo, "log", "-1", "--format=%H %cs", "HEAD", "--", PAGE).split()
            source = {"repo": "deepspeedai/DeepSpeed", "ref": f"main@{commit[:12]}", "commit": commit,
                      "file": PAGE, "date": date, "untagged": True}
        else:
            missing.append(version)
            continue
        try:
            text = git(repo, "show", f"{source['commit']}:{PAGE}")
        except subprocess.CalledProcessError:
            missing.append(version)
            continue
        snapshot = json.loads((generated / version / "fields.json").read_text(encoding="utf-8"))
        data = {"generated_by": "python dev/official_docs.py DEEPSPEED_GIT_DIR", "source": source,
                **extract(text, snapshot)}
        (generated / version / OUTPUT).write_text(json.dumps(data, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        print(f"{version}: {len(data['keys'])} keys, {data['unplaced']} unplaced")
    if missing:
        print(f"no tag {', '.join('v' + v for v in missing)} in {repo}: not extracted")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
