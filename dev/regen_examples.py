"""Rewrite the output blocks of the docs' and the README's command examples by running their commands, the way
tests/test_docs_examples.py and tests/test_readme_examples.py run them (docs/ or the checkout's root, 100
columns, no zh locale, stdout then stderr). For a deliberate change of output: the tests then pass, and
``git diff`` shows what readers will see differently. Never type an example's output by hand.

    PYTHONPATH=extractor python dev/regen_examples.py [PAGE.md ...]     (default: README.md and docs/*.md)
"""

from __future__ import annotations

import io
import os
import re
import shlex
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

from dsfields.cli import main

REPO = Path(__file__).resolve().parents[1]
EXAMPLE = re.compile(r"^```bash\n(dsfields [^\n]*)\n```\n\n```text\n(.*?)^```", re.S | re.M)


def run(command: str, cwd: Path) -> str:
    out, err = io.StringIO(), io.StringIO()
    here = Path.cwd()
    os.chdir(cwd)
    try:
        with redirect_stdout(out), redirect_stderr(err):
            try:
                main(shlex.split(command)[1:])
            except SystemExit:
                pass
    finally:
        os.chdir(here)
    return out.getvalue() + err.getvalue()


def regenerate(page: Path) -> bool:
    """True when the page changed."""
    cwd = REPO if page.name == "README.md" else REPO / "docs"
    text = page.read_text(encoding="utf-8")
    new = EXAMPLE.sub(lambda m: f"```bash\n{m[1]}\n```\n\n```text\n{run(m[1], cwd)}```", text)
    if new != text:
        page.write_text(new, encoding="utf-8")
    return new != text


def entry(argv: list[str]) -> int:
    os.environ["COLUMNS"] = "100"
    for variable in ("LC_ALL", "LC_MESSAGES", "LANG"):
        os.environ.pop(variable, None)
    pages = [Path(a).resolve() for a in argv] or [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
    for page in pages:
        if regenerate(page):
            print(f"rewrote {page.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(entry(sys.argv[1:]))
