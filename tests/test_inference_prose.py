"""Our inference-config prose (issue 29) against every release's inference facts, as test_prose_facts does for
the training prose: every field of every release's ``inference.json`` has an entry in both languages, every
key names a real inference path, every scope names a real release or path, and no text shown for a release
names a later release, a key or feature the release lacks, or a default other than the release's.
"""

from __future__ import annotations

import json
import re
import shutil

import pytest

from dsfields.model import inference_prose, prose
from dsfields.model.prose_facts import Facts, Vocabulary, contradictions
from dsfields.model.store import inference_versions, repo_generated_dir

pytestmark = pytest.mark.data

VERSIONS = inference_versions()
CJK = re.compile(r"[\u4e00-\u9fff]")


@pytest.fixture(scope="module")
def raws() -> dict[str, dict]:
    root = repo_generated_dir()
    return {v: json.loads((root / v / "inference.json").read_text(encoding="utf-8")) for v in VERSIONS}


def facts_of(raw: dict) -> Facts:
    """The release's facts, its aliases counted as key names (prose names them: `kernel_inject`)."""
    facts = Facts.of_raw(raw)
    aliases = {a for record in raw["fields"].values() for a in record.get("aliases") or []}
    facts.names |= aliases
    facts.features |= {n.lower().replace("_", "") for n in aliases}
    return facts


@pytest.fixture(scope="module")
def vocabulary(raws) -> Vocabulary:
    vocab = Vocabulary()
    for raw in raws.values():
        vocab.add(facts_of(raw))
    return vocab


def shown_paths(raw: dict) -> list[str]:
    return sorted({*raw["fields"], *raw["sections"], *(raw.get("removed") or {})} - {""})


def release_contradictions(raw: dict, lang: str, vocabulary: Vocabulary) -> list[str]:
    facts, scope = facts_of(raw), prose.Scope.of_raw(raw)
    out = []
    for path in shown_paths(raw):
        ex = inference_prose.explain_shown(path, lang, scope)
        for part in ("summary", "body", "pitfall"):
            for found in contradictions(path, getattr(ex, part, None) or "", facts, vocabulary) if ex else []:
                out.append(f"{facts.version} {lang} {path} {part}: {found}")
    return out


@pytest.mark.parametrize("lang", prose.LANGUAGES)
def test_every_inference_field_of_every_release_is_explained(lang, raws):
    """In the language itself (no English fallback), as scoped to the release: a summary at least."""
    missing = [(v, p) for v, raw in raws.items() for p in shown_paths(raw)
               if inference_prose.explain(p, lang, prose.Scope.of_raw(raw)) is None]
    assert missing == []


@pytest.mark.parametrize("lang", prose.LANGUAGES)
def test_no_inference_prose_contradicts_the_release_it_is_shown_for(lang, raws, vocabulary):
    found = [c for raw in raws.values() for c in release_contradictions(raw, lang, vocabulary)]
    assert found == [], f"{len(found)} contradictions, e.g. {found[:8]}"


def test_inference_prose_keys_and_scopes_are_real(raws):
    paths = {p for raw in raws.values() for p in shown_paths(raw)}
    bad = []
    for lang in prose.LANGUAGES:
        for key, raw in inference_prose.table(lang).items():
            if key not in paths and not any(prose.matches(key, p) for p in paths):
                bad.append((lang, key, "no release has this path"))
            pieces = [raw] + [p for part in ("summary", "body", "pitfall") if isinstance(raw.get(part), list)
                              for p in raw[part] if isinstance(p, dict)]
            for piece in pieces:
                bad += [(lang, key, piece[c]) for c in ("since", "until") if c in piece and piece[c] not in VERSIONS]
                bad += [(lang, key, n) for c in ("requires", "lacks") for n in prose._names(piece.get(c))
                        if n not in paths]
    assert bad == []


def test_both_languages_have_the_same_entries_and_zh_is_chinese():
    en, zh = inference_prose.entries("en"), inference_prose.entries("zh")
    assert set(en) == set(zh)
    assert [k for k, e in zh.items() if not CJK.search(e.summary)] == []


def test_inference_and_training_prose_are_apart():
    """``checkpoint`` and ``tensor_parallel.tp_size`` are keys of both documents with different meanings."""
    training = prose.explain("tensor_parallel.tp_size", "en")
    inference = inference_prose.explain("tensor_parallel.tp_size", "en")
    assert inference is not None and inference != training
    assert inference_prose.explain("zero_optimization.stage", "en") is None


def test_an_unscoped_sentence_about_a_newer_key_is_caught_on_an_old_release(raws, vocabulary, tmp_path, monkeypatch):
    """Mutation: quant.weight's sentence naming `post_init_quant` (0.10.3 on), unscoped, fails on 0.8.0."""
    assert not release_contradictions(raws["0.8.0"], "en", vocabulary)
    copy = tmp_path / "prose"
    shutil.copytree(prose.PROSE_DIR, copy)
    source = copy / "inference" / "en.toml"
    text = source.read_text(encoding="utf-8")
    scoped = '{requires = "quant.weight.post_init_quant", text = "Its `quantized_initialization`'
    assert scoped in text
    source.write_text(text.replace(scoped, '{text = "Its `quantized_initialization`'), encoding="utf-8")
    monkeypatch.setattr(prose, "PROSE_DIR", copy)
    inference_prose.table.cache_clear()
    try:
        found = release_contradictions(raws["0.8.0"], "en", vocabulary)
        newest = release_contradictions(raws[VERSIONS[-1]], "en", vocabulary)
    finally:
        monkeypatch.undo()
        inference_prose.table.cache_clear()
    assert any("quant.weight body" in f and "post_init_quant" in f for f in found), found
    assert newest == []


def test_a_wrong_default_or_a_later_release_is_caught(raws, vocabulary):
    old = facts_of(raws["0.8.0"])
    assert contradictions("max_out_tokens", "It defaults to 2048.", old, vocabulary)
    assert not contradictions("max_out_tokens", "It defaults to 1024.", old, vocabulary)
    assert contradictions("dtype", "Since 0.15.2 the accelerator decides.", old, vocabulary)
    assert contradictions("dtype", "Set `keep_module_on_host` to keep it on the host.", old, vocabulary)


def _lookup(capsys, *args: str) -> str:
    from dsfields.cli import main

    assert main(["lookup", "--inference", *args]) == 0
    return capsys.readouterr().out


def test_lookup_inference_shows_the_inference_prose_of_the_release_and_language(capsys):
    old = _lookup(capsys, "dtype", "--version", "0.10.3", "--lang", "en")
    new = _lookup(capsys, "dtype", "--version", VERSIONS[-1], "--lang", "en")
    assert "accepts only fp16, fp32 and int8" in old and "accepts only fp16" not in new
    zh = json.loads(_lookup(capsys, "tensor_parallel.tp_size", "--version", VERSIONS[-1], "--lang", "zh", "--json"))
    explanation = zh["matches"][0]["explanation"]
    assert explanation["lang"] == "zh" and CJK.search(explanation["summary"])
    assert explanation == inference_prose.explain("tensor_parallel.tp_size", "zh").as_dict()


def test_max_out_tokens_is_checked_in_generate_only(raws):
    """inference/engine.py (0.11.0 on): the "exceeds maximum length" RuntimeError is raised in ``_generate``
    (installed as the engine's ``generate``), with or without kernel injection; forward calls are not checked."""
    newest = max(raws, key=lambda v: tuple(int(x) for x in v.split(".")))
    for lang in prose.LANGUAGES:
        body = inference_prose.explain("max_out_tokens", lang, prose.Scope.of_raw(raws[newest])).body
        assert "`generate()`" in body and "RuntimeError" in body, lang
        assert "forward call with" not in body and "前向调用时报错" not in body, lang


def test_training_mp_size_is_not_said_to_reshard(raws):
    """containers/base.py stores training_mp_size into the kernels' config, which never reads it; re-splitting uses
    the checkpoint JSON's tp_size/mp_size (replace_module.py), in every release."""
    for version in raws:
        for lang in prose.LANGUAGES:
            body = inference_prose.explain("training_mp_size", lang, prose.Scope.of_raw(raws[version])).body
            assert "`mp_size`" in body, (version, lang)
