"""What the site says about a change and a batch key's type (issue 24): our words in the page's language, only
DeepSpeed's own message marked 原文; a key DeepSpeed uses as an integer is not called a boolean."""

from __future__ import annotations

import pytest

from dsfields.diff import Change, ChangeKind
from dsfields.docs.filters import integer_taking_true
from dsfields.docs.views import change_detail_html

pytestmark = pytest.mark.unit

MESSAGE = "Elastic training has been removed; the 'elasticity' configuration block is no longer supported."


def test_only_deepspeeds_message_is_marked_original():
    removed = Change(ChangeKind.BECAME_REMOVED, "elasticity", "", None, MESSAGE, MESSAGE)
    zh = change_detail_html(removed, "zh")
    assert zh.startswith('<span class="dsf-original" lang="en">Elastic training has been removed;')
    assert zh.endswith("（原文）</small>")
    assert change_detail_html(removed, "en") == "Elastic training has been removed; the 'elasticity' " \
        "configuration block is no longer supported."
    # DeepSpeed's message for a key it did not read before: our note after it is ours, in Chinese, not 原文.
    new = Change(ChangeKind.BECAME_REMOVED, "x", "", None, MESSAGE, f"{MESSAGE} (was not read before)")
    assert change_detail_html(new, "zh").endswith("</small>（之前未读取）")
    # A key rejected with its section: the detail is ours (the message is the section's, not in the detail).
    inside = Change(ChangeKind.BECAME_REMOVED, "elasticity.enabled", "elasticity", None, MESSAGE,
                    "rejected with its section elasticity")
    assert change_detail_html(inside, "zh") == "随所在的节 elasticity 一起被拒绝"


@pytest.mark.parametrize(("detail", "zh"), [
    ("default 1.0", "默认值 1.0"),
    ("new section", "新的节"),
    ("no longer read; a value here is now silently ignored", "不再读取；此处的值现在被静默忽略"),
    ("unknown keys: ignored → error (dict reader → pydantic model; a typo that was silently ignored now raises)",
     "未知键：静默忽略 → 报错（dict 读取 → pydantic 模型；以前被静默忽略的拼错现在会报错）"),
])
def test_our_details_are_translated_and_not_marked(detail, zh):
    change = Change(ChangeKind.ADDED, "k", "", None, None, detail)
    shown = change_detail_html(change, "zh")
    assert "dsf-original" not in shown
    assert shown == zh


@pytest.mark.parametrize(("kind", "detail", "zh"), [
    (ChangeKind.TYPE_CHANGED, 'JSON types [] → ["integer"]', 'JSON 类型 <code>[] → ["integer"]</code>'),
    (ChangeKind.DEFAULT_CHANGED, "0.0 → 1.0", "<code>0.0 → 1.0</code>"),
    (ChangeKind.CONSTRAINT_CHANGED, 'choices: null → ["auto", "step"]',
     '<code>choices: null → ["auto", "step"]</code>'),
])
def test_value_details_are_code(kind, detail, zh):
    change = Change(kind, "k", "", None, None, detail)
    shown = change_detail_html(change, "zh")
    assert "dsf-original" not in shown
    assert shown == zh


def _record(json_types, probes, **extra):
    return {"type": "any", "default": None, "json_types": json_types,
            "probes": {name: {"ok": ok} for name, ok in probes.items()}, **extra}


def test_a_batch_key_is_an_integer_that_also_takes_true():
    accumulation = _record(["boolean", "integer", "null"], {"true": True, "1": True, "0": False, "-1": False})
    assert integer_taking_true(accumulation) == {"types": ["integer", "null"], "least": 1}
    # Without probes that show 0 and -1 refused, no lower bound is claimed.
    assert integer_taking_true(_record(["boolean", "integer"], {"true": True, "1": True})) == {
        "types": ["integer"], "least": None}


@pytest.mark.parametrize("record", [
    _record(["boolean", "integer"], {"true": True}, type="bool", default=False),  # a flag that takes 0/1 too
    _record(["boolean", "integer", "number", "string"], {"true": True}),  # takes anything: no claim
    _record(["boolean", "integer"], {"true": False}),  # true not seen to pass
    _record(["integer"], {"true": True}),
])
def test_other_keys_keep_their_recorded_types(record):
    assert integer_taking_true(record) is None


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_lookup_and_the_site_word_a_batch_key_alike(lang):
    """`dsfields lookup gradient_accumulation_steps` gives the type the field page gives (one wording helper),
    not "boolean / integer / null"."""
    import re

    from dsfields.docs.filters import integer_taking_true_text
    from dsfields.field_answer import Match, format_field
    from dsfields.model import wording
    from dsfields.model.records import Field, Snapshot
    from dsfields.terminal import Style

    raw = _record(["boolean", "integer", "null"], {"true": True, "1": True, "0": False, "-1": False},
                  key="gradient_accumulation_steps", path="gradient_accumulation_steps", section="")
    field = Field(raw)
    site = integer_taking_true_text(integer_taking_true(raw), lang)
    assert re.sub(r"<[^>]+>", "", site) == wording.type_text(field, lang)
    expected = {"en": "integer ≥ 1 / null (not set); true passes too, as 1 (a Python bool is an int)",
                "zh": "integer ≥ 1 / null (未设置); true 也能通过，按 1 计（Python 的 bool 是 int）"}[lang]
    assert wording.type_text(field, lang) == expected
    assert "<code>true</code>" in site and "boolean" not in site
    snapshot = Snapshot({"deepspeed_version": "0.0.0", "fields": {field.path: raw}, "sections": {}, "enums": {}})
    header = " ".join(format_field(snapshot, Match(field.path, "field", field=field), 400, Style(False), lang)[:1])
    assert header.startswith(f"gradient_accumulation_steps: {expected} ")
    assert wording.type_text(field, compact=True) == "integer ≥ 1 / null"
    # A key that only takes integers keeps its plain type.
    assert wording.type_text(Field({**raw, "json_types": ["integer"], "type": "int"})) == "int"


def test_links_to_a_release_page_stored_once_go_to_its_owner():
    """A page of 0.14.4 stored as 0.14.5's: Markdown links and raw-HTML site URLs to it, from any page,
    lead to 0.14.5's page (anchors kept); other links stay."""
    from dsfields.docs.planning import LANDING_SNIPPET, relink

    moved = {"0.14.4/default-values.md": "0.14.5/default-values.md"}
    text = ('[defaults](default-values.md#zero) <a href="default-values/#zero">x</a> '
            '<a href="../0.14.3/default-values/">older</a> [enums](enum-types.md)')
    assert relink("0.14.4/index.md", text, moved) == (
        '[defaults](../0.14.5/default-values.md#zero) <a href="../0.14.5/default-values/#zero">x</a> '
        '<a href="../0.14.3/default-values/">older</a> [enums](enum-types.md)')
    assert relink("0.14.4/enum-types.md", '<a href="../default-values/">d</a>', moved) == \
        '<a href="../../0.14.5/default-values/">d</a>'
    assert relink("releases/history.md", "[d](../0.14.4/default-values.md)", moved) == \
        "[d](../0.14.5/default-values.md)"
    # The landing snippet's links are the home page's (it is included into index.md).
    assert relink(LANDING_SNIPPET, '<a href="0.14.4/default-values/">d</a>', moved) == \
        '<a href="0.14.5/default-values/">d</a>'


def test_pages_alike_but_for_their_release_are_stored_once():
    """The newest of a run of releases whose rendered pages differ only in the release's number, date and
    links to its own pages owns the page; a page that says anything else differently has its own."""
    from types import SimpleNamespace

    from dsfields.docs.planning import release_page_owners

    versions = ["0.9.0", "0.9.1", "0.9.2", "0.10.0"]
    site = SimpleNamespace(versions=versions, owners={("0.9.0", "bf16"): "0.9.1", ("0.9.1", "bf16"): "0.9.1"},
                           dates={"0.9.0": "2023-01-02", "0.9.1": "2023-02-03", "0.9.2": "2023-03-04"})
    links = "[bf16](fields/bf16.md) tag v{v} [d](default-values.md)"
    text = {
        "0.9.0": "# DeepSpeed 0.9.0 (2023-01-02): enums\n" + links.replace("fields/", "../0.9.1/fields/"),
        "0.9.1": "# DeepSpeed 0.9.1 (2023-02-03): enums\n" + links,
        "0.9.2": "# DeepSpeed 0.9.2 (2023-03-04): enums\n" + links + ", not 0.9.1",
        "0.10.0": "# DeepSpeed 0.10.0: enums\n" + links,
    }
    text = {v: t.replace("{v}", v) for v, t in text.items()}
    paths = {(v, "enum-types"): f"{v}/enum-types.md" for v in versions}
    owners = release_page_owners(site, paths, {f"{v}/enum-types.md": t for v, t in text.items()})
    assert owners == {("0.10.0", "enum-types"): "0.10.0", ("0.9.2", "enum-types"): "0.9.2",
                      ("0.9.1", "enum-types"): "0.9.1", ("0.9.0", "enum-types"): "0.9.1"}
