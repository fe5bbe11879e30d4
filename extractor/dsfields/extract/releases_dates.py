"""Release dates of every snapshotted DeepSpeed version, from PyPI's upload time of its sdist.

The docs site dates its releases ("added since 2024-01-01") from ``generated/releases.json``; this
module is the only code that asks the network for them, so the site build stays offline. PyPI's
Simple API in its JSON form (PEP 691) lists every file with its ``upload-time``; the sdist's upload
time is the release's date (wheels can be uploaded later). Run ``python -m dsfields.extract.releases_dates``
after adding a snapshot; the output is sorted and byte-stable, so an unchanged index is a no-op in git.
"""

from __future__ import annotations

import argparse
import json
import urllib.request
from pathlib import Path
from typing import Any

from dsfields.model.store import available_versions, dumps, repo_generated_dir, write_atomic

SIMPLE_URL = "https://pypi.org/simple/deepspeed/"
ACCEPT = "application/vnd.pypi.simple.v1+json"
RELEASES_FILE = "releases.json"
SDIST_SUFFIX = ".tar.gz"


def fetch_index(url: str = SIMPLE_URL, timeout: float = 60) -> dict[str, Any]:
    request = urllib.request.Request(url, headers={"Accept": ACCEPT, "User-Agent": "dsfields (release dates)"})
    with urllib.request.urlopen(request, timeout=timeout) as response:
        return json.loads(response.read().decode("utf-8"))


def release_dates(index: dict[str, Any], versions: list[str]) -> dict[str, dict[str, str]]:
    """Version → ``{date, source}`` for every version whose sdist the index lists (UTC date of its upload)."""
    out: dict[str, dict[str, str]] = {}
    for version in versions:
        name = f"deepspeed-{version}{SDIST_SUFFIX}"
        for entry in index.get("files") or []:
            if entry.get("filename") == name and entry.get("upload-time"):
                out[version] = {"date": entry["upload-time"][:10],
                                "source": f"PyPI upload-time of {name} ({entry['upload-time']})"}
                break
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dsfields.extract.releases_dates", description=__doc__)
    parser.add_argument("--generated", type=Path, default=None, help="snapshot folder (default: the checkout's)")
    parser.add_argument("--index-file", type=Path, default=None,
                        help="a saved PEP 691 JSON answer of the Simple API instead of asking PyPI")
    args = parser.parse_args(argv)
    root = args.generated or repo_generated_dir()
    versions = available_versions(root)
    index = json.loads(args.index_file.read_text(encoding="utf-8")) if args.index_file else fetch_index()
    dates = release_dates(index, versions)
    missing = [v for v in versions if v not in dates]
    write_atomic(root / RELEASES_FILE, dumps({"generated_by": "python -m dsfields.extract.releases_dates",
                                              "releases": dates}))
    print(f"{root / RELEASES_FILE}: {len(dates)} release dates" + (f"; no sdist for {', '.join(missing)}"
                                                                    if missing else ""))
    return 1 if missing else 0


if __name__ == "__main__":
    raise SystemExit(main())
