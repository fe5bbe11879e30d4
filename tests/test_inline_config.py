"""A config given as text (``dsfields mcp``'s ``config_text``) is read like a file, in memory, on its thread only."""

from __future__ import annotations

import threading

import pytest

from dsfields.configfile import MAX_BYTES, ConfigFileError, inline_config, load

pytestmark = pytest.mark.unit


def test_the_text_stands_for_its_name_within_the_block_and_thread_only(tmp_path):
    name = str(tmp_path / "ds_config.json")
    with inline_config(name, '{\n  "train_batch_size": 8,\n  "train_batch_size": 16\n}\n'):
        config = load(name)  # no such file exists: the text is read
        assert config.data == {"train_batch_size": 16}
        assert config.name == name
        assert config.line_of(("train_batch_size",)) in (2, 3)
        seen = []
        other = threading.Thread(target=lambda: seen.append(_refusal(name)))
        other.start()
        other.join()
        assert seen and "no such file" in seen[0]  # another thread reads the file system
    assert "no such file" in _refusal(name)  # and so does this one after the block


def test_the_size_limit_holds_for_text_too():
    with pytest.raises(ConfigFileError, match="larger than 8 MiB"):
        inline_config("big.json", " " * MAX_BYTES + "{}")


def _refusal(name: str) -> str:
    try:
        load(name)
    except ConfigFileError as exc:
        return str(exc)
    return ""
