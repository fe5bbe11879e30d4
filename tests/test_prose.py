"""Our field explanations (dsfields/prose): keyed by paths that exist, complete for the newest release, bilingual."""

from __future__ import annotations

import io
import json
import re
from contextlib import redirect_stdout
from pathlib import Path

import pytest

from dsfields.cli import main
from dsfields.model import prose
from dsfields.model.store import available_versions, load

pytestmark = pytest.mark.lane("unit")  # the tests below without a lane mark of their own

VERSIONS = available_versions()
NEWEST = VERSIONS[-1]


@pytest.fixture(scope="module")
def every_path() -> set[str]:
    paths: set[str] = set()
    for version in VERSIONS:
        snapshot = load(version)
        paths |= set(snapshot.fields) | set(snapshot.removed)
    return paths


def test_every_file_parses_and_both_languages_have_the_same_keys():
    en, zh = prose.all_entries("en"), prose.all_entries("zh")
    assert set(en) == set(zh)
    for name in en:
        assert set(en[name]) == set(zh[name]), name


def _pieces(value: object) -> list[tuple[dict, str]]:
    """A summary, body, pitfall or parameter text as ``(conditions, text)`` pieces, consecutive unconditional pieces
    joined (how a text is cut where nothing is conditional is the writer's choice in each language)."""
    raw = [] if value is None else [value] if isinstance(value, str) else list(value)  # type: ignore[arg-type]
    out: list[tuple[dict, str]] = []
    for piece in raw:
        conditions = {k: v for k, v in piece.items() if k in prose.CONDITIONS} if isinstance(piece, dict) else {}
        text = str(piece.get("text") or "") if isinstance(piece, dict) else str(piece)
        if not conditions and out and not out[-1][0]:
            out[-1] = ({}, out[-1][1] + text)
        else:
            out.append((conditions, text))
    return out


def _code_names(text: str) -> set[str]:
    return {c.strip("()") for c in re.findall(r"`([^`]+)`", text) if re.fullmatch(r"[A-Za-z_][\w.]*(\(\))?", c)}


def test_english_and_chinese_share_one_scoping():
    """Issue 39: a reader of one release is told the same in both languages. Every entry has the same conditions in
    both, its texts are cut into the same pieces under the same conditions, and each piece names the same code
    identifiers: a sentence one language shows a release and the other hides (zh naming `partition_activations`
    for every release where en's sentence needs 0.19.8) fails here."""
    differing = []
    for name in prose.file_names("en"):
        english, chinese = prose.read_file("en", name), prose.read_file("zh", name)
        for key, en in english.items():
            zh = chinese.get(key)
            if not isinstance(en, dict) or not isinstance(zh, dict):
                continue
            if {k: en[k] for k in prose.CONDITIONS if k in en} != {k: zh[k] for k in prose.CONDITIONS if k in zh}:
                differing.append((name, key, "conditions"))
            parts = [(part, en.get(part), zh.get(part)) for part in ("summary", "body", "pitfall")]
            parts += [(f"params.{p}", v, (zh.get("params") or {}).get(p)) for p, v in (en.get("params") or {}).items()]
            for part, en_text, zh_text in parts:
                en_pieces, zh_pieces = _pieces(en_text), _pieces(zh_text)
                if [c for c, _ in en_pieces] != [c for c, _ in zh_pieces]:
                    differing.append((name, key, part, "pieces"))
                    continue
                for at, ((_, e), (_, z)) in enumerate(zip(en_pieces, zh_pieces, strict=True)):
                    if _code_names(e) != _code_names(z):
                        differing.append((name, key, part, at, sorted(_code_names(e) ^ _code_names(z))))
    assert not differing


@pytest.mark.data
def test_every_field_key_is_a_path_some_release_has(every_path):
    """A note for a path no release has is a typo or a stale note: it fails."""
    stale = []
    for name, entries in prose.all_entries("en").items():
        if name in prose.CATALOG_FILES.values():
            continue
        for key in entries:
            if "*" in key:
                # A pattern stands for user-named keys: the part before the first * must be a real section.
                head = key.split(".*", 1)[0]
                ok = head in every_path
            else:
                ok = key in every_path
            if not ok or prose.file_for(key.replace("*", "x")) != name:
                stale.append(f"{name}.toml: {key}")
    assert stale == []


@pytest.mark.data
def test_catalog_entries_name_types_deepspeed_builds():
    names: dict[str, set[str]] = {"optimizer": set(), "scheduler": set()}
    for version in VERSIONS:
        for section, catalog in load(version).catalogs.items():
            names[section] |= set(catalog.names)
    for section, file in prose.CATALOG_FILES.items():
        for key in prose.all_entries("en")[file]:
            assert key in names[section] or key.lower() in {n.lower() for n in names[section]}, (file, key)


@pytest.mark.data
@pytest.mark.parametrize("lang", prose.LANGUAGES)
def test_every_leaf_field_of_the_newest_release_is_explained(lang):
    cov = prose.coverage(load(NEWEST).fields, NEWEST, lang)
    assert cov.missing == (), f"{lang}: {len(cov.missing)} of {cov.total} unexplained: {cov.missing[:10]}"


@pytest.mark.data
@pytest.mark.parametrize("lang", prose.LANGUAGES)
def test_every_type_of_the_newest_catalogues_is_explained(lang):
    for section, catalog in load(NEWEST).catalogs.items():
        missing = [n for n in catalog.names if prose.explain_type(section, n, lang) is None]
        assert missing == [], (lang, section, missing)


@pytest.mark.data
def test_summaries_are_one_short_sentence():
    """As each release shows it: pieces scoped to other releases (a summary and its replacement) are not
    joined, so the summary is checked per release."""
    scopes = [prose.Scope.of_snapshot(load(v)) for v in VERSIONS]
    for lang in prose.LANGUAGES:
        for name, entries in prose.all_entries(lang).items():
            table = prose.read_file(lang, name)
            for key in entries:
                for scope in scopes:
                    entry = prose._entry(key, lang, table[key], key, scope)
                    if entry is None:
                        continue
                    assert entry.summary and len(entry.summary) <= 200, (lang, name, key, scope.version)
                    assert "\n" not in entry.summary, (lang, name, key)


def test_patterns_resolve_for_a_concrete_group_name():
    key = "compression_training.weight_quantization.different_groups.wq1.params.start_bits"
    found = prose.explain(key, "en")
    assert found is not None and "*" in found.key


def test_language_follows_flag_then_locale(monkeypatch):
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("LC_MESSAGES", raising=False)
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    assert prose.language(None) == "zh"
    assert prose.language("en") == "en"
    monkeypatch.setenv("LANG", "C.UTF-8")
    assert prose.language(None) == "en"


def _lookup(*args: str) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out):
        code = main(["lookup", *args])
    return code, out.getvalue()


@pytest.mark.data
def test_lookup_shows_ours_before_deepspeeds_docstring_in_both_languages():
    code, en = _lookup("stage3_max_live_parameters", "--version", NEWEST, "--lang", "en")
    assert code == 0
    ours = prose.explain("zero_optimization.stage3_max_live_parameters", "en")
    assert ours is not None and ours.summary.split()[0] in en
    assert en.index(ours.summary.split()[0]) < en.index("DeepSpeed's docstring:")
    code, zh = _lookup("stage3_max_live_parameters", "--version", NEWEST, "--lang", "zh")
    assert code == 0 and "DeepSpeed 源码中的说明" in zh
    assert prose.explain("zero_optimization.stage3_max_live_parameters", "zh").summary[:10] in zh


@pytest.mark.data
def test_lookup_json_carries_the_explanation_in_the_asked_language():
    code, out = _lookup("gradient_clipping", "--version", NEWEST, "--json", "--lang", "zh")
    payload = json.loads(out)
    assert code == 0 and payload["lang"] == "zh"
    assert payload["matches"][0]["explanation"]["lang"] == "zh"


@pytest.mark.data
def test_unknown_language_is_one_line_and_exit_2(capsys):
    assert main(["lookup", "stage", "--lang", "fr"]) == 2
    assert capsys.readouterr().err.count("\n") == 1


@pytest.mark.data
def test_schema_in_chinese_puts_our_text_into_descriptions(capsys):
    assert main(["schema", "--version", NEWEST, "--lang", "zh"]) == 0
    schema = json.loads(capsys.readouterr().out)
    stage = schema["properties"]["zero_optimization"]["properties"]["stage"]["description"]
    assert prose.explain("zero_optimization.stage", "zh").summary in stage


CHECKOUT_PROSE = Path(__file__).resolve().parent.parent / "extractor" / "dsfields" / "prose"


@pytest.mark.parametrize("lang", prose.LANGUAGES)
def test_compiled_prose_is_current(lang, monkeypatch):
    """lookup reads prose/<lang>.jsonl (no tomllib at start-up), and the wheel ships only that form: it must say
    exactly what the checkout's TOML says (the checkout's, as an installed wheel has no TOML)."""
    monkeypatch.setattr(prose, "PROSE_DIR", CHECKOUT_PROSE)
    committed = (CHECKOUT_PROSE / f"{lang}.jsonl").read_text(encoding="utf-8")
    assert committed == prose.compile_language(lang), "run: python -m dsfields.model.prose --compile"


def test_without_the_toml_sources_the_compiled_form_is_the_prose(tmp_path, monkeypatch):
    """An installed wheel has prose/<lang>.jsonl and no prose/<lang>/: every file and entry is read from it,
    the same as from the sources in a checkout."""
    monkeypatch.setattr(prose, "PROSE_DIR", CHECKOUT_PROSE)
    prose.read_file.cache_clear()
    prose._compiled_lines.cache_clear()
    try:
        from_sources = {lang: prose.all_entries(lang) for lang in prose.LANGUAGES}
        names = prose.file_names("en")
        for lang in prose.LANGUAGES:
            (tmp_path / f"{lang}.jsonl").write_bytes((CHECKOUT_PROSE / f"{lang}.jsonl").read_bytes())
        monkeypatch.setattr(prose, "PROSE_DIR", tmp_path)
        prose.read_file.cache_clear()
        prose._compiled_lines.cache_clear()
        assert prose.file_names("en") == names and "zero_optimization" in names
        for lang in prose.LANGUAGES:
            assert prose.all_entries(lang) == from_sources[lang]
        assert prose.explain("zero_optimization.stage", "zh") is not None
        assert prose.hf_auto("zero_optimization.reduce_bucket_size", "en") is not None
    finally:
        prose.read_file.cache_clear()
        prose._compiled_lines.cache_clear()


def test_an_edited_source_wins_over_a_stale_compiled_file(tmp_path, monkeypatch):
    folder = tmp_path / "en"
    folder.mkdir()
    (folder / "fp16.toml").write_text('["fp16.enabled"]\nsummary = "new text"\nbody = ""\n', encoding="utf-8")
    stale = {"file": "fp16", "size": 1, "entries": {"fp16.enabled": {"summary": "stale", "body": ""}}}
    (tmp_path / "en.jsonl").write_text("{}\n" + json.dumps(stale) + "\n", encoding="utf-8")
    monkeypatch.setattr(prose, "PROSE_DIR", tmp_path)
    prose.read_file.cache_clear()
    prose._compiled_lines.cache_clear()
    try:
        assert prose.explain("fp16.enabled", "en").summary == "new text"
        (folder / "fp16.toml").write_text("x" * 1, encoding="utf-8")  # same size as recorded: compiled wins
        prose.read_file.cache_clear()
        assert prose.explain("fp16.enabled", "en").summary == "stale"
    finally:
        prose.read_file.cache_clear()
        prose._compiled_lines.cache_clear()
