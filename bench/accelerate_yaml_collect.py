"""Collect the accelerate YAML corpus of ``tests/fixtures/accelerate-yaml/`` (``dsfields convert``'s agreement test).

Every distinct version (git blob) of every YAML file with ``distributed_type: DEEPSPEED`` in the whole history of
four repositories (accelerate, LLaMA-Factory, alignment-handbook, trl), plus the YAML blocks of accelerate's
DeepSpeed docs. Mirrors are read with ``git`` from the folders ``MIRRORS`` names (the ``fetch`` tool's copies). A
``deepspeed_config_file`` is fetched from the same commit (resolved as accelerate resolves it: against the folder
the user launches from, taken as the YAML's own folder, else the repository root) and the YAML line is rewritten
to its local name; ``PROVENANCE.json`` records repository, path, commit, blob, date and every rewrite.

    python bench/accelerate_yaml_collect.py [--mirrors /work/.mirror]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import posixpath
import re
import subprocess
from pathlib import Path

REPOS = ("huggingface/accelerate", "hiyouga/LLaMA-Factory", "huggingface/alignment-handbook", "huggingface/trl")
DOCS = ("docs/source/usage_guides/deepspeed.md", "docs/source/concept_guides/sequence_parallelism.md")
OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "accelerate-yaml"


def git(mirror: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(mirror), *args], capture_output=True, text=True, check=True).stdout


def blob_at(mirror: Path, commit: str, path: str) -> str | None:
    try:
        return git(mirror, "show", f"{commit}:{path}")
    except subprocess.CalledProcessError:
        return None


def collect(mirrors: Path) -> list[dict]:
    found: list[dict] = []
    seen: set[str] = set()
    for repo in REPOS:
        mirror = mirrors / repo.replace("/", "+") / "repo"
        log = git(mirror, "log", "--all", "--format=C %H %cI", "--raw", "--no-abbrev", "--", "*.yaml", "*.yml")
        commit = date = ""
        for line in log.splitlines():
            if line.startswith("C "):
                _c, commit, date = line.split()
            elif line.startswith(":"):
                meta, path = line.split("\t", 1)
                blob = meta.split()[3]
                if set(blob) == {"0"} or blob in seen:
                    continue
                text = git(mirror, "cat-file", "-p", blob)
                if "distributed_type: DEEPSPEED" not in text:
                    continue
                seen.add(blob)
                found.append({"repo": repo, "path": path.split("\t")[-1], "commit": commit, "date": date,
                              "blob": blob, "text": text})
    mirror = mirrors / "huggingface+accelerate" / "repo"
    head = git(mirror, "rev-parse", "HEAD").strip()
    for path in DOCS:
        text = blob_at(mirror, head, path) or ""
        for match in re.finditer(r"```(?:bash|yaml|yml)?\n(.*?)```", text, re.S):
            block = match.group(1)
            if "distributed_type: DEEPSPEED" not in block:
                continue
            body = block[block.find("compute_environment"):] if "compute_environment" in block else block
            line = text[:match.start()].count("\n") + 1
            found.append({"repo": "huggingface/accelerate", "path": f"{path}#L{line}", "commit": head, "date": "",
                          "blob": "", "text": body})
    return found


def write(found: list[dict], mirrors: Path) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for old in OUT.glob("*"):
        old.unlink()
    provenance = []
    for number, item in enumerate(found):
        repo_name = item["repo"].split("/")[1]
        stem = re.sub(r"[^A-Za-z0-9]+", "-", item["path"].rsplit("/", 1)[-1].split("#")[0].rsplit(".", 1)[0])
        name = f"{number:03d}-{repo_name}-{stem}.yaml"
        text = item["text"]
        rewrites = []
        for match in re.finditer(r"^(\s*deepspeed_config_file:\s*)(\S+)\s*$", text, re.M):
            target = match.group(2)
            mirror = mirrors / item["repo"].replace("/", "+") / "repo"
            folder = posixpath.dirname(item["path"].split("#")[0])
            tries = ([posixpath.normpath(posixpath.join(folder, target)), target] if not target.startswith("/")
                     else [target.split("/accelerate/", 1)[-1]])
            commit = item["commit"]
            data = next(((t, d) for t in tries if (d := blob_at(mirror, commit, t)) is not None), None)
            if data is None:
                continue
            local = f"{number:03d}-{posixpath.basename(data[0])}"
            (OUT / local).write_text(data[1], encoding="utf-8")
            text = text.replace(match.group(0), match.group(1) + local)
            rewrites.append({"from": target, "to": local, "source": f"{item['repo']}:{data[0]}@{commit}"})
        (OUT / name).write_text(text, encoding="utf-8")
        provenance.append({"file": name, "repo": item["repo"], "path": item["path"], "commit": item["commit"],
                           "date": item["date"], "blob": item["blob"],
                           "sha256": hashlib.sha256(item["text"].encode()).hexdigest(), "rewrites": rewrites})
    (OUT / "PROVENANCE.json").write_text(json.dumps({
        "generated_by": "python bench/accelerate_yaml_collect.py",
        "what": "accelerate YAML configs with distributed_type: DEEPSPEED: every distinct blob in the history of "
                "the repositories below, and the YAML blocks of accelerate's DeepSpeed docs",
        "files": provenance}, indent=1) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--mirrors", default="/work/.mirror", type=Path)
    args = parser.parse_args(argv)
    found = collect(args.mirrors)
    write(found, args.mirrors)
    print(f"{len(found)} YAML files -> {OUT}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
