"""The docs pages as rendered Markdown: groups, filters, golden pages, and the JSON examples they embed.

Fast: nothing here runs mkdocs (tests/test_docs_site.py builds the site). Golden pages are rendered
from the trimmed snapshots in tests/golden/docs/input (two fake releases cut from 0.19.8), so they
change only when the templates do; DSFIELDS_UPDATE_GOLDEN=1 rewrites them after a deliberate change.
"""

from __future__ import annotations

import html
import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from dsfields.cli import main
from dsfields.docs import filters, groups
from dsfields.docs.filters import format_config
from dsfields.docs.planning import plan
from dsfields.docs.views import FIELDS, load_examples, load_site
from dsfields.docs.writing import render
from dsfields.links import anchor
from dsfields.model.store import available_versions, load

pytestmark = pytest.mark.lane("unit")  # the tests below without a lane mark of their own

REPO = Path(__file__).resolve().parent.parent
GOLDEN = REPO / "tests" / "golden" / "docs"
GOLDEN_INPUT = GOLDEN / "input"
GOLDEN_PAGES = [
    "1.1.0/fields/fp16.md",
    "1.1.0/fields/top-level.md",
    "1.1.0/config-templates.md",
    "1.1.0/typos-errors.md",
    "1.1.0/errors.md",
    "1.1.0/deprecated-removed.md",
    "1.0.0/default-values.md",
    "1.0.0/config-templates.md",
    "releases/index.md",
]
JSON_BLOCK = re.compile(r"^```json\n(.*?)^```", re.S | re.M)


def mask(text: str) -> str:
    """Volatile parts: the dsfields version in the generated-by header."""
    return re.sub(r"\(dsfields [^)]+\)", "(dsfields X)", text)


@pytest.fixture(scope="module")
def golden_docs(tmp_path_factory) -> Path:
    docs = tmp_path_factory.mktemp("docs")
    render(load_site(GOLDEN_INPUT), docs)
    return docs


# ---------------------------------------------------------------- groups


@pytest.mark.parametrize(("path", "number"), [
    ("train_batch_size", 1),
    ("gradient_clipping", 1),
    ("bf16.enabled", 2),
    ("optimizer.type", 3),
    ("scheduler.params", 4),
    ("zero_optimization.offload_param.device", 5),
    ("aio.block_size", 5),
    ("activation_checkpointing.profile", 6),
    ("communication_data_type", 7),
    ("data_efficiency.enabled", 7),
    ("zero_allow_untested_optimizer", 8),
    ("tensorboard.enabled", 9),
    ("csv_monitor.enabled", 9),
    ("autotuning.enabled", 10),
    ("checkpoint.writer.type", 11),
    ("compile.deepcompile", 12),
    ("tensor_parallel.autotp_size", 13),
    ("weight_quantization.quantized_initialization", 14),
])
def test_group_of_path(path, number):
    assert groups.group_of(path).number == number


def test_unmatched_key_goes_to_misc_and_is_reported():
    group, rule = groups.group_rule("some_future_key")
    assert group is groups.MISC and rule is None


def test_group_slugs_and_numbers_are_unique():
    assert len({g.slug for g in groups.GROUPS}) == len({g.number for g in groups.GROUPS}) == len(groups.GROUPS)
    assert [g.number for g in groups.GROUPS[:8]] == list(range(1, 9))


@pytest.mark.data
def test_every_section_of_every_release_is_on_the_overview():
    """No section is dropped: the overview's group tables list each one (unmapped keys under misc)."""
    site = load_site()
    for version in site.versions:
        release = site.release(version, f"{version}/index.md")
        listed = {v.path for g in release.group_views for s in g["sections"] for v in release.page_sections(s)}
        listed.add("")
        assert listed == set(release.sections_raw), version
        top_keys = {r["path"] for g in release.group_views for r in g["scalars"] + g["removed"]}
        section_top = release.section_map[""]
        assert top_keys == {r["path"] for r in section_top.fields} | {r["path"] for r in section_top.removed}


# ---------------------------------------------------------------- filters


def test_md_text_escapes_markdown_and_html_but_keeps_code_spans():
    text = filters.md_text("Use ``offload_optimizer`` for <lambda> | *x*\nwrapped\n\nnew paragraph")
    assert text == "Use `offload_optimizer` for &lt;lambda&gt; \\| \\*x\\* wrapped\n\nnew paragraph"
    assert "\n" not in filters.md_cell("a\n\nb")


def test_code_falls_back_to_html_where_a_span_would_break():
    assert filters.code("stage") == "`stage`"
    assert filters.code("a|b") == "<code>a&#124;b</code>"
    assert filters.code("x`y") == "<code>x`y</code>"
    assert filters.jcode("cpu") == '`"cpu"`'


def test_default_text_spells_symbols_factories_and_absence():
    assert filters.default_text({"default": 9223372036854775807, "default_repr": "sys.maxsize"}) == \
        "`sys.maxsize` = `9223372036854775807`"
    assert filters.default_text({"read_without_default": True, "default": None}) == "none (absent means not set)"
    assert filters.default_text({"required": True}) == "required (no default)"
    # A default with no JSON form (torch.float16, stored as null) is its spelling alone, as lookup says it.
    assert filters.default_text({"default": None, "default_repr": "torch.float16"}) == "`torch.float16`"
    assert filters.default_text({"default": [1], "default_factory": "list"}) == "`[1]` (factory)"


def test_source_url_points_at_the_release_tag():
    url = filters.source_url({"file": "deepspeed/runtime/zero/config.py", "line": 245}, "0.19.8")
    assert url == "https://github.com/deepspeedai/DeepSpeed/blob/v0.19.8/deepspeed/runtime/zero/config.py#L245"


def test_format_config_keeps_the_seed_spelling_of_large_numbers():
    assert format_config({"a": 1e9, "b": 1e8, "c": 1.0, "d": 0.5}) == \
        '{\n  "a": 1e9,\n  "b": 1e8,\n  "c": 1.0,\n  "d": 0.5\n}'


# ---------------------------------------------------------------- golden pages


@pytest.mark.parametrize("page", GOLDEN_PAGES)
def test_rendered_page_matches_golden(golden_docs, page):
    actual = mask((golden_docs / page).read_text(encoding="utf-8"))
    expected_path = GOLDEN / "pages" / page
    if os.environ.get("DSFIELDS_UPDATE_GOLDEN"):
        expected_path.parent.mkdir(parents=True, exist_ok=True)
        expected_path.write_text(actual, encoding="utf-8")
    expected = expected_path.read_text(encoding="utf-8")
    assert actual == expected, f"re-run with DSFIELDS_UPDATE_GOLDEN=1 if the change is intended: {page}"


def test_every_generated_page_says_it_is_generated(golden_docs):
    for path in golden_docs.rglob("*.md"):
        assert "<!-- generated by `dsfields docs build`" in path.read_text(encoding="utf-8"), path


def test_older_releases_stay_out_of_search(golden_docs):
    front = (golden_docs / "1.0.0" / "index.md").read_text(encoding="utf-8").split("\n---\n")[0]
    assert "search:\n  exclude: true" in front
    assert "exclude" not in (golden_docs / "1.1.0" / "index.md").read_text(encoding="utf-8").split("\n---\n")[0]


def test_every_release_has_field_pages_shared_where_identical(golden_docs):
    site = load_site(GOLDEN_INPUT)
    assert (golden_docs / "1.1.0" / FIELDS / "zero_optimization.md").is_file()
    stubs = json.loads((golden_docs / "releases" / "stubs.json").read_text(encoding="utf-8"))
    for (version, page), owner in site.owners.items():
        if owner == version:
            assert (golden_docs / version / FIELDS / f"{page}.md").is_file()
        else:
            assert f"../../../{owner}/fields/{page}/?v={version}" in stubs[f"{version}/fields/{page}/index.html"]
    assert not any(path.startswith("1.1.0/") for path in stubs)
    defaults = (golden_docs / "1.0.0" / "default-values.md").read_text(encoding="utf-8")
    assert '<tr id="zero_optimization-stage3_max_live_parameters">' in defaults
    assert (golden_docs / "zh" / "1.1.0" / FIELDS / "zero_optimization.md").is_file()


@pytest.mark.data
def test_hf_auto_mapping_covers_exactly_the_trainers_fill_list():
    from dsfields.hf.trainer import fill_list
    from dsfields.model import prose

    hf = fill_list()
    assert hf is not None
    paths = set(hf.paths)
    for lang in prose.LANGUAGES:
        mapped = set(prose.read_file(lang, prose.HF_AUTO_FILE))
        assert paths <= mapped, f"{lang}: no HF mapping for {sorted(paths - mapped)}"
        assert all(prose.hf_auto(p, lang)["from"] for p in paths)
        assert mapped <= paths, f"{lang}: mapped paths the Trainer does not fill: {sorted(mapped - paths)}"


def test_changes_page_lists_every_change_of_the_diff_engine(golden_docs):
    from dsfields.diff import diff_snapshots

    text = (golden_docs / "1.1.0" / "release-changes.md").read_text(encoding="utf-8")
    changes = diff_snapshots(load("1.0.0", GOLDEN_INPUT), load("1.1.0", GOLDEN_INPUT))
    assert changes
    for change in changes:
        plain = text.replace("<wbr>", "")
        assert f"<strong>{change.kind.value}</strong>" in text and (change.path or "top level") in plain


def test_render_replaces_only_its_own_folders(tmp_path):
    (tmp_path / "handwritten").mkdir()
    (tmp_path / "handwritten" / "page.md").write_text("# mine\n")
    render(load_site(GOLDEN_INPUT), tmp_path)
    (tmp_path / "1.0.0" / "stale.md").write_text("left over\n")
    render(load_site(GOLDEN_INPUT, ["1.1.0"]), tmp_path)
    assert not (tmp_path / "1.0.0").exists()
    assert (tmp_path / "handwritten" / "page.md").is_file()
    assert (tmp_path / "1.1.0" / ".gitignore").read_text().endswith("*\n")


# ---------------------------------------------------------------- docs examples are tests


def json_blocks(docs: Path) -> list[tuple[Path, object]]:
    found = []
    for page in sorted(docs.rglob("*.md")):
        for block in JSON_BLOCK.findall(page.read_text(encoding="utf-8")):
            found.append((page, json.loads(block)))
    return found


def key_paths(config: object, prefix: str = "") -> list[str]:
    out: list[str] = []
    if isinstance(config, dict):
        for key, value in config.items():
            out.append(prefix + key)
            out.extend(key_paths(value, prefix + key + "."))
    return out


@pytest.mark.data
def test_every_json_example_uses_only_keys_of_its_release(golden_docs):
    """The committed snapshots' pages: tests/test_docs_site.py, on the run's one site build."""
    examples_use_only_keys_of_their_release(golden_docs, GOLDEN_INPUT)


def examples_use_only_keys_of_their_release(docs: Path, root: Path) -> None:
    """Every ```json block of the rendered pages under ``docs`` names only keys of the releases it is shown for."""
    blocks = json_blocks(docs)
    versions = available_versions(root)
    assert any(page.relative_to(docs).parts[0] == "zh" for page, _config in blocks)
    checked = 0
    for page, config in blocks:
        parts = page.relative_to(docs).parts
        version = parts[1] if parts[0] == "zh" else parts[0]
        if version not in versions:
            continue
        # A page stored once for several releases shows its examples for each of them.
        covers = re.search(r'data-covers="([^"]+)"', page.read_text(encoding="utf-8"))
        for shown in covers.group(1).split() if covers else [version]:
            fields = load(shown, root).raw["fields"]
            unknown = [p for p in key_paths(config) if p not in fields]
            assert not unknown, f"{page}: keys DeepSpeed {shown} does not read: {unknown}"
            checked += 1
    assert checked >= 3 * len(versions)


def test_seed_templates_are_quoted_with_their_corrections():
    examples = {e["id"]: e for e in load_examples()}
    assert sorted(examples) == ["A", "B", "C"]
    assert examples["B"]["config"]["zero_optimization"]["stage3_max_live_parameters"] == 1e9
    # The seed nests aio inside zero_optimization; DeepSpeed reads it at the top level.
    assert "aio" in examples["C"]["config"] and "aio" not in examples["C"]["config"]["zero_optimization"]
    assert examples["C"]["corrections"][0]["seed_path"] == "zero_optimization.aio"


def test_template_keys_missing_from_a_release_are_dropped_and_named(golden_docs):
    text = (golden_docs / "1.0.0" / "config-templates.md").read_text(encoding="utf-8")
    assert 'Left out below because this release does not read them: `aio`' in text
    assert "silently leaves the I/O settings at their defaults" in text  # 1.0.0: zero_optimization not strict
    newer = (golden_docs / "1.1.0" / "config-templates.md").read_text(encoding="utf-8")
    assert "fails with a validation error" in newer


# ---------------------------------------------------------------- the command


def test_docs_build_without_mkdocs_renders_into_the_checkout_layout(tmp_path, monkeypatch, capsys):
    (tmp_path / "mkdocs.yml").write_text("site_name: t\n")
    (tmp_path / "docs").mkdir()
    monkeypatch.chdir(tmp_path)
    assert main(["docs", "build", "--no-mkdocs", "--generated", str(GOLDEN_INPUT)]) == 0
    assert "for 2 release(s)" in capsys.readouterr().out
    assert (tmp_path / "docs" / "releases" / "nav.json").is_file()
    nav = json.loads((tmp_path / "docs" / "releases" / "nav.json").read_text())
    assert [list(item)[0] for item in nav["releases"]["1.0.0"]][:2] == ["Home", "DeepSpeed 1.0.0"]
    groups_in_nav = [list(item)[0] for item in nav["releases"]["1.1.0"][1]["DeepSpeed 1.1.0"]]
    assert any(title.startswith("1. ") for title in groups_in_nav) and any(t.startswith("8. ") for t in groups_in_nav)


def test_docs_build_reports_missing_snapshots(tmp_path, monkeypatch, capsys):
    (tmp_path / "mkdocs.yml").write_text("site_name: t\n")
    monkeypatch.chdir(tmp_path)
    assert main(["docs", "build", "--no-mkdocs", "--generated", str(tmp_path / "none")]) == 2
    assert "no snapshots" in capsys.readouterr().err


def test_plan_is_lean_for_older_releases():
    site = load_site(GOLDEN_INPUT)
    per_version: dict[str, int] = {}
    for page in plan(site):
        per_version[page.path.split("/")[0]] = per_version.get(page.path.split("/")[0], 0) + 1
    # overview, defaults, enums, deprecated, catalogues, templates, typos, changes, and field pages
    # unless identical to 1.1.0's (then shared)
    assert per_version["1.0.0"] >= 8
    assert per_version["1.1.0"] > 8


def test_a_pattern_path_heading_keeps_its_words_and_id():
    """``different_groups.*.params`` as a heading: the ``*`` must not open emphasis and eat the ``{ #id }``."""
    import markdown

    from dsfields.docs.filters import md_heading

    path = "compression_training.channel_pruning.different_groups.*.params"
    html = markdown.markdown(f"## {md_heading(path)} {{ #changes-{path}}}", extensions=["attr_list", "toc"])
    assert html == f'<h2 id="changes-{path}">{path}</h2>'


# ---------------------------------------------------------------- errors and warnings (issue 38)


@pytest.fixture(scope="module")
def errors_pages() -> tuple[Any, dict[str, str]]:
    """The committed snapshots' site and its errors page in each language (the newest's: one for every release)."""
    from dsfields import __version__
    from dsfields.docs.views import ERRORS, shared_environment

    site = load_site(changes_of=set())
    rendered = {}
    for lang in ("en", "zh"):
        site.lang = lang
        page = next(p for p in plan(site) if p.context.get("page_key") == ERRORS and p.path.startswith(site.newest))
        rendered[lang] = shared_environment().get_template(page.template).render(
            header={"by": "test", "dsfields": __version__}, **page.context)
    site.lang = "en"
    return site, rendered


def test_errors_index_runs_merge_consecutive_releases_and_count_each_once():
    from dsfields.docs.errors_index import _runs

    assert _runs(["a", "b", "b", "c", "e", "x"], ["a", "b", "c", "d", "e"]) == [[0, 2], [4, 4]]


ERROR_ENTRY = re.compile(r'<section class="dsf-error" id="(DS\d+)" data-runs="([\d -]+)">(.*?)</section>', re.S)
VARIANT = re.compile(r'<div class="dsf-error__variant" data-runs="([\d -]+)">(.*?)</div>', re.S)


@pytest.mark.data
@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("version", ["0.8.0", "0.14.0", "0.19.8"])
def test_errors_page_shows_exactly_the_releases_entries_with_the_fix_in_its_language(errors_pages, lang, version):
    """A release's errors page (the one page of every release, its script showing the entries whose data-runs
    include the reader's release) lists exactly the entries of errors_index.build() whose runs include that
    release, each with its message and its fix in the page's language."""
    from dsfields.docs import errors_index

    site, rendered = errors_pages
    document = errors_index.build()
    expected = {e["id"]: e for e in errors_index.in_release(document, version)}
    assert expected, version
    at = site.versions.index(version)
    shown = {}
    for entry_id, runs, body in ERROR_ENTRY.findall(rendered[lang]):
        ends = [tuple(int(n) for n in run.split("-")) for run in runs.split()]
        assert all(first <= last for first, last in ends), entry_id
        assert all(later[0] > earlier[1] + 1 for earlier, later in zip(ends, ends[1:], strict=False)), entry_id
        if any(first <= at <= last for first, last in ends):
            shown[entry_id] = body
    assert sorted(shown) == sorted(expected)
    for entry_id, body in shown.items():
        # the variant the reader of this release is shown (its keys and fix), and no key the release lacks in it
        # (a message raised at two places of one release has a variant for each)
        variants = [v for v in expected[entry_id]["variants"]
                    if any(first <= at <= last for first, last in v["releases"])]
        own = "".join(b for runs, b in VARIANT.findall(body)
                      if any(int(x) <= at <= int(y) for x, y in (r.split("-") for r in runs.split())))
        assert variants and own, entry_id
        listed = (site.index or {}).get("fields", {})
        for variant in variants:
            assert filters.html_text(variant["fix"][lang]) in own, entry_id
            assert all(f"#{anchor(key)}" in own for key in variant["keys"] if key in listed), entry_id
        assert html.escape(expected[entry_id]["message"], quote=False) in body, entry_id
        assert f'href="#{entry_id}"' in body
    if lang == "zh":
        # No English sentence: past the code (DeepSpeed's words, keys, commands), what is left in Latin letters is a
        # name (a file, a release), never four words in a row.
        words = re.sub(r"<(pre|code)\b.*?</\1>|<[^>]+>", " ", rendered[lang].split("{ #errors-warnings}", 1)[1],
                       flags=re.S)
        words = re.sub(r"`[^`]*`|DS\d+|\b[\d.]+\b|DeepSpeed|ID", " ", words)
        assert not re.findall(r"\b[A-Za-z]+ [A-Za-z]+ [A-Za-z]+ [A-Za-z]+\b", words)


def test_unfilled_batch_autos_show_the_error_of_their_combination(golden_docs):
    """Template A leaves all three batch keys "auto": DeepSpeed's completion returns early and `train_batch > 0`
    fails, not the division a lone "auto" meets; template C (micro batch and accumulation "auto", no batch size)
    fails in their product (audit r3, read in 0.10.3's and 0.14.4's config.py and run)."""
    from dsfields.model.batch import BATCH_KEYS, unfilled_auto_error

    assert unfilled_auto_error("auto", "auto", "auto") == (
        "TypeError: '>' not supported between instances of 'str' and 'int'")
    assert unfilled_auto_error(None, "auto", "auto") == "TypeError: can't multiply sequence by non-int of type 'str'"
    assert unfilled_auto_error("auto", 4, None) == "TypeError: unsupported operand type(s) for //: 'str' and 'int'"
    assert unfilled_auto_error(32, 4, None) is None and unfilled_auto_error(None, None, None) is None
    text = (golden_docs / "1.1.0" / "config-templates.md").read_text(encoding="utf-8")
    template_a, rest = text.split("## A.", 1)[1].split("## B.", 1)
    template_c = rest.split("## C.", 1)[1]
    for key in BATCH_KEYS:
        row = next(line for line in template_a.splitlines() if f'#{key}"' in line)
        assert "TypeError: '&gt;' not supported between instances of 'str' and 'int'" in row, row
    rows_c = [line for line in template_c.splitlines() if any(f'#{key}"' in line for key in BATCH_KEYS)]
    assert rows_c and all("can't multiply sequence" in row for row in rows_c if '"auto"' in row), rows_c
