"""Where the built docs site's bytes go (issue 24 point 6: whole site <= 150 MB on disk, median page <= 40 KB).

Prints the disk usage (``du``: blocks) and apparent size, file counts, the median HTML page, and the bytes
by category: each HTML page cut into its parts (head, header, primary sidebar, table of contents, article,
footer, scripts; GitHub source links inside articles counted apart) and the other files by kind. With a
second site, both side by side.

    python bench/site_weight.py SITE [OTHER_SITE]
"""

from __future__ import annotations

import re
import statistics
import subprocess
import sys
from collections import Counter
from pathlib import Path

PARTS = [
    ("head", re.compile(r"<head>.*?</head>", re.S)),
    ("header", re.compile(r'<header class="md-header.*?</header>', re.S)),
    ("sidebar", re.compile(r'<div class="md-sidebar md-sidebar--primary".*?(?=<div class="md-sidebar md-sidebar--'
                           r'secondary"|<div class="md-content")', re.S)),
    ("toc (right)", re.compile(r'<div class="md-sidebar md-sidebar--secondary".*?(?=<div class="md-content")', re.S)),
    ("article", re.compile(r'<div class="md-content".*?</article>\s*</div>', re.S)),
    ("footer", re.compile(r'<footer class="md-footer">.*?</footer>', re.S)),
    ("scripts", re.compile(r"<script[\s>].*?</script>", re.S)),
]
GITHUB = re.compile(r'href="https://github\.com/[^"]*"')


def du(path: Path, apparent: bool) -> int:
    args = ["du", "-sb" if apparent else "-sB1", str(path)]
    return int(subprocess.run(args, check=True, stdout=subprocess.PIPE, text=True).stdout.split()[0])


def kind(rel: str) -> str:
    if rel.endswith(".html"):
        return "html"
    if rel.endswith("search/search_index.json"):
        return "search index"
    if "/releases/keys/" in f"/{rel}":
        return "finder keys"
    if "/releases/data/" in f"/{rel}":
        return "release data"
    if "schema" in rel:
        return "schemas"
    if "/assets/" in f"/{rel}":
        return "theme assets"
    return "other " + (Path(rel).suffix or "(none)")


def measure(site: Path) -> dict[str, object]:
    files = [p for p in site.rglob("*") if p.is_file()]
    sizes: Counter[str] = Counter()
    counts: Counter[str] = Counter()
    html_sizes = []
    for path in files:
        rel = path.relative_to(site).as_posix()
        size = path.stat().st_size
        category = kind(rel)
        counts[category] += 1
        if category != "html":
            sizes[category] += size
            continue
        html_sizes.append(size)
        text = path.read_text(encoding="utf-8", errors="replace")
        rest = len(text.encode())
        for name, pattern in PARTS:
            found = pattern.search(text) if name != "scripts" else None
            if name == "scripts":
                part = sum(len(m.group().encode()) for m in pattern.finditer(text[text.find("</footer>"):]))
            else:
                part = len(found.group().encode()) if found else 0
            if name == "article" and found:
                links = sum(len(m.group().encode()) for m in GITHUB.finditer(found.group()))
                sizes["html: article, GitHub links"] += links
                part -= links
            sizes[f"html: {name}"] += part
            rest -= part
        sizes["html: rest"] += rest
    html_sizes.sort()
    big = [s for s in html_sizes if s > 1024]
    return {"du": du(site, False), "apparent": du(site, True), "files": len(files), "html": counts["html"],
            "median html": statistics.median(html_sizes) if html_sizes else 0,
            "median html > 1 KiB": big[len(big) // 2] if big else 0, "sizes": sizes, "counts": counts}


def main() -> None:
    sites = [Path(arg) for arg in sys.argv[1:]]
    if not sites:
        sys.exit("usage: python bench/site_weight.py SITE [OTHER_SITE]")
    results = [measure(site) for site in sites]
    mb = 10**6  # MB as the issue counts them (150 MB = 150,000,000 bytes), not MiB
    print("".ljust(32) + "".join(str(s)[-24:].rjust(26) for s in sites))
    for key in ("du", "apparent"):
        print(f"{key:32}" + "".join(f"{r[key] / mb:23.1f} MB" for r in results))
    for key in ("files", "html"):
        print(f"{key:32}" + "".join(f"{r[key]:26}" for r in results))
    for key in ("median html", "median html > 1 KiB"):
        print(f"{key:32}" + "".join(f"{r[key] / 1024:23.1f} KiB" for r in results))
    names = sorted({name for r in results for name in r["sizes"]}, key=lambda n: -results[0]["sizes"].get(n, 0))
    for name in names:
        print(f"{name:32}" + "".join(f"{r['sizes'].get(name, 0) / mb:23.2f} MB" for r in results))


if __name__ == "__main__":
    main()
