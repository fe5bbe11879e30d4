"""``dsfields convert`` against other accelerate releases' own DeepSpeedPlugin, on the YAML corpus.

The test suite compares with the installed accelerate only (no download in tests). This installs each release
asked for into its own folder (``pip install --no-deps --target``, the ordinary client; cached under
``~/.cache/dsfields/accelerate-releases/V``), runs ``bench/accelerate_reference.py`` with that folder first on the
path, and compares each answer with ``dsfields.hf.plugin.build`` on that release's snapshot.

    python bench/accelerate_releases.py 0.21.0 0.28.0 1.8.1 ...
Prints one line per release: agreeing / differing files (and the first differences).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORPUS = REPO / "tests" / "fixtures" / "accelerate-yaml"
CACHE = Path.home() / ".cache" / "dsfields" / "accelerate-releases"
sys.path.insert(0, str(REPO / "extractor"))


def installed(version: str) -> Path:
    target = CACHE / version
    if not (target / "accelerate").is_dir():
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(target),
                        f"accelerate=={version}"], check=True, timeout=600)
    return target


def compare(version: str) -> tuple[int, list[str]]:
    from dsfields.hf.arguments import parse_accelerate_yaml
    from dsfields.hf.plugin import AccelerateRefusal, build

    files = sorted(str(p) for p in CORPUS.glob("*.yaml"))
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "rows.json"
        subprocess.run([sys.executable, str(REPO / "bench" / "accelerate_reference.py"), *files, "--json", str(out)],
                       env=os.environ | {"PYTHONPATH": str(installed(version))}, check=True, timeout=900)
        rows = {row["file"]: row for row in json.loads(out.read_text(encoding="utf-8"))}
    agree, wrong = 0, []
    for name in files:
        row, cwd = rows[name], os.getcwd()
        assert row["accelerate"] == version, row["accelerate"]
        os.chdir(os.path.dirname(name))
        try:
            mine = build(parse_accelerate_yaml(Path(name).read_text(encoding="utf-8"), name), version, name=name)
        except AccelerateRefusal as exc:
            mine = exc
        finally:
            os.chdir(cwd)
        if "error" in row:
            good = isinstance(mine, AccelerateRefusal) and (mine.kind, mine.message) == (row["error"]["type"],
                                                                                         row["error"]["message"])
        else:
            good = not isinstance(mine, AccelerateRefusal) and mine.config == row["config"] and \
                mine.attributes.get("zero3_init_flag") == row["zero3_init_flag"]
        agree += good
        if not good:
            wrong.append(Path(name).name)
    return agree, wrong


def main(argv: list[str] | None = None) -> int:
    versions = sys.argv[1:] if argv is None else argv
    failed = 0
    for version in versions:
        agree, wrong = compare(version)
        print(f"accelerate {version}: {agree} agree, {len(wrong)} differ {wrong[:5]}", flush=True)
        failed += bool(wrong)
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
