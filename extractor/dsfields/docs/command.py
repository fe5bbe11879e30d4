"""``dsfields docs build|serve``: render the snapshots into Markdown, then build or serve the site with mkdocs.

mkdocs runs in a child process (``python -m mkdocs``) so a failed strict build is an exit code,
not an exception inside our process, and so the base install without the ``docs`` extra still
renders the pages (``--no-mkdocs``) and says which extra is missing.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import subprocess
import sys
import time
from pathlib import Path

from dsfields.model.store import SnapshotError, repo_generated_dir


def add_arguments(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="docs_action", metavar="ACTION", required=True)
    rendered = "Render every snapshot into docs/<version>/ and docs/releases/, then"
    build = actions.add_parser("build", help="render the pages and build the site with mkdocs --strict",
                               description=f"{rendered} build the site with mkdocs --strict.")
    serve = actions.add_parser("serve", help="render the pages and serve the site locally (mkdocs serve)",
                               description=f"{rendered} serve it (mkdocs serve).")
    for sub in (build, serve):
        sub.add_argument("--config-file", type=Path, default=None,
                         help="mkdocs.yml (default: the checkout's, found from the current folder upwards)")
        sub.add_argument("--generated", type=Path, default=None,
                         help="snapshot folder (default: $DSFIELDS_GENERATED or the checkout's generated/)")
    build.add_argument("--site-dir", type=Path, default=None, help="output folder (default: site/ next to mkdocs.yml)")
    build.add_argument("--no-mkdocs", action="store_true", help="only render the Markdown pages")
    serve.add_argument("--dev-addr", default="127.0.0.1:8000", help="address to serve on (default: %(default)s)")


def find_config(explicit: Path | None) -> Path | None:
    """The mkdocs.yml to use: explicit, else the first one from the current folder up, else the checkout's."""
    if explicit:
        return explicit if explicit.is_file() else None
    here = Path.cwd().resolve()
    checkout = Path(__file__).resolve().parents[3]
    for folder in (here, *here.parents, checkout):
        if (folder / "mkdocs.yml").is_file():
            return folder / "mkdocs.yml"
    return None


def run(args: argparse.Namespace) -> int:
    from dsfields.docs.render import LANDING_SNIPPET, generated_folders, load_site, render

    started = time.perf_counter()
    config = find_config(args.config_file)
    if config is None:
        print("dsfields docs: no mkdocs.yml found (run from the dsfields checkout or pass --config-file)",
              file=sys.stderr)
        return 2
    root = config.parent
    try:
        site = load_site(args.generated or repo_generated_dir())
    except (SnapshotError, FileNotFoundError) as exc:
        print(f"dsfields docs: {exc}", file=sys.stderr)
        return 2
    pages = render(site, root / "docs")
    rendered = time.perf_counter() - started
    # Hand-written pages are the .md files outside the generated folders; the landing snippet is not a page.
    generated = set(generated_folders(root / "docs"))
    hand_written = [p for p in (root / "docs").rglob("*.md") if not generated & set(p.parents)]
    page_count = sum(page.path != LANDING_SNIPPET for page in pages) + len(hand_written)
    print(f"dsfields docs: rendered {page_count} pages for {len(site.versions)} release(s) in {rendered:.1f} s")
    if args.docs_action == "build" and args.no_mkdocs:
        return 0
    if importlib.util.find_spec("mkdocs") is None or importlib.util.find_spec("material") is None:
        print("dsfields docs: mkdocs-material is not installed; install it with `pip install dsfields[docs]`",
              file=sys.stderr)
        return 2
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    command = [sys.executable, "-m", "mkdocs"]
    if args.docs_action == "serve":
        command += ["serve", "--config-file", str(config), "--dev-addr", args.dev_addr]
        return subprocess.call(command, cwd=root, env=env)
    site_dir = (args.site_dir or root / "site").resolve()
    # No --quiet: it hides warnings from mkdocs' strict-mode counter, and a broken link would pass.
    command += ["build", "--strict", "--config-file", str(config), "--site-dir", str(site_dir)]
    code = subprocess.call(command, cwd=root, env=env)
    if code:
        print("dsfields docs: mkdocs build --strict failed (see its messages above)", file=sys.stderr)
        return 1
    print(f"dsfields docs: built {page_count} pages into {site_dir} in {time.perf_counter() - started:.1f} s")
    return 0
