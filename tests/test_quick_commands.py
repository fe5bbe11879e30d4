"""``lookup`` and ``check`` do no work their answer does not need (issue 37, "fast on every input"), and answer as
they did: each test below pins one piece of work that used to be done on every call, and the answer it gave.

Hand-made releases in ``tmp_path`` (test_history.py's ``write_snapshot``, conftest's ``fake_snapshot``),
compressed as the wheel's build hook compresses them where the wheel is the case.
"""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest
from conftest import record_decoded
from hypothesis import given
from hypothesis import strategies as st
from test_history import Z, field_record, write_snapshot

from dsfields.check.engine import _names_word
from dsfields.cli import get_parser, main
from dsfields.model import generated, paths_index, store
from dsfields.model.store import SNAPSHOT_FILE, dumps
from dsfields.model.wording import SpellingIndex, same_words

pytestmark = pytest.mark.unit

WORDS = st.text(alphabet="ab_.-xé1 ", max_size=12)


@given(WORDS, st.lists(st.text(alphabet="ab_x1é", min_size=1, max_size=5), min_size=1, max_size=6))
def test_a_sibling_named_in_a_refusal_is_found_as_the_one_regex_found_it(text: str, siblings: list[str]) -> None:
    """check's "do the probes' refusals name a sibling key?" without compiling a regex of every sibling per key."""
    named = re.compile(rf"(?<![\w.])(?:{'|'.join(re.escape(k) for k in siblings)})(?!\w)")
    assert any(_names_word(text, k) for k in siblings) == bool(named.search(text))


@given(st.text(alphabet="ab_-xAB", max_size=8), st.lists(st.text(alphabet="ab_-xAB", max_size=8), max_size=12))
def test_the_spelling_index_answers_as_the_candidates_asked_one_by_one(key: str, candidates: list[str]) -> None:
    assert same_words(key, SpellingIndex(candidates)) == same_words(key, candidates)


def test_a_compressed_file_reads_as_gzip_reads_it(tmp_path: Path) -> None:
    """One zlib call instead of the gzip module's Python loop: the same bytes, the same refusals."""
    target = tmp_path / "fields.json"
    packed = tmp_path / "fields.json.gz"
    for raw in (gzip.compress(b"abc") + gzip.compress(b"def") + b"\0\0", gzip.compress(b"x" * 100_000), b""):
        packed.write_bytes(raw)
        assert generated.read_generated(str(target)) == (gzip.decompress(raw) if raw else b"")
    packed.write_bytes(gzip.compress(b"abc" * 1000)[:-5])
    with pytest.raises(OSError, match="ended before the end-of-stream marker"):
        generated.read_generated(str(target))
    packed.write_bytes(b"not gzip at all")
    with pytest.raises(OSError, match=re.escape(str(packed))):
        generated.read_generated(str(target))


def test_the_default_release_is_found_without_asking_every_release(tmp_path: Path, monkeypatch) -> None:
    """No installed DeepSpeed: the newest snapshotted release, asking only the folders above it (a folder
    without a snapshot, a newer one, and ``hf/`` are skipped as available_versions skips them)."""
    for version in ("0.1.0", "0.2.0", "0.9.0", "0.10.0", "0.10.1"):
        write_snapshot(tmp_path, version, [field_record(f"{Z}.kept")])
    (tmp_path / "0.11.0").mkdir()  # a release being extracted: no snapshot yet
    (tmp_path / "hf").mkdir()
    monkeypatch.setattr(store, "installed_deepspeed_version", lambda: None)
    asked: list[str] = []
    real = store.generated_file

    def counting(path: str) -> str | None:
        asked.append(path)
        return real(path)

    monkeypatch.setattr(store, "generated_file", counting)
    monkeypatch.setattr(generated, "generated_file", counting)  # available_versions' own
    chosen = store.resolve_version(None, tmp_path)
    assert [Path(p).parent.name for p in asked] == ["0.11.0", "0.10.1"]
    assert chosen == store.available_versions(tmp_path)[-1] == "0.10.1"


def test_aliases_of_an_indexed_ds_config_snapshot_are_answered_without_decoding_a_record(tmp_path: Path,
                                                                                          fake_snapshot) -> None:
    folder = tmp_path / fake_snapshot["deepspeed_version"]
    folder.mkdir()
    text = dumps(fake_snapshot)
    (folder / SNAPSHOT_FILE).write_text(text, encoding="utf-8")
    (folder / paths_index.INDEX_NAME).write_text(paths_index.build(text), encoding="utf-8")
    indexed = paths_index.load_indexed(str(folder / SNAPSHOT_FILE))
    assert isinstance(indexed, paths_index.IndexedSnapshot)
    assert indexed.by_alias == store.Snapshot(json.loads(text)).by_alias
    assert not any(record_decoded(record) for record in indexed.fields.values())


def _inference_tree(root: Path, training: dict, with_index: bool) -> Path:
    """One release, compressed as in the wheel: its ds_config snapshot and an inference document whose sections
    are models the training config does not use; with ``with_index``, the build hook's inference_paths.json."""
    version = training["deepspeed_version"]
    folder = root / version
    folder.mkdir(parents=True)
    inference = json.loads(json.dumps(training)) | {"document": "inference"}
    for section in inference["sections"].values():
        if section.get("model"):
            section["model"] = "inference." + section["model"]
    files = {SNAPSHOT_FILE: dumps(training), "inference.json": dumps(inference)}
    files[paths_index.INDEX_NAME] = paths_index.build(files[SNAPSHOT_FILE])
    if with_index:
        files[paths_index.index_name("inference.json")] = paths_index.build(files["inference.json"])
    for name, text in files.items():
        (folder / (name + ".gz")).write_bytes(gzip.compress(text.encode("utf-8"), mtime=0))
    return folder


def test_lookups_inference_note_reads_the_document_only_for_a_word_it_names(tmp_path: Path, monkeypatch,
                                                                           fake_snapshot) -> None:
    """Every lookup asks whether its word is also an inference key: from the wheel's index of the document, the
    document itself is read only when the word is one, and the note is the one the whole document gives."""
    from dsfields.inference import inference_note

    plain = _inference_tree(tmp_path / "plain", fake_snapshot, with_index=False)
    wheel = _inference_tree(tmp_path / "wheel", fake_snapshot, with_index=True)
    version = fake_snapshot["deepspeed_version"]
    training = store.load(version, plain.parent)
    word = next(key for _, key, _ in training.names if key)
    monkeypatch.setenv("DSFIELDS_GENERATED", str(plain.parent))
    store._load_cached.cache_clear()
    expected = inference_note(word, training, True)
    assert expected is not None and version in expected["message"]

    monkeypatch.setenv("DSFIELDS_GENERATED", str(wheel.parent))
    read: list[str] = []
    real = generated.read_generated

    def watching(path: str) -> bytes:
        read.append(Path(path).name)
        return real(path)

    monkeypatch.setattr(generated, "read_generated", watching)
    assert inference_note("no_such_word_anywhere", training, False) is None
    assert "inference.json" not in read and paths_index.index_name("inference.json") in read
    assert inference_note(word, training, True) == expected


def test_a_named_command_builds_its_parser_alone_and_the_top_level_help_still_lists_every_command(capsys) -> None:
    alone = get_parser(["lookup"], "en", only=True)
    (commands,) = [a for a in alone._actions if a.dest == "command"]
    assert list(commands.choices) == ["lookup"]
    assert alone.parse_args(["lookup", "zero_optimization"]).query == "zero_optimization"
    with pytest.raises(SystemExit):
        main(["-h", "lookup"])
    shown = capsys.readouterr().out
    assert all(name in shown for name in ("lookup", "check", "resolve", "estimate", "explain"))
