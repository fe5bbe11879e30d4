"""The few source files of a transformers or accelerate release the HF rule witness reads, fetched once.

The rules (:mod:`dsfields.extract.hf.rule_witness`) are read from each release's own source, not the installed
one. A transformers sdist is ~10 MB and only six of its files matter, so each release is fetched with
``pip download --no-deps --no-binary :all:`` (the ordinary client), those files are unpacked under
``~/.cache/dsfields/hf-src/<dist>-<version>/`` and the archive is deleted; a second run reads the cache.

``python -m dsfields.extract.hf.sources [--dist transformers|accelerate] [--versions V...]`` fills the cache
(default: the last patch of every minor the coverage window takes, from ``pip index versions``).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

CACHE = Path(os.environ.get("DSFIELDS_HF_SRC", Path.home() / ".cache" / "dsfields" / "hf-src"))
WANTED = {
    "transformers": ("src/transformers/integrations/deepspeed.py", "src/transformers/training_args.py",
                     "src/transformers/trainer_utils.py", "src/transformers/debug_utils.py",
                     "src/transformers/utils/generic.py", "src/transformers/dependency_versions_table.py",
                     "src/transformers/trainer.py", "src/transformers/trainer_optimizer.py",
                     "src/transformers/optimization.py"),
    "accelerate": ("src/accelerate/utils/dataclasses.py", "src/accelerate/accelerator.py",
                   "src/accelerate/utils/deepspeed.py", "src/accelerate/utils/launch.py",
                   "src/accelerate/commands/config/config_args.py", "src/accelerate/commands/launch.py",
                   "src/accelerate/utils/constants.py", "src/accelerate/state.py"),
}
"""The files the witness reads, as they sit in the sdist under its top folder."""
FIRST = {"transformers": (4, 36), "accelerate": (0, 21)}
"""The coverage window: transformers from 4.36 (December 2023, three years back) and accelerate from 0.21, the
oldest release transformers 4.36 accepts (its ``accelerate>=0.21.0``)."""


def source_dir(dist: str, version: str) -> Path:
    return CACHE / f"{dist}-{version}"


def published(dist: str) -> list[str]:
    """Every final release of ``dist`` on the index, from ``pip index versions`` (newest first)."""
    out = subprocess.run([sys.executable, "-m", "pip", "index", "versions", dist], capture_output=True, text=True,
                         check=True, timeout=120).stdout
    line = next(x for x in out.splitlines() if x.startswith("Available versions:"))
    return [v.strip() for v in line.split(":", 1)[1].split(",") if re.fullmatch(r"\d+\.\d+\.\d+", v.strip())]


def last_patches(versions: list[str], first: tuple[int, int]) -> list[str]:
    """The newest patch of every minor at or after ``first``, oldest minor first."""
    best: dict[tuple[int, int], tuple[int, int, int]] = {}
    for v in versions:
        parts = tuple(int(p) for p in v.split("."))
        if parts[:2] >= first and parts > best.get(parts[:2], (-1, -1, -1)):
            best[parts[:2]] = parts  # type: ignore[assignment]
    return [".".join(map(str, best[k])) for k in sorted(best)]


def fetch(dist: str, version: str) -> Path:
    """The cached source folder of ``dist==version``, downloading and unpacking it when missing."""
    target = source_dir(dist, version)
    meta_file = target / "meta.json"
    if meta_file.is_file():
        # a cache filled when fewer files were read is topped up (the whole sdist fetched again, once)
        if not set(WANTED[dist]) - set(json.loads(meta_file.read_text(encoding="utf-8")).get("wanted", [])):
            return target
    with tempfile.TemporaryDirectory() as tmp:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
                        "--no-build-isolation", "-q", f"{dist}=={version}", "-d", tmp], check=True, timeout=900,
                       capture_output=True)
        archive = next(Path(tmp).glob("*.tar.gz"))
        newest = 0
        found: list[str] = []
        with tarfile.open(archive) as tar:
            for member in tar.getmembers():
                newest = max(newest, int(member.mtime))
                inner = member.name.split("/", 1)[1] if "/" in member.name else ""
                if inner in WANTED[dist] and member.isfile():
                    data = tar.extractfile(member)
                    assert data is not None
                    path = target / inner
                    path.parent.mkdir(parents=True, exist_ok=True)
                    path.write_bytes(data.read())
                    found.append(inner)
        target.mkdir(parents=True, exist_ok=True)
        # The newest file time in the sdist is when the release was built: it orders transformers and
        # accelerate releases against each other (which accelerate was current when a transformers came out).
        meta = {"dist": dist, "version": version, "sdist": archive.name, "sdist_bytes": archive.stat().st_size,
                "built": newest, "files": sorted(found), "wanted": sorted(WANTED[dist])}
        (target / "meta.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dsfields.extract.hf.sources", description=__doc__.split("\n")[0])
    parser.add_argument("--dist", choices=sorted(WANTED), action="append", default=None)
    parser.add_argument("--versions", nargs="+", default=None)
    args = parser.parse_args(argv)
    for dist in args.dist or sorted(WANTED):
        versions = args.versions or last_patches(published(dist), FIRST[dist])
        for version in versions:
            print(fetch(dist, version), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
