"""Scope the prose sentences that contradict some release's facts: ``python dev/scope_prose.py [--write]``.

A helper for the prose writer, not part of the package: it renders every entry for every release it is
shown on (``prose.explain_shown``), and each sentence of a summary/body/pitfall that
``dsfields.model.prose_facts`` finds contradicting some release becomes a piece with the conditions that
make it hold: ``requires`` the key or feature it names (a fact of the snapshot), ``default`` the value
it claims, ``since`` the release it names; a contiguous release range where no fact explains it.
The result is checked again; sentences no condition fixes are listed for a person to rewrite.
Without ``--write`` it only reports. The TOML is edited in place, entry by entry (comments and the
other entries stay as they are); run ``python -m dsfields.model.prose --compile`` afterwards.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

from dsfields.model import prose
from dsfields.model.prose_facts import Facts, Vocabulary, _norm, contradictions
from dsfields.model.store import available_versions, repo_generated_dir

SENTENCE_END = {"en": re.compile(r"(?<=[.!?])(?:\s+)(?=[A-Z`\"(])|\n\n+"),
                "zh": re.compile(r"(?<=[。！？；])|\n\n+")}
PART = re.compile(r'^(summary|body|pitfall) = ("""(?:.|\n)*?"""|"(?:[^"\\\n]|\\.)*")[ \t]*$', re.M)


def sentences(text: str, lang: str) -> list[str]:
    """``text`` cut after each sentence; each piece keeps its trailing whitespace (joined, they are ``text``)."""
    out, start = [], 0
    for match in SENTENCE_END[lang].finditer(text):
        end = match.end()
        if end > start and text[start:match.start()].strip():
            out.append(text[start:end])
            start = end
    if text[start:]:
        out.append(text[start:])
    return out


class Releases:
    def __init__(self) -> None:
        root = repo_generated_dir()
        self.versions = available_versions()
        self.raw = {v: json.loads((root / v / "fields.json").read_text(encoding="utf-8")) for v in self.versions}
        self.facts = {v: Facts.of_raw(r) for v, r in self.raw.items()}
        self.scopes = {v: prose.Scope.of_raw(r) for v, r in self.raw.items()}
        self.vocabulary = Vocabulary()
        for facts in self.facts.values():
            self.vocabulary.add(facts)
        self.paths = {v: sorted({*r["fields"], *r["sections"], *(r.get("removed") or {})} - {""})
                      for v, r in self.raw.items()}
        self._shown: dict[str, dict[tuple[str, str], dict[str, list[str]]]] = {}

    def shown(self, lang: str, file: str, key: str) -> dict[str, list[str]]:
        """release → the paths whose page shows entry ``key`` of ``file``."""
        if lang not in self._shown:
            index: dict[tuple[str, str], dict[str, list[str]]] = {}
            for version, paths in self.paths.items():
                for path in paths:
                    ex = prose.explain(path, lang)
                    if ex is not None:
                        index.setdefault((prose.file_for(path), ex.key), {}).setdefault(version, []).append(path)
            self._shown[lang] = index
        if file in prose.CATALOG_FILES.values():
            section = next(s for s, f in prose.CATALOG_FILES.items() if f == file)
            out = {}
            for version, raw in self.raw.items():
                names = (raw.get(f"{file}") or {}).get("names") or {}
                if key.lower() in {n.lower() for n in names}:
                    out[version] = [f"{section}.type"]
            return out
        return self._shown[lang].get((file, key), {})

    def bad(self, text: str, shown: dict[str, list[str]],
            conditions: dict[str, Any] | None = None) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for version, paths in shown.items():
            for path in paths:
                if conditions and not prose.holds(conditions, path, self.scopes[version]):
                    continue
                found = contradictions(path, text, self.facts[version], self.vocabulary)
                if found:
                    out.setdefault(version, []).extend(found)
        return out

    def path_for(self, name: str, near: str) -> str | None:
        """The JSON path a key name or feature in an entry for ``near`` means: the one sharing most of its prefix."""
        if "." in name:
            return name if name in self.vocabulary.paths else None
        norm = _norm(name)
        candidates = [p for p in self.vocabulary.paths if _norm(p.rpartition(".")[2]) == norm]
        if not candidates:
            return None
        near_parts = near.split(".")

        def shared(path: str) -> int:
            n = 0
            for a, b in zip(path.split("."), near_parts, strict=False):
                if a != b:
                    break
                n += 1
            return n

        return sorted(candidates, key=lambda p: (-shared(p), len(p), p))[0]

    def conditions_for(self, text: str, found: dict[str, list[str]], near: str, shown: dict[str, list[str]],
                       lang: str) -> dict[str, Any] | None:
        """Conditions under which the sentence holds everywhere it is shown, or None."""
        requires: list[str] = []
        since = None
        defaults: set[str] = set()
        for messages in found.values():
            for message in messages:
                if message.startswith("names release "):
                    number = message.split()[2].rstrip(",")
                    if since is None or prose.release_key(number) > prose.release_key(since):
                        since = number
                elif message.startswith("names "):
                    name = message.split()[2 if message.startswith("names key ") else 1].rstrip(",")
                    path = self.path_for(name, near)
                    if path and path not in requires:
                        requires.append(path)
                elif message.startswith("says the default is "):
                    defaults.add(message.split()[4].rstrip(";"))
        conditions: dict[str, Any] = {}
        if since:
            conditions["since"] = since
        if requires:
            conditions["requires"] = requires[0] if len(requires) == 1 else requires
        if len(defaults) == 1:
            claimed = defaults.pop()
            if claimed == "non-zero":
                conditions["default_not"] = 0
            else:
                conditions["default"] = json.loads(claimed.lower().replace("none", "null"))
        if conditions and not self.bad(text, shown, conditions):
            return conditions
        # No fact explains it: the contiguous run of releases where it holds.
        good = [v for v in self.versions if v in shown and v not in found]
        if not good:
            return None
        order = [v for v in self.versions if v in shown]
        first, last = order.index(good[0]), order.index(good[-1])
        if order[first:last + 1] != good:
            return None
        out: dict[str, Any] = {}
        if first > 0:
            out["since"] = good[0]
        if last < len(order) - 1:
            out["until"] = good[-1]
        return out if not self.bad(text, shown, out) else None


def toml_string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def toml_pieces(pieces: list[tuple[str, dict[str, Any] | None]]) -> str:
    lines = ["["]
    for text, conditions in pieces:
        if not conditions:
            lines.append(f"  {toml_string(text)},")
            continue
        items = []
        for key in prose.CONDITIONS:
            if key in conditions:
                value = conditions[key]
                items.append(f"{key} = {json.dumps(value, ensure_ascii=False)}")
        lines.append("  {" + ", ".join(items) + f", text = {toml_string(text)}}},")
    lines.append("]")
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    write = "--write" in argv
    releases = Releases()
    unfixed = []
    changed = 0
    for lang in prose.LANGUAGES:
        folder = Path(prose._root()) / lang
        for file in sorted(folder.glob("*.toml")):
            if file.stem == prose.HF_AUTO_FILE:
                continue
            source = file.read_text(encoding="utf-8")
            table = prose.read_file(lang, file.stem)
            edits: list[tuple[str, str, str]] = []  # (key, part, new TOML value)
            for key, raw in table.items():
                if not isinstance(raw, dict):
                    continue
                shown = None
                for part in ("summary", "body", "pitfall"):
                    value = raw.get(part)
                    if not isinstance(value, str):
                        continue
                    shown = shown if shown is not None else releases.shown(lang, file.stem, key)
                    if not releases.bad(value, shown):
                        continue
                    pieces: list[tuple[str, dict[str, Any] | None]] = []
                    for sentence in sentences(value.strip(), lang):
                        found = releases.bad(sentence, shown)
                        if not found:
                            if pieces and pieces[-1][1] is None:
                                pieces[-1] = (pieces[-1][0] + sentence, None)
                            else:
                                pieces.append((sentence, None))
                            continue
                        conditions = releases.conditions_for(sentence, found, key.replace("*", "x"), shown, lang)
                        if conditions is None:
                            unfixed.append(f"{lang}/{file.stem}.toml [{key}] {part}: {sentence.strip()[:90]}"
                                           f" — {sorted({m for ms in found.values() for m in ms})[:2]}")
                            pieces.append((sentence, None))
                        else:
                            pieces.append((sentence, conditions))
                    if any(c for _, c in pieces):
                        edits.append((key, part, toml_pieces(pieces)))
            if not edits:
                continue
            changed += len(edits)
            for key, part, new in edits:
                header = f"[{toml_string(key)}]"
                start = source.index(header)
                nxt = source.find("\n[", start + len(header))
                block_end = len(source) if nxt < 0 else nxt
                block = source[start:block_end]
                match = next(m for m in PART.finditer(block) if m.group(1) == part)
                block = block[:match.start()] + f"{part} = {new}" + block[match.end():]
                source = source[:start] + block + source[block_end:]
            if write:
                file.write_text(source, encoding="utf-8")
            print(f"{lang}/{file.name}: {len(edits)} parts scoped")
    print(f"{changed} parts scoped; {len(unfixed)} sentences left for a person:")
    for line in unfixed:
        print("  " + line)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
