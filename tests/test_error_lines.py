"""Refusals of the extractor and the docs builder are :class:`DsfieldsError` subclasses: one line, exit 2, the
same whether the command runs under ``dsfields`` or as a ``python -m`` entry point (issue 22)."""

from __future__ import annotations

import pytest

from dsfields.cli import main
from dsfields.model.errors import DsfieldsError, ExtractionError, MissingExtra, UsageError, standalone

pytestmark = pytest.mark.unit


def test_a_standalone_entry_point_prints_one_safe_line_and_the_exit_code(capsys):
    def refuses(argv):
        raise ExtractionError("the launch-rule probe failed\x1b[2J\nforged line")

    assert standalone(refuses, "dsfields extract") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("dsfields extract: the launch-rule probe failed")
    assert "\x1b" not in err  # data never reaches the terminal as a control character


def test_a_standalone_entry_point_passes_the_exit_code_through():
    assert standalone(lambda argv: 0, "dsfields docs") == 0


def test_missing_extra_names_the_extra_or_keeps_the_commands_words():
    assert "pip install dsfields[docs]" in str(MissingExtra("mkdocs-material", "docs"))
    words = "cannot import DeepSpeed (x); install it with `pip install dsfields[extract]`"
    custom = MissingExtra("deepspeed", message=words)
    assert str(custom).startswith("cannot import DeepSpeed") and custom.extra == "extract"
    assert all(issubclass(kind, DsfieldsError) for kind in (ExtractionError, MissingExtra, UsageError))


@pytest.mark.parametrize("generated", ["empty", "absent"])
def test_docs_build_without_snapshots_is_one_line_and_exit_2(tmp_path, capsys, generated):
    (tmp_path / "mkdocs.yml").write_text("site_name: x\n")
    (tmp_path / "docs").mkdir()
    (tmp_path / "empty").mkdir()
    code = main(["docs", "build", "--no-mkdocs", "--config-file", str(tmp_path / "mkdocs.yml"),
                 "--generated", str(tmp_path / generated)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("dsfields docs: no snapshots in")
    assert "Traceback" not in err and not (tmp_path / "site").exists()


def test_snapshot_with_a_bad_out_folder_is_one_line_and_exit_2(tmp_path, capsys):
    out = tmp_path / "a-file"
    out.write_text("not a folder")
    assert main(["snapshot", "0.19.8", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("dsfields snapshot: ") and out.read_text() == "not a folder"
