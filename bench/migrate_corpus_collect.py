"""Collect real ds_config files written in 2020-2023 from fetched git mirrors into tests/fixtures/migrate_corpus/.

Run once by hand (needs the bare mirrors under /work/.mirror); what it wrote is committed with its
provenance (repo, path, commit, commit date), so the corpus test never needs the mirrors. Also dates the
shared corpus (/work/shared/realworld-configs) from the same mirrors: the date of the commit that last
changed the file up to the recorded commit.
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from pathlib import Path

MIRRORS = Path("/work/.mirror")
OUT = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "migrate_corpus"
SHARED = Path("/work/shared/realworld-configs")
REPOS = ["microsoft/DeepSpeedExamples", "microsoft/Megatron-DeepSpeed", "axolotl-ai-cloud/axolotl",
         "hiyouga/LLaMA-Factory", "microsoft/DeepSpeed"]
DS_KEYS = {"train_batch_size", "train_micro_batch_size_per_gpu", "zero_optimization", "fp16", "bf16", "optimizer"}
BEFORE = "2024-01-01"
PER_REPO = 12
_MAY_2020 = "c61e23b4b108df2af0dda7939ee59d4ae9090415"  # microsoft/DeepSpeed, the last commit with boolean ZeRO tests
EXTRA = [  # legacy forms the sweep above does not reach: the boolean ZeRO section of 2020 (found with git log -S)
    ("microsoft/DeepSpeed", _MAY_2020, "tests/model/BingBertSquad/deepspeed_bsz24_fp16_config.json"),
    ("microsoft/DeepSpeed", _MAY_2020, "tests/model/Megatron_GPT2/ds_config_func_bs4.json"),
    ("microsoft/DeepSpeed", _MAY_2020, "tests/model/Megatron_GPT2/ds_config_func_scheduler.json"),
    ("microsoft/DeepSpeedExamples", "c4319a2d05f06cfdb7bd2f3a414a785cfb02e164", "Megatron-LM/scripts/ds_config.json"),
]


def git(repo: str, *args: str) -> str:
    gitdir = MIRRORS / repo.replace("/", "+") / "repo"
    return subprocess.run(["git", "--git-dir", str(gitdir), *args], capture_output=True, text=True,
                          check=False).stdout


def candidates(repo: str) -> list[tuple[str, str, str]]:
    """(commit, date, path): each JSON path's last version before BEFORE."""
    seen: dict[str, tuple[str, str]] = {}
    log = git(repo, "log", "--all", f"--before={BEFORE}", "--name-only", "--diff-filter=AM",
              "--format=@%H %cI", "--", "*.json")
    commit = date = ""
    for line in log.splitlines():
        if line.startswith("@"):
            commit, date = line[1:].split()
        elif line.strip() and line not in seen:
            seen[line] = (commit, date)
    return [(c, d, p) for p, (c, d) in sorted(seen.items())]


def _digest(text: str) -> str:
    """The same for the same JSON however it is spaced; the text itself where it is not strict JSON."""
    try:
        text = json.dumps(json.loads(text), sort_keys=True)
    except ValueError:
        pass
    return hashlib.sha256(text.encode()).hexdigest()


def collect() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    known = {_digest(p.read_text()) for p in SHARED.glob("*.json") if p.name != "index.json"}
    provenance = []
    number = 0
    for repo in REPOS:
        taken = 0
        for commit, date, path in candidates(repo):
            if taken >= PER_REPO:
                break
            text = git(repo, "show", f"{commit}:{path}")
            try:
                data = json.loads(text)
            except ValueError:
                continue
            if not isinstance(data, dict) or len(DS_KEYS & set(data)) < 2:
                continue
            digest = _digest(text)
            if digest in known:
                continue
            known.add(digest)
            number += 1
            taken += 1
            name = f"{number:03d}_{repo.replace('/', '_')}_{Path(path).name}"
            (OUT / name).write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
            provenance.append({"file": name, "repo": repo, "path": path, "commit": commit, "date": date})
    for repo, commit, path in EXTRA:
        text = git(repo, "show", f"{commit}:{path}")
        if _digest(text) in known:
            continue
        known.add(_digest(text))
        number += 1
        date = git(repo, "log", "-1", "--format=%cI", commit).strip()
        name = f"{number:03d}_{repo.replace('/', '_')}_{Path(path).name}"
        (OUT / name).write_text(text if text.endswith("\n") else text + "\n", encoding="utf-8")
        provenance.append({"file": name, "repo": repo, "path": path, "commit": commit, "date": date})
    (OUT / "provenance.json").write_text(json.dumps(provenance, indent=1) + "\n", encoding="utf-8")
    print(f"{number} files into {OUT}")


def date_shared() -> None:
    index = json.loads((SHARED / "index.json").read_text())
    dates = {}
    for entry in index:
        gitdir = MIRRORS / entry["repo"].replace("/", "+") / "repo"
        if not gitdir.is_dir():
            continue
        date = git(entry["repo"], "log", "-1", "--format=%cI", entry["commit"], "--", entry["path"]).strip()
        how = "commit date of the last change to the file up to the recorded commit"
        if not date:  # the recorded commit is not in the mirror: the first commit holding the same JSON
            wanted = _digest((SHARED / entry["file"]).read_text())
            for line in reversed(git(entry["repo"], "log", "--all", "--format=%H %cI", "--",
                                     entry["path"]).splitlines()):
                commit, when = line.split()
                try:
                    if _digest(git(entry["repo"], "show", f"{commit}:{entry['path']}")) == wanted:
                        date, how = when, "commit date of the first commit with the same JSON"
                        break
                except ValueError:
                    continue
        if date:
            dates[entry["file"]] = {"date": date, "how": how}
    (OUT / "shared_dates.json").write_text(json.dumps(dates, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{len(dates)} of {len(index)} shared files dated")


if __name__ == "__main__":
    collect()
    date_shared()
    sys.exit(0)
