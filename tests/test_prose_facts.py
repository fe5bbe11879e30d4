"""Our prose against every release's facts: each text a reader of a release is shown holds for that release.

Every field, section and removed key of every committed release is rendered in both languages through
``prose.explain_shown`` (the function the site, ``lookup`` and ``schema`` use) and checked by
``dsfields.model.prose_facts``: no later release named, no key or feature the release lacks, no default
other than the release's. A mutation (a pitfall true only in new releases, unscoped) must be caught.
"""

from __future__ import annotations

import io
import json
import shutil
from collections.abc import Iterator
from contextlib import contextmanager, redirect_stdout
from pathlib import Path

import pytest

from dsfields.cli import main
from dsfields.model import prose
from dsfields.model.prose_facts import Facts, Vocabulary, contradictions
from dsfields.model.store import available_versions, load, repo_generated_dir

pytestmark = pytest.mark.data

VERSIONS = available_versions()


@pytest.fixture(scope="module")
def raws() -> dict[str, dict]:
    root = repo_generated_dir()
    return {v: json.loads((root / v / "fields.json").read_text(encoding="utf-8")) for v in VERSIONS}


@pytest.fixture(scope="module")
def vocabulary(raws) -> Vocabulary:
    vocab = Vocabulary()
    for raw in raws.values():
        vocab.add(Facts.of_raw(raw))
    return vocab


def shown_paths(raw: dict) -> list[str]:
    return sorted({*raw["fields"], *raw["sections"], *(raw.get("removed") or {})} - {""})


def release_contradictions(raw: dict, lang: str, vocabulary: Vocabulary) -> list[str]:
    """Every contradiction between what a reader of this release is shown in ``lang`` and its facts."""
    facts, scope = Facts.of_raw(raw), prose.Scope.of_raw(raw)
    out = []
    texts: list[tuple[str, prose.Explanation | None]] = [
        (p, prose.explain_shown(p, lang, scope)) for p in shown_paths(raw)]
    for key in ("optimizers", "schedulers"):
        catalog = raw.get(key) or {}
        section = catalog.get("section") or key[:-1]
        texts += [(f"{section}.type", prose.explain_type(section, name, lang, scope))
                  for name in catalog.get("names") or {}]
    for path, ex in texts:
        if ex is None:
            continue
        for part in ("summary", "body", "pitfall"):
            for found in contradictions(path, getattr(ex, part) or "", facts, vocabulary):
                out.append(f"{facts.version} {lang} {path} {part}: {found}")
        for name, text in ex.params.items():  # an optimizer's or scheduler's parameters, shown in its table
            if name not in facts.names:
                continue  # a parameter the release's class lacks has no row there: its text is not shown
            for found in contradictions(f"{path.rpartition('.')[0]}.params.{name}", text, facts, vocabulary):
                out.append(f"{facts.version} {lang} {path} params.{name}: {found}")
    return out


@pytest.mark.parametrize("lang", prose.LANGUAGES)
def test_no_prose_contradicts_the_release_it_is_shown_for(lang, raws, vocabulary):
    found = [c for raw in raws.values() for c in release_contradictions(raw, lang, vocabulary)]
    assert found == [], f"{len(found)} contradictions, e.g. {found[:8]}"


def test_the_site_and_lookup_scope_prose_alike(raws):
    """The site scopes with the snapshot's JSON, lookup and schema with its records: the same texts."""
    for version in (VERSIONS[0], "0.10.3", "0.19.2", "0.19.3", VERSIONS[-1]):
        raw, records = raws[version], load(version)
        site, cli = prose.Scope.of_raw(raw), prose.Scope.of_snapshot(records)
        for lang in prose.LANGUAGES:
            for path in shown_paths(raw):
                assert prose.explain_shown(path, lang, site) == prose.explain_shown(path, lang, cli), (version, path)


def test_scoped_pieces_use_known_conditions_and_real_names(raws):
    names: set[str] = set()
    for raw in raws.values():
        names |= {*raw["fields"], *raw["sections"], *(raw.get("removed") or {})}
        for key in ("optimizers", "schedulers"):
            names |= {f"type:{n.lower()}" for n in (raw.get(key) or {}).get("names") or {}}
    releases = set(VERSIONS)
    bad = []
    for lang in prose.LANGUAGES:
        for file, entries in prose.all_entries(lang).items():
            table = prose.read_file(lang, file)
            for key in entries:
                raw = table[key]
                pieces = [raw] + [p for part in ("summary", "body", "pitfall") if isinstance(raw.get(part), list)
                                  for p in raw[part] if isinstance(p, dict)]
                for piece in pieces:
                    unknown = set(piece) - set(prose.CONDITIONS) - {"text"} if piece is not raw else set()
                    named = [n for c in ("requires", "lacks") for n in prose._names(piece.get(c))]
                    missing = [n for n in named if n not in names and n.lower() not in names]
                    ranges = [piece[c] for c in ("since", "until") if c in piece and piece[c] not in releases]
                    if unknown or missing or ranges:
                        bad.append((lang, file, key, sorted(unknown), missing, ranges))
    assert bad == []


@contextmanager
def _prose_from(folder: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Within: the prose read from ``folder`` (a mutated copy of the prose), its caches cleared on the way in and
    out, so the mutation is read and no other test sees it."""
    monkeypatch.setattr(prose, "PROSE_DIR", folder)
    prose.read_file.cache_clear()
    prose._compiled_lines.cache_clear()
    try:
        yield
    finally:
        monkeypatch.undo()
        prose.read_file.cache_clear()
        prose._compiled_lines.cache_clear()


def test_a_pitfall_of_new_releases_shown_on_an_old_one_is_caught(raws, vocabulary, tmp_path, monkeypatch):
    """Mutation: gradient_clipping's pitfall for releases that clip by default (0.19.3 on), unscoped,
    fails the check on 0.10.3; scoped as committed, it passes."""
    assert not release_contradictions(raws["0.10.3"], "en", vocabulary)
    copy = tmp_path / "prose"
    shutil.copytree(prose.PROSE_DIR, copy)
    (copy / "en.jsonl").unlink()  # the TOML is the source: the mutation must be read
    source = copy / "en" / "top-level.toml"
    text = source.read_text(encoding="utf-8")
    assert '{default_not = 0.0, text = "DeepSpeed clips by default' in text
    source.write_text(text.replace('{default_not = 0.0, text = "DeepSpeed clips by default',
                                   '{text = "DeepSpeed clips by default'), encoding="utf-8")
    with _prose_from(copy, monkeypatch):
        found = release_contradictions(raws["0.10.3"], "en", vocabulary)
        newest = release_contradictions(raws[VERSIONS[-1]], "en", vocabulary)
    assert any("gradient_clipping pitfall" in f and "non-zero" in f for f in found), found
    assert newest == []


def test_a_feature_of_new_releases_named_on_an_old_one_is_caught(raws, vocabulary):
    facts = Facts.of_raw(raws["0.10.3"])
    assert contradictions("gradient_accumulation_steps", "ZenFlow overwrites it with its `update_interval`.",
                          facts, vocabulary)
    assert contradictions("zero_optimization.offload_optimizer", "SuperOffload pins the optimizer.", facts, vocabulary)
    assert contradictions("optimizer.type", "`muon_lr` sets the Muon rate.", facts, vocabulary)
    assert contradictions("zero_optimization.stage", "In 0.19.8 the coordinator prefetches.", facts, vocabulary)
    assert not contradictions("zero_optimization.stage", "Stage 3 partitions parameters.", facts, vocabulary)
    # Defaults: another key's, in words, and this key's.
    assert contradictions("zero_optimization.stage", "The default gradient_clipping is 1.0.", facts, vocabulary)
    assert not contradictions("zero_optimization.stage", "The default gradient_clipping is 0.0.", facts, vocabulary)
    assert contradictions("zero_optimization.offload_optimizer.device", "It defaults to cpu.", facts, vocabulary)
    assert not contradictions("zero_optimization.offload_optimizer.device", "It defaults to none.", facts, vocabulary)
    assert contradictions("gradient_clipping", "DeepSpeed clips by default (a non-zero default).", facts, vocabulary)


def _lookup(*args: str) -> str:
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["lookup", *args]) == 0
    return out.getvalue()


def test_lookup_shows_the_pitfall_of_the_release_asked_for():
    old = _lookup("--version", "0.10.3", "--lang", "en", "gradient_clipping")
    assert "clips by default" not in old and "does not clip" in old
    new = _lookup("--version", VERSIONS[-1], "--lang", "en", "gradient_clipping")
    assert "clips by default" in new and "does not clip" not in new
    data = json.loads(_lookup("--version", "0.10.3", "--lang", "zh", "--json", "gradient_clipping"))
    assert "默认就会裁剪" not in json.dumps(data["matches"][0]["explanation"], ensure_ascii=False)


def test_a_removed_sentence_keeps_the_paragraph_break():
    raw = ["First. ", {"since": "9.9.9", "text": "Gone.\n\n"}, "Second paragraph."]
    scope = prose.Scope("0.10.3", lambda name: False)
    assert prose._part(raw, "x", scope) == "First.\n\nSecond paragraph."
    assert prose._part(raw, "x", None) == "First. Gone.\n\nSecond paragraph."



def test_scoping_leaves_no_key_without_its_summary(raws):
    """Scoping drops sentences, not whole entries: a key we explain keeps a summary on every release page."""
    lost = []
    for version, raw in raws.items():
        scope = prose.Scope.of_raw(raw)
        for lang in prose.LANGUAGES:
            lost += [(version, lang, p) for p in shown_paths(raw)
                     if prose.explain(p, lang) is not None and prose.explain(p, lang, scope) is None]
    assert lost == []


def test_a_field_page_shared_by_releases_shows_each_of_them_its_own_prose(raws):
    """The site stores a field page once for a run of releases with identical records; prose scoped by
    release must keep two releases apart where their texts differ (views.page_contents keys on it)."""
    from dsfields.docs import groups, views

    site = views.load_site()
    scopes = {v: prose.Scope.of_raw(raw) for v, raw in raws.items()}
    differ = []
    for (version, page), owner in site.owners.items():
        if owner == version:
            continue
        raw = raws[version]
        for path in shown_paths(raw):
            top = groups.top_key(path)
            # the page a path is shown on: its top section's, where that has a page, else the top-level page
            shown_on = top if (version, top) in site.owners else groups.TOP_LEVEL_PAGE
            if shown_on != page or not prose.is_scoped(path, "en"):
                continue
            for lang in prose.LANGUAGES:
                if prose.explain_shown(path, lang, scopes[version]) != prose.explain_shown(path, lang, scopes[owner]):
                    differ.append((version, owner, path, lang))
    assert differ == []


# ---------------------------------------------------------------- issue 39: identifiers carry their release


def test_identifiers_a_release_lacks_are_caught(raws, vocabulary):
    """Classes, functions and types are checked against the release shown, not only keys and defaults."""
    old, newest = Facts.of_raw(raws["0.10.3"]), Facts.of_raw(raws[VERSIONS[-1]])
    for text in ("Muon is the usual choice for hidden layers.", "Use `WarmupCosineLR` instead.",
                 "The engine builds `DeepSpeedCPULion` under offload.", "DeepSpeedCPULion is exempt."):
        assert contradictions("optimizer.type", text, old, vocabulary), text
        assert not contradictions("optimizer.type", text, newest, vocabulary), text
    reader = "DeepSpeed reads the section through `get_bfloat16_config`."
    assert contradictions("bf16", reader, Facts.of_raw(raws["0.17.0"]), vocabulary)
    assert not contradictions("bf16", reader, Facts.of_raw(raws["0.17.1"]), vocabulary)
    # A class every release has although no slot of the oldest snapshot records it: named in its texts.
    assert not contradictions("fp16", "`DeepSpeedConfig` reads it.", Facts.of_raw(raws[VERSIONS[0]]), vocabulary)


def test_a_claim_that_booleans_are_rejected_is_checked_against_the_probes(raws, vocabulary):
    """fp16.loss_scale: 0.9.5 accepts ``true`` (its probe says so); the newest refuses it."""
    claim = "The value must be a finite number >= 0; booleans are rejected."
    assert contradictions("fp16.loss_scale", claim, Facts.of_raw(raws["0.9.5"]), vocabulary)
    assert not contradictions("fp16.loss_scale", claim, Facts.of_raw(raws[VERSIONS[-1]]), vocabulary)
    assert contradictions("fp16.loss_scale", "布尔值会被拒绝。", Facts.of_raw(raws["0.9.5"]), vocabulary)


def test_a_muon_sentence_shown_on_an_old_release_fails(raws, vocabulary, tmp_path, monkeypatch):
    """Mutation: an unscoped Muon sentence in optimizer.type's prose is caught on 0.10.3 (which has no Muon) in
    both languages, and passes on the newest release."""
    copy = tmp_path / "prose"
    shutil.copytree(prose.PROSE_DIR, copy)
    for lang, sentence in (("en", "Muon is the usual choice for hidden layers. "), ("zh", "Muon 是隐藏层的常用选择。")):
        (copy / f"{lang}.jsonl").unlink()
        source = copy / lang / "optimizer.toml"
        text = source.read_text(encoding="utf-8")
        assert '["optimizer.type"]\nsummary = "' in text
        source.write_text(text.replace('["optimizer.type"]\nsummary = "', f'["optimizer.type"]\nsummary = "{sentence}'),
                          encoding="utf-8")
    with _prose_from(copy, monkeypatch):
        found = {lang: release_contradictions(raws["0.10.3"], lang, vocabulary) for lang in prose.LANGUAGES}
        newest = release_contradictions(raws[VERSIONS[-1]], "en", vocabulary)
    for lang in prose.LANGUAGES:
        assert any("optimizer.type summary: names Muon" in f for f in found[lang]), found[lang]
    assert newest == []


def _conditions(raw: dict) -> dict:
    out = {"entry": {c: raw[c] for c in prose.CONDITIONS if c in raw}}
    for part in ("summary", "body", "pitfall"):
        value = raw.get(part)
        pieces = value if isinstance(value, list) else []
        out[part] = [{c: p[c] for c in prose.CONDITIONS if c in p} for p in pieces if isinstance(p, dict)]
    return out


def test_english_and_chinese_are_scoped_by_one_condition():
    """One scoping, two texts: every entry's conditions (on the entry and on each piece, in order) are the same in
    en and zh, so a release never shows a sentence in one language that the other hides."""
    differ = []
    for file in prose.file_names("en"):
        en, zh = prose.read_file("en", file), prose.read_file("zh", file)
        for key, raw in en.items():
            if isinstance(raw, dict) and isinstance(zh.get(key), dict) and _conditions(raw) != _conditions(zh[key]):
                differ.append((file, key))
    assert differ == []


def test_the_cpu_lion_exemption_is_shown_from_0_17_6_only():
    """DeepSpeed 0.17.6's engine.py exempts DeepSpeedCPULion from zero_force_ds_cpu_optimizer's check; 0.17.5
    checks ``isinstance(basic_optimizer, DeepSpeedCPUAdam)`` alone (read in both sdists)."""
    for lang in prose.LANGUAGES:
        before = _lookup("--version", "0.17.5", "--lang", lang, "zero_force_ds_cpu_optimizer")
        after = _lookup("--version", "0.17.6", "--lang", lang, "zero_force_ds_cpu_optimizer")
        assert "DeepSpeedCPULion" not in before and "DeepSpeedCPULion" in after, lang


# ---------------------------------------------------------------- audit r3: names of the release's source


OLD_SENTENCES = {
    # the sentences the audit of 0.10.3 found, as they were written (each true of a later release only)
    "zero_optimization.zero_hpz_partition_size": "Stage 3 only; AutoEP with stage 3 rejects values above 1.",
    "zero_optimization.zero_quantized_gradients": "Stage 3 only; not supported together with AutoEP.",
    "zero_optimization.sub_group_size": "Smaller values give finer granularity to `offload_optimizer.ratio`.",
    "fp16.fp16_master_weights_and_grads": "The ZeRO optimizer passes this to `_configure_master_weights`.",
    "checkpoint.load_universal": "It is produced offline with `deepspeed/checkpoint/ds_to_universal.py`.",
}


@pytest.mark.parametrize("path", sorted(OLD_SENTENCES))
def test_a_name_of_a_later_source_shown_on_an_old_release_is_caught(raws, vocabulary, path):
    """A function, module file, feature word or partial key path that only later releases' source has is caught on
    0.10.3 and passes on the newest release (the source index, ``generated/source-names.json``)."""
    old, newest = Facts.of_raw(raws["0.10.3"]), Facts.of_raw(raws[VERSIONS[-1]])
    assert contradictions(path, OLD_SENTENCES[path], old, vocabulary), path
    assert not contradictions(path, OLD_SENTENCES[path], newest, vocabulary), path


def test_a_module_level_name_no_release_defines_is_caught(raws, vocabulary):
    """``deepspeed.comm.start_profiling_op`` is a method of the comms logger in every release, never a function of
    ``deepspeed.comm``; the logger's own spelling passes, and so does a real function of the module."""
    for version in ("0.10.3", VERSIONS[-1]):
        facts = Facts.of_raw(raws[version])
        assert contradictions("comms_logger.prof_ops", "`deepspeed.comm.start_profiling_op([...])` edits it.",
                              facts, vocabulary)
        assert not contradictions("comms_logger.prof_ops", "`deepspeed.comm.comms_logger.start_profiling_op([...])`.",
                                  facts, vocabulary)
        assert not contradictions("comms_logger", "call `deepspeed.comm.log_summary()`.", facts, vocabulary)


def test_an_autoep_sentence_in_chinese_shown_on_an_old_release_fails(raws, vocabulary, tmp_path, monkeypatch):
    """Mutation: zero_hpz_partition_size's AutoEP piece unscoped (as it was) is caught on 0.10.3 in both languages."""
    copy = tmp_path / "prose"
    shutil.copytree(prose.PROSE_DIR, copy)
    for lang, piece in (("en", '{since = "0.19.3", text = "; AutoEP with stage 3 rejects values above 1"}'),
                        ("zh", '{since = "0.19.3", text = "；stage 3 下的 AutoEP 不接受大于 1 的值"}')):
        (copy / f"{lang}.jsonl").unlink()
        source = copy / lang / "zero_optimization.toml"
        text = source.read_text(encoding="utf-8")
        assert piece in text, lang
        source.write_text(text.replace(piece, piece.replace('since = "0.19.3", ', "")), encoding="utf-8")
    with _prose_from(copy, monkeypatch):
        found = {lang: release_contradictions(raws["0.10.3"], lang, vocabulary) for lang in prose.LANGUAGES}
    for lang in prose.LANGUAGES:
        assert any("zero_hpz_partition_size body: names AutoEP" in f for f in found[lang]), found[lang]


def test_a_torch_fallback_named_like_a_deepspeed_type_is_framed_as_torch(raws):
    """Where the catalogue lists a torch.optim fallback whose name is DeepSpeed's own type in another release (torch's
    ``Muon`` on 0.10.3, DeepSpeed's ``muon`` from 0.19.x), its entry says it is torch's class, in both languages:
    a reader must not take it for the DeepSpeed optimizer of later releases."""
    own = {n.lower() for raw in raws.values() for key in ("optimizers", "schedulers")
           for n, e in ((raw.get(key) or {}).get("names") or {}).items() if prose.own_type(e)}
    checked, bare = 0, []
    for version, raw in raws.items():
        scope = prose.Scope.of_raw(raw)
        for key in ("optimizers", "schedulers"):
            catalog = raw.get(key) or {}
            section = catalog.get("section") or key[:-1]
            for name, entry in (catalog.get("names") or {}).items():
                if prose.own_type(entry) or name.lower() not in own:
                    continue
                checked += 1
                for lang in prose.LANGUAGES:
                    ex = prose.explain_type(section, name, lang, scope)
                    if ex is None or f"torch.optim.{name}" not in ex.summary:
                        bare.append((version, lang, name))
    assert checked and bare == []


def test_behaviour_that_changed_is_shown_per_release():
    """The audit's items whose behaviour changed between releases, shown per release in both languages (each
    boundary read in the sdists: WarmupLR's optimizer-lr fallback from 0.17.2, the stage 3 elastic_checkpoint
    warning from 0.19.3, AutoEP's refusals from 0.19.3)."""
    def scope(version: str) -> prose.Scope:
        return prose.Scope.of_snapshot(load(version))

    for lang, fixed, fallback in (("en", "0.001", "each param group's own `lr`"),
                                  ("zh", "0.001", "各 param group 在优化器里的 `lr`")):
        before, after = (prose.explain_type("scheduler", "WarmupLR", lang, scope(v)) for v in ("0.17.1", "0.17.2"))
        assert fixed in before.body and fallback not in before.body and fallback in after.body, lang
        assert "1e3" not in before.pitfall and "1e3" in prose.explain_type("scheduler", "WarmupLR", lang,
                                                                          scope("0.19.3")).pitfall
    for lang, warning in (("en", "logs a warning"), ("zh", "打印一条警告")):
        assert warning not in prose.explain("zero_optimization.elastic_checkpoint", lang, scope("0.19.2")).body
        assert warning in prose.explain("zero_optimization.elastic_checkpoint", lang, scope("0.19.3")).body
        assert "AutoEP" not in prose.explain("zero_optimization.zero_quantized_gradients", lang, scope("0.19.2")).body
        assert "AutoEP" in prose.explain("zero_optimization.zero_quantized_gradients", lang, scope("0.19.3")).body
    for lang in prose.LANGUAGES:  # "sgd" never ends in "None is not callable"
        sgd = prose.explain_type("optimizer", "SGD", lang, scope("0.10.3")).body
        assert "sgd is not a supported DeepSpeed Optimizer" in sgd and "None" not in sgd, lang


# ---------------------------------------------------------------- re-audit r3 (0.10.3, 0.19.8)


def _scope(version: str) -> prose.Scope:
    return prose.Scope.of_snapshot(load(version))


def test_adam_rows_name_only_what_the_release_does():
    """0.10.3 neither pops ``foreach`` nor ``fp32_optimizer_states`` (FusedAdam gets it: a TypeError) and has no
    ``bf16.bf16_optimizer_states``; 0.19.1 forces it false under bf16_optimizer_states, 0.19.6 pops it on every path
    (engine.py of each sdist)."""
    for lang, dropped, typeerror in (("en", "dropped", "TypeError"), ("zh", "丢弃", "TypeError")):
        for name in ("adam", "adamw"):
            old = prose.explain_type("optimizer", name, lang, _scope("0.10.3")).params
            new = prose.explain_type("optimizer", name, lang, _scope(VERSIONS[-1])).params
            assert "bf16_optimizer_states" not in old["fp32_optimizer_states"], (lang, name)
            assert dropped not in old["fp32_optimizer_states"] and typeerror in old["fp32_optimizer_states"]
            assert "bf16_optimizer_states" in new["fp32_optimizer_states"] and dropped in new["fp32_optimizer_states"]
            assert "popped" not in old["foreach"] and "弹出" not in old["foreach"], (lang, name)
    mid = prose.explain_type("optimizer", "adam", "en", _scope("0.19.5")).params["fp32_optimizer_states"]
    assert "bf16_optimizer_states" in mid and "TypeError" in mid


def test_reaudit_r3_sentences_say_what_the_source_does():
    """The re-audit's wrong or misleading field sentences, in both languages."""
    old, new = _scope("0.10.3"), _scope(VERSIONS[-1])
    for lang in prose.LANGUAGES:
        # zh aio named ds_nvme_tune, which 0.10.3 does not ship; en never did there
        assert "ds_nvme_tune" not in prose.explain("aio", lang, old).body, lang
        assert "ds_nvme_tune" in prose.explain("aio", lang, new).body, lang
        # autotuner.py skips the user's zero_optimization block when it merges lists into the tuning space
        assert "reduce_bucket_size" in prose.explain("autotuning", lang, old).body, lang
        # progressive_layer_drop: only theta and gamma are read
        assert "`theta`" in prose.explain("progressive_layer_drop", lang, old).body, lang
        # sparse_attention.mode: absent means "fixed" (SPARSE_MODE_DEFAULT), whatever the extracted default says
        assert "SPARSE_MODE_DEFAULT" in prose.explain("sparse_attention.mode", lang, old).body, lang
        # expert_parallel: a lone key is merged over a preset; "auto" is refused by validation
        shared = prose.explain("expert_parallel.has_shared_experts", lang, new).body
        assert "preset" in shared or "预设" in shared, lang
        for key in ("has_shared_experts", "validate_folding_routing"):
            assert "ValueError" in prose.explain(f"expert_parallel.{key}", lang, new).body, (lang, key)
    en = prose.explain("expert_parallel.has_shared_experts", "en", new).body
    assert "either one alone logs a warning and is ignored" not in en



def test_site_sentences_of_the_reaudit_in_both_languages():
    """The typos page's intro names the constructor keywords (optimizer.params, scheduler.params: a TypeError), the
    "passed" label promises nothing about a receiver (progressive_layer_drop's dict goes to none: only theta and
    gamma are read), and the deprecations page words pydantic's metadata for v1 and v2 alike."""
    from dsfields.docs.filters import unknown_keys_text
    from dsfields.model import chinese

    label = unknown_keys_text({"unknown_keys": "passed"})
    assert label != "passed" and "unchecked" in label
    site = chinese.table("site")
    assert label in site and "组件" not in site[label]
    typos = [k for k in site if k.startswith("A misspelled key is")]
    assert typos and all("optimizer.params" in k and "optimizer.params" in site[k] for k in typos)
    assert not any("json_schema_extra" in k or "json_schema_extra" in v for k, v in site.items())


def test_reaudit_of_0_14_4_sentences_are_scoped_by_release():
    """0.14.4 has no bf16-support refusal (engine.py checks fp16 only until 0.16.0) and no dynamic batching; SGD's
    pitfall counts ZeRO's fp32 master copy."""
    old, new = _scope("0.14.4"), _scope(VERSIONS[-1])
    for lang, refusal, dynamic in (("en", "no bf16 support", "dynamic"), ("zh", "不支持 bf16", "动态 batch")):
        for key in ("bf16.enabled", "bfloat16.enabled"):
            if prose.explain(key, lang, old) is None:
                continue
            assert refusal not in prose.explain(key, lang, old).body, (lang, key)
        assert refusal in prose.explain("bf16.enabled", lang, new).body, lang
        for key in ("data_efficiency.seed", "data_efficiency.data_sampling",
                    "data_efficiency.data_sampling.num_workers"):
            ex = prose.explain(key, lang, old)
            assert dynamic not in ex.summary and dynamic not in ex.body, (lang, key)
        sgd = prose.explain_type("optimizer", "SGD", lang, old).pitfall
        assert "fp32" in sgd, lang
