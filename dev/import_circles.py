"""Import circles among dsfields' modules, lazy (function-level) and type-only imports included.

A circle is a strongly connected group of two or more modules of one package folder, found from every
``import``/``from ... import`` in the source (AST, no module is imported). Prints one line per circle and the
line count of the largest modules, for #22's before/after figures.

    python dev/import_circles.py [--sizes N]
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "extractor" / "dsfields"


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def edges() -> dict[str, set[str]]:
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    base = ".".join(parts[: len(parts) - node.level + 1] + ([base] if base else []))
                targets = [base] + [f"{base}.{a.name}" for a in node.names]
            for target in targets:
                if target in modules and target != name:
                    graph[name].add(target)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components of two or more modules."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []
    sys.setrecursionlimit(10000)

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            group = []
            while True:
                w = stack.pop()
                on.discard(w)
                group.append(w)
                if w == v:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(found)


def package_circles() -> list[list[str]]:
    """The import circles of dsfields (``tests/test_layers.py`` holds them at none). A package's ``__init__``
    importing its own modules (and they it) is not a circle between jobs."""
    graph = {m: {t for t in ts if not (PACKAGE.joinpath(*t.split(".")[1:], "__init__.py").is_file()
                                       and m.startswith(t + "."))} for m, ts in edges().items()}
    return circles(graph)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, default=8, help="list the N largest modules")
    opts = parser.parse_args()
    found = package_circles()
    print(f"{len(found)} import circles")
    for group in found:
        print("  " + " <-> ".join(group))
    sizes = sorted(((len(p.read_text(encoding="utf-8").splitlines()), module_name(p)) for p in PACKAGE.rglob("*.py")),
                   reverse=True)
    print("largest modules (lines):")
    for lines, name in sizes[: opts.sizes]:
        print(f"  {lines:5}  {name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
