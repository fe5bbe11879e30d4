"""What the commands answer for an old release names only what that release has (issue 39, point 1: the CLI).

``lookup``'s prose is checked entry by entry in ``test_prose_facts.py``. Here the other answers: ``check`` (bare and
``--hf``), ``resolve`` and ``estimate`` of real configs, ``explain`` of real pasted messages, and ``lookup`` of every
optimizer and scheduler type, each for the oldest release, a middle one and the newest, in English and Chinese,
read line by line through ``dsfields.model.prose_facts.contradictions`` against the release asked for. A key the
user's own file writes is the user's words, not ours (``check`` says what that release does with it); release
numbers are not claims here (an answer says "from 0.17.6 on").
"""

from __future__ import annotations

import io
import json
import re
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest
from conftest import SHARED, corpus_configs

from dsfields.cli import main
from dsfields.explain import ACTIONS
from dsfields.model.prose_facts import Facts, Vocabulary, contradictions
from dsfields.model.store import available_versions, load, repo_generated_dir

pytestmark = pytest.mark.data

VERSIONS = available_versions()
RELEASES = (VERSIONS[0], "0.14.4", VERSIONS[-1])
COMMANDS = (("check",), ("check", "--hf"), ("resolve",), ("estimate", "--params", "7B"))


@pytest.fixture(scope="module")
def facts() -> tuple[dict[str, Facts], Vocabulary]:
    root, vocabulary, by_release = repo_generated_dir(), Vocabulary(), {}
    for version in VERSIONS:
        by_release[version] = Facts.of_raw(json.loads((root / version / "fields.json").read_text("utf-8")))
        vocabulary.add(by_release[version])
    return by_release, vocabulary


def answer(*args: str) -> str:
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        try:
            main(list(args))
        except SystemExit:
            pass
    return out.getvalue()


MODEL_CONFIG = ("model config", "model's", "模型配置", "模型的")
"""An HF fill's words name the model config's attributes (``hidden_size``), which are not DeepSpeed keys."""


def own_names(path: Path) -> set[str]:
    """Every key and dotted path the user's file writes, and every string value (an optimizer's type name)."""
    import hjson

    names: set[str] = set()

    def walk(value: object, prefix: str = "") -> None:
        if isinstance(value, dict):
            for key, inner in value.items():
                names.update((str(key), prefix + str(key)))
                walk(inner, f"{prefix}{key}.")
        elif isinstance(value, str):
            names.add(value)

    walk(hjson.loads(path.read_text(encoding="utf-8")))
    return names


def fallbacks(version: str) -> set[str]:
    """The torch fallback types the release's catalogue lists (``Muon`` builds torch.optim.Muon there)."""
    from dsfields.model.prose import own_type

    return {name for catalog in load(version).catalogs.values() for name, entry in catalog.names.items()
            if not own_type(entry.raw)}


def claims(text: str, facts: Facts, vocabulary: Vocabulary, own: set[str] = frozenset()) -> list[str]:
    """What ``text`` names that the release lacks, leaving out the user's own words (``own``: the keys and values
    of their file, or the words of the message they pasted) and a call's keyword arguments (``f(num_gpus=1)``)."""
    out = []
    for line in text.splitlines():
        for found in contradictions("", line, facts, vocabulary):
            if found.startswith("names release"):
                continue
            named = found.split(" ")[2 if found.startswith("names key") else 1].rstrip(",")
            if named in own or any(o.startswith(named + ".") or o.endswith("." + named) or named.endswith("." + o)
                                   for o in own):
                continue  # the user's own key, which the answer names because the file writes it
            if f"{named}=" in line or ("." not in named and any(m in line for m in MODEL_CONFIG)):
                continue
            if named in ACTIONS and f"({named})" in line:
                continue  # explain's own action word ("fix (move_key): ..."), a name of ours, not DeepSpeed's
            out.append(f"{found}: {line.strip()[:140]}")
    return out


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("version", RELEASES)
def test_config_answers_name_only_what_the_release_has(version, lang, facts):
    by_release, vocabulary = facts
    found = []
    for path in corpus_configs()[:24]:
        own = own_names(path)
        for command in COMMANDS:
            text = answer(command[0], str(path), *command[1:], "--version", version, "--lang", lang)
            said = claims(text, by_release[version], vocabulary, own)
            found += [f"{path.name} {' '.join(command)}: {c}" for c in said]
    assert found == [], f"{len(found)} claims {version} contradicts, e.g.\n" + "\n".join(found[:10])


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("version", RELEASES)
def test_explain_and_type_answers_name_only_what_the_release_has(version, lang, facts):
    by_release, vocabulary = facts
    found = []
    cases = [json.loads(line) for line in (SHARED / "explain-examples" / "cases.jsonl").read_text("utf-8").splitlines()
             if line.strip()]
    assert cases, "the shared explain examples are missing"
    for case in cases:
        document = json.loads(answer("explain", case["pasted"], "--version", version, "--format", "json"))
        text = answer("explain", case["pasted"], "--version", version, "--lang", lang)
        if document.get("not_in_release") == version:
            # the answer says this release does not raise the message, and whose releases it speaks for
            said = f"DeepSpeed {version}（--version）不会产生" if lang == "zh" else \
                f"DeepSpeed {version} (--version) does not raise this message"
            assert said in text, (case["id"], text)
            continue
        pasted = set(re.findall(r"[A-Za-z_][A-Za-z0-9_.]*", case["pasted"]))
        found += [f"explain {case['id']}: {c}" for c in claims(text, by_release[version], vocabulary, pasted)]
    snapshot, torch_types = load(version), fallbacks(version)
    for section, catalog in snapshot.catalogs.items():
        for name in sorted(catalog.names):
            text = answer("lookup", f"{section}:{name}", "--version", version, "--lang", lang)
            said = claims(text, by_release[version], vocabulary, torch_types)
            found += [f"lookup {section}:{name}: {c}" for c in said]
    assert found == [], f"{len(found)} claims {version} contradicts, e.g.\n" + "\n".join(found[:10])
