"""Move every Chinese string literal of ``extractor/dsfields`` into the catalogue (``prose/chinese.json``, group
``text``): the one-line conversion ``tests/test_chinese_catalogue.py`` asks for, done for a whole branch at once.

    python dev/move_chinese.py            # rewrite the modules and the catalogue in place
    python dev/move_chinese.py --check    # list what would move, change nothing (exit 1 when something would)

Each literal (``"卸载"``, ``f"{path}：没有此键"``) becomes ``chinese.text("<module>.<slug>"[, name=expr ...])``; an
f-string's fields become the template's named placeholders (``!r`` and ``:spec`` kept), so the output is the same
bytes. The slug comes from the English beside it (the other branch of ``zh if ... else en``, the element before it
in a call or tuple, its key in a dict), else from the template. Docstrings stay. Review the keys it chose and the
wrapped lines (``ruff check``) before committing.
"""
from __future__ import annotations

import ast
import json
import re
import sys
from pathlib import Path

PKG = Path(__file__).resolve().parent.parent / "extractor" / "dsfields"
CATALOGUE = PKG / "prose" / "chinese.json"
CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")  # as tests/test_chinese_catalogue.HAN
SKIP = {"model/chinese.py"}


def docstring_nodes(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                out.add(id(body[0].value))
        # attribute docstrings: a bare string expression statement
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Expr) and isinstance(child.value, ast.Constant):
                out.add(id(child.value))
    return out


def slugify(text: str) -> str:
    words = re.findall(r"[A-Za-z][A-Za-z0-9]*", text)
    return "_".join(w.lower() for w in words[:6])


def has_cjk(node: ast.AST) -> bool:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return bool(CJK.search(node.value))
    if isinstance(node, ast.JoinedStr):
        return any(isinstance(v, ast.Constant) and CJK.search(v.value) for v in node.values)
    return False


def english_partner(node: ast.AST, parents: dict[int, ast.AST]) -> str:
    parent = parents.get(id(node))
    cands: list[ast.AST] = []
    if isinstance(parent, ast.IfExp):
        cands = [parent.orelse if parent.body is node else parent.body]
    elif isinstance(parent, (ast.Call, ast.Tuple, ast.List)):
        seq = parent.args if isinstance(parent, ast.Call) else parent.elts
        if node in seq:
            i = seq.index(node)
            cands = [seq[i - 1]] if i > 0 else []
    elif isinstance(parent, ast.Dict):
        for k, v in zip(parent.keys, parent.values, strict=True):
            if v is node and isinstance(k, ast.Constant) and isinstance(k.value, str):
                cands = [k]
    for c in cands:
        if isinstance(c, ast.Constant) and isinstance(c.value, str) and not CJK.search(c.value):
            return c.value
        if isinstance(c, ast.JoinedStr) and not has_cjk(c):
            return "".join(v.value if isinstance(v, ast.Constant) else " " for v in c.values)
    return ""


def template_of(node: ast.AST, src: str) -> tuple[str, list[tuple[str, str]]]:
    if isinstance(node, ast.Constant):
        return node.value, []
    parts: list[str] = []
    values: list[tuple[str, str]] = []
    for v in node.values:
        if isinstance(v, ast.Constant):
            parts.append(v.value.replace("{", "{{").replace("}", "}}"))
            continue
        expr = ast.get_source_segment(src, v.value)
        name = re.sub(r"\W+", "_", expr).strip("_")
        if not name.isascii() or not name.isidentifier() or len(name) > 30 or name[0].isdigit():
            name = f"v{len(values)}"
        if name in ("key", "self"):
            name = f"{name}_"
        known = dict(values)
        if name in known and known[name] != expr:
            name = f"{name}{len(values)}"
        if name not in known:
            values.append((name, expr))
        conv = {-1: "", 115: "!s", 114: "!r", 97: "!a"}[v.conversion]
        spec = ""
        if v.format_spec is not None:
            assert all(isinstance(p, ast.Constant) for p in v.format_spec.values), expr
            spec = ":" + "".join(p.value for p in v.format_spec.values)
        parts.append("{" + name + conv + spec + "}")
    return "".join(parts), values



def add_import(src: str) -> str:
    """``src`` with ``from dsfields.model import chinese`` after its last top-level import."""
    tree2 = ast.parse(src)
    last = None
    for stmt in tree2.body:
        if isinstance(stmt, (ast.Import, ast.ImportFrom)):
            last = stmt
        elif last is not None:
            break
    line_no = last.end_lineno if last else 0
    ls = src.splitlines(keepends=True)
    ls.insert(line_no, "from dsfields.model import chinese\n")
    return "".join(ls)


def one_pass(src: str, rel: str, catalogue: dict[str, str]) -> tuple[str, int]:
    """One rewrite of the outermost Chinese literals of ``src`` (a nested one is reached by the next pass)."""
    tree = ast.parse(src)
    docs = docstring_nodes(tree)
    parents = {}
    for node in ast.walk(tree):
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node

    def ancestors(node: ast.AST):
        p = parents.get(id(node))
        while p is not None:
            yield p
            p = parents.get(id(p))

    targets = []
    for node in ast.walk(tree):
        if id(node) in docs:
            continue
        if isinstance(node, ast.Constant) and isinstance(parents.get(id(node)), ast.JoinedStr):
            continue
        if has_cjk(node):
            targets.append(node)
    tids = {id(t) for t in targets}
    targets = [t for t in targets if not any(id(a) in tids for a in ancestors(t))]
    if not targets:
        return src, 0
    module = rel.removesuffix(".py").replace("/", ".")
    lines = src.splitlines(keepends=True)
    offsets = [0]
    for line in lines:
        offsets.append(offsets[-1] + len(line))

    def pos(lineno: int, col: int) -> int:
        line = lines[lineno - 1]
        return offsets[lineno - 1] + len(line.encode("utf-8")[:col].decode("utf-8"))

    edits = []
    for node in targets:
        tpl, values = template_of(node, src)
        eng = english_partner(node, parents)
        slug = slugify(eng) or slugify(tpl) or "text"
        key = f"{module}.{slug}"
        n = 2
        base = key
        while key in catalogue and catalogue[key] != tpl:
            key = f"{base}_{n}"
            n += 1
        catalogue[key] = tpl
        outer = None
        for a in ancestors(node):
            if isinstance(a, ast.JoinedStr):
                outer = a
        q = '"'
        if outer is not None:
            seg = ast.get_source_segment(src, outer)
            first = re.match(r"[a-zA-Z]*(['\"])", seg).group(1)
            q = "'" if first == '"' else '"'
        args = "".join(f", {name}={expr}" for name, expr in values)
        call = f"chinese.text({q}{key}{q}{args})"
        edits.append((pos(node.lineno, node.col_offset), pos(node.end_lineno, node.end_col_offset), call))
    edits.sort(reverse=True)
    for start, end, call in edits:
        src = src[:start] + call + src[end:]
    return src, len(targets)


def main() -> int:
    check = "--check" in sys.argv[1:]
    document = json.loads(CATALOGUE.read_text(encoding="utf-8"))
    catalogue = dict(document["text"])
    moved = 0
    for path in sorted(PKG.rglob("*.py")):
        rel = path.relative_to(PKG).as_posix()
        if rel in SKIP:
            continue
        src = path.read_text(encoding="utf-8")
        total = 0
        while True:
            src, count = one_pass(src, rel, catalogue)
            if not count:
                break
            total += count
        if total:
            moved += total
            print(f"{rel}: {total} literal(s)")
            if not check:
                if "from dsfields.model import chinese" not in src:
                    src = add_import(src)
                path.write_text(src, encoding="utf-8")
    if moved and not check:
        document["text"] = dict(sorted(catalogue.items()))
        CATALOGUE.write_text(json.dumps(document, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
    return 1 if moved and check else 0


if __name__ == "__main__":
    raise SystemExit(main())
