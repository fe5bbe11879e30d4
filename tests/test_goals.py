"""`lookup optimizer:NAME`, `scheduler:NAME` and goal words (memory, OOM, 显存, ...), per release, en and zh.

The curated data (prose/goals.toml, prose/class_choice.toml) is checked against the snapshots: every
tagged path is a field some release has, the paths a release lacks are named in its answer rather
than dropped, and every class a "runs when" line names is one the catalogue builds.
"""

from __future__ import annotations

import json

import pytest

from dsfields import catalog_answer, goal_answer
from dsfields.cli import main
from dsfields.model import goals
from dsfields.model.store import available_versions, load_indexed, repo_generated_dir

pytestmark = pytest.mark.data

VERSIONS = available_versions(repo_generated_dir())
NEWEST = VERSIONS[-1]
LANGS = ("en", "zh")


@pytest.fixture(autouse=True)
def terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "100")
    monkeypatch.delenv("DSFIELDS_GENERATED", raising=False)
    monkeypatch.delenv("LANG", raising=False)
    monkeypatch.delenv("LC_ALL", raising=False)
    monkeypatch.delenv("LC_MESSAGES", raising=False)


def lookup(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = main(["lookup", *args])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# --- the curated data against the snapshots -----------------------------------------------------


def test_every_tagged_path_is_a_field_of_some_release_and_every_goal_speaks_both_languages() -> None:
    every = set()
    for version in VERSIONS:
        every |= set(load_indexed(version).fields)
    table = goals.goals()
    assert set(table) >= {"memory", "speed", "communication", "offload", "checkpoint"}
    for goal in table.values():
        assert goal.tags, goal.name
        assert set(goal.title) == set(LANGS), goal.name
        for tag in goal.tags:
            assert tag.path in every, f"goals.toml: {tag.path} ({goal.name}) is no field of any release"
            assert set(tag.why) == set(LANGS) and all(tag.why.values()), (goal.name, tag.path)
        ranks = [t.rank for t in goal.tags]
        assert len(ranks) == len(set(ranks)), f"{goal.name}: two fields share a rank"


def test_goal_words_name_one_goal_each_and_the_issues_words_are_there() -> None:
    seen: dict[str, str] = {}
    for goal in goals.goals().values():
        for word in goal.words:
            assert seen.setdefault(word, goal.name) == goal.name, word
    wanted = {"memory": "memory", "OOM": "memory", "speed": "speed", "communication": "communication",
              "offload": "offload", "checkpoint": "checkpoint", "显存": "memory", "内存": "memory",
              "通信": "communication", "卸载": "offload", "速度": "speed"}
    for word, goal in wanted.items():
        found = goals.goal_for(word)
        assert found is not None and found.name == goal, word


def test_the_quick_no_goal_answer_never_hides_a_goal_word() -> None:
    """goal_for answers None for most one-word lookups without parsing goals.toml: never for a goal's word."""
    for goal in goals.goals().values():
        for word in (goal.name, *goal.words):
            for spelling in (word, word.upper(), f" goal:{word.title()} "):
                found = goals.goal_for(spelling)
                assert found is not None and found.name == goal.name, spelling
    assert not goals._may_name_a_goal("fp16") and goals.goal_for("fp16") is None  # the quick answer, taken


@pytest.mark.parametrize("version", VERSIONS)
def test_each_release_shows_only_its_fields_and_names_the_tagged_ones_it_lacks(version: str) -> None:
    snapshot = load_indexed(version)
    for goal in goals.goals().values():
        present, missing = goal_answer.split(snapshot, goal)
        assert all(t.path in snapshot.fields for t in present)
        assert {t.path for t in missing} == {t.path for t in goal.tags} - set(snapshot.fields)
        payload = goal_answer.goal_json(snapshot, goal, "en")
        assert [f["path"] for f in payload["fields"]] == [t.path for t in present]
        assert [f["rank"] for f in payload["fields"]] == sorted(f["rank"] for f in payload["fields"])
        assert [m["path"] for m in payload["missing_in_release"]] == [t.path for t in missing]


def test_missing_tags_per_release_report() -> None:
    """The report the issue asks for: per release, the goal tags that point at fields it lacks. The
    newest release has every tagged field; older ones lack the ones added since (and say so)."""
    report = {}
    for version in VERSIONS:
        snapshot = load_indexed(version)
        lacking = sorted({f"{t.goal}:{t.path}" for g in goals.goals().values()
                          for t in goal_answer.split(snapshot, g)[1]})
        if lacking:
            report[version] = lacking
    assert NEWEST not in report, report.get(NEWEST)
    print(json.dumps({v: len(p) for v, p in report.items()}))
    assert report, "every tagged field exists in every release: the report would never be exercised"


def test_class_choice_names_types_and_classes_the_catalogues_build() -> None:
    built: dict[tuple[str, str], set[str]] = {}
    for version in VERSIONS:
        for section, catalog in load_indexed(version).catalogs.items():
            for name, entry in catalog.names.items():
                built.setdefault((section, name), set()).update(c.name for c in entry.classes)
    choice = goals.class_choice()
    assert choice["read_from"] in VERSIONS
    for section in catalog_answer.SECTIONS:
        for name, classes in (choice.get(section) or {}).items():
            assert (section, name) in built, f"class_choice.toml: no {section} type {name}"
            for cls, text in classes.items():
                assert cls in built[section, name], f"class_choice.toml: {section}.{name} never builds {cls}"
                assert set(text) == set(LANGS), (name, cls)
    # Every type of the curated release with several classes says when each one runs.
    for section, catalog in load_indexed(choice["read_from"]).catalogs.items():
        for name, entry in catalog.names.items():
            if len(entry.classes) > 1:
                for cls in entry.classes:
                    assert goals.runs_when(section, name, cls.name, "en"), (section, name, cls.name)


# --- lookup optimizer:/scheduler:, per release and language --------------------------------------


def _expected_params(entry) -> set[str]:
    return {p for c in entry.classes for p in (c.params or {})} | set(entry.engine_params)


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("version", VERSIONS)
def test_catalogue_lookups_per_release(capsys, version: str, lang: str) -> None:
    snapshot = load_indexed(version)
    for query, section, name in (("optimizer:AdamW", "optimizer", "AdamW"),
                                 ("scheduler:WarmupDecayLR", "scheduler", "WarmupDecayLR")):
        entry = catalog_answer.find_entry(snapshot.catalogs[section], name)
        assert entry is not None, (version, query)
        code, out, err = lookup(capsys, query, "--version", version, "--lang", lang)
        assert (code, err) == (0, ""), (version, query, err)
        assert f"DeepSpeed {version}" in out and out.startswith(f"{section}:{entry.name}")
        params = out.split("\n参数:\n" if lang == "zh" else "\nparams:\n", 1)[1]
        listed = {line.split()[0] for line in params.splitlines() if line.startswith("  ") and line[2] != " "}
        assert listed == _expected_params(entry), (version, query)
        required = {p for c in entry.classes for p, spec in (c.params or {}).items() if spec.required}
        for param in required:
            line = next(x for x in params.splitlines() if x.split() and x.split()[0] == param)
            assert ("必填" if lang == "zh" else "required") in line, (version, param)
        for rejected in snapshot.catalogs[section].rejected_params:
            assert f"{rejected}:" in out, (version, rejected)
        for cls in entry.classes:
            assert cls.name in out
        if lang == "zh":
            assert "实际运行哪个类" in out and "参数:" in out
        # JSON: the snapshot's own entry, untouched.
        code, out, _ = lookup(capsys, query, "--version", version, "--lang", lang, "--json")
        item = json.loads(out)["matches"][0]
        assert code == 0 and item["entry"] == entry.raw and item["type"] == entry.name


@pytest.mark.parametrize("lang", LANGS)
@pytest.mark.parametrize("version", VERSIONS)
def test_goal_lookups_per_release(capsys, version: str, lang: str) -> None:
    snapshot = load_indexed(version)
    for word in ("memory", "OOM", "显存", "speed", "communication", "offload", "卸载"):
        goal = goals.goal_for(word)
        assert goal is not None
        present, missing = goal_answer.split(snapshot, goal)
        code, out, err = lookup(capsys, word, "--version", version, "--lang", lang)
        assert (code, err) == (0, ""), (version, word)
        positions = [out.index(f"{t.path}  ") for t in present]
        assert positions == sorted(positions), (version, word, "not in rank order")
        flat = "".join(out.split())  # Chinese lines break between any two characters, without a space
        for tag in present:
            assert "".join(tag.text(lang).split()) in flat, (version, tag.path)
        for tag in missing:
            assert tag.path in out.split("\n\n")[-2], (version, word, tag.path)


def test_plain_type_name_finds_the_catalogue_entry(capsys) -> None:
    assert lookup(capsys, "AdamW", "--version", NEWEST) == lookup(capsys, "optimizer:AdamW", "--version", NEWEST)
    code, out, _ = lookup(capsys, "WarmupDecayLR", "--version", NEWEST)
    assert code == 0 and out.startswith("scheduler:WarmupDecayLR")


def test_a_field_answer_stays_a_field_answer(capsys) -> None:
    """A key lookup never turns into a goal or type answer; a section that is also a goal word gets one hint."""
    code, out, _ = lookup(capsys, "stage3_max_live_parameters", "--version", NEWEST)
    assert code == 0 and "goal" not in out
    code, out, _ = lookup(capsys, "checkpoint", "--version", NEWEST)
    assert code == 0 and out.startswith("checkpoint: section") and "lookup goal:checkpoint" in out
    code, out, _ = lookup(capsys, "goal:checkpoint", "--version", NEWEST)
    assert code == 0 and out.startswith("checkpoint:") and "checkpoint.load_universal" in out


def _removed_type() -> tuple[str, str, str, str]:
    """An optimizer type some release had and the newest lacks, with its last and first-missing release."""
    states: dict[str, list[bool]] = {}
    for number, version in enumerate(VERSIONS):
        for name, entry in load_indexed(version).catalogs["optimizer"].names.items():
            states.setdefault(name, [False] * len(VERSIONS))[number] = entry is not None
    newest = load_indexed(NEWEST).catalogs["optimizer"]
    for name, present in sorted(states.items()):
        # "Muon" (torch's) is absent from the newest catalogue, but DeepSpeed's own "muon" takes the name.
        if present[0] and not present[-1] and catalog_answer.find_entry(newest, name) is None:
            last = max(i for i, p in enumerate(present) if p)
            return "optimizer", name, VERSIONS[last], VERSIONS[last + 1]
    pytest.skip("no optimizer type was removed in the committed releases")


def test_a_removed_type_says_when_it_was_removed(capsys) -> None:
    section, name, last, gone = _removed_type()
    code, out, err = lookup(capsys, f"{section}:{name}", "--version", NEWEST, "--history")
    assert (code, err) == (1, "")
    assert f"Last in DeepSpeed {last}; gone from {gone} on" in out
    assert f"removed (last in {last})" in out
    code, out, _ = lookup(capsys, f"{section}:{name}", "--version", NEWEST, "--lang", "zh")
    assert f"最后出现在 DeepSpeed {last}" in out
    code, out, _ = lookup(capsys, f"{section}:{name}", "--version", NEWEST, "--json")
    item = json.loads(out)["matches"][0]
    assert (item["last_version"], item["removed_in"]) == (last, gone)
    assert lookup(capsys, f"{section}:{name}", "--version", last)[0] == 0
    # Asked without the prefix, a class-like spelling (as configs write it) finds it too.
    if load_indexed(last).catalogs[section].names[name].case_insensitive:
        code, out, _ = lookup(capsys, name[:1].upper() + name[1:], "--version", NEWEST)
        assert code == 1 and f"Last in DeepSpeed {last}; gone from {gone} on" in out


def test_unknown_type_suggests_the_spelling_deepspeed_wants(capsys) -> None:
    code, out, _ = lookup(capsys, "optimizer:sgd", "--version", NEWEST)
    assert code == 1 and "optimizer:SGD" in out
    code, out, err = lookup(capsys, "goal:nothing", "--version", NEWEST)
    assert code == 2 and "memory" in err and out == ""


def test_history_lists_param_default_changes(capsys) -> None:
    states = catalog_answer.type_states("optimizer", "AdamW")
    events = catalog_answer.type_history(states)
    assert events[0]["kind"] == "present" and events[0]["version"] == VERSIONS[0]
    code, out, _ = lookup(capsys, "optimizer:AdamW", "--version", NEWEST, "--history")
    assert code == 0 and f"history ({len(VERSIONS)} snapshots" in out
    for event in events:
        assert event["version"] in out.split("history (", 1)[1]
