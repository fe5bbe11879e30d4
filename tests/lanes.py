"""Test lanes, and the guard that keeps the unit lane honest.

Every test belongs to one lane, set by a ``pytestmark`` in its module (or a mark on the test itself):

- ``unit``: pure code on fixture packages and tiny hand-made snapshots. No committed snapshot is read, no
  DeepSpeed, torch or mkdocs is imported, no compiler, browser or site build runs. ``pytest -m unit``.
- ``data``: reads the committed snapshots in ``generated/``.
- ``integration``: the real DeepSpeed (and torch, transformers), its CPU launch.
- ``site``: the docs build and headless Chromium.
- ``build``: g++ and wheel builds.

The guard is an audit hook (audit hooks cannot be removed, so it is switched on per test): while a ``unit`` test
runs, opening anything under ``generated/``, importing DeepSpeed/torch/mkdocs/playwright, or starting a compiler,
browser or mkdocs raises :class:`LaneViolation`. A unit test that needs any of them fails, and so it is marked
for the lane it really belongs to. A test with no lane, or with two, fails collection.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

LANES = ("unit", "data", "integration", "site", "build")
# Marks of the rounds before lanes existed: they imply a lane.
IMPLIED = {"deepspeed": "integration", "browser": "site"}
HEAVY_MODULES = frozenset({"deepspeed", "torch", "mkdocs", "material", "playwright", "transformers", "accelerate"})
HEAVY_PROGRAMS = frozenset({"g++", "c++", "gcc", "cc", "cc1plus", "ninja", "chromium", "chromium-browser", "mkdocs"})


# Lane of each test module, and of the functions in it that belong elsewhere. Measured, not guessed: every test
# was run once as a unit test under the guard below, and those that touched a snapshot, imported torch or
# started a compiler were moved to the lane that needs it. An explicit mark in the module (pytestmark, or on
# the function, or the older deepspeed/browser marks) takes precedence; a module absent here must mark itself.
MODULE_LANES: dict[str, tuple[str, dict[str, str]]] = {
    "test_check.py": ("data", {
        "test_check_imports_neither_deepspeed_nor_torch_nor_pydantic": "unit",
        "test_hook_file_is_declared": "unit",
        "test_values_are_exactly_what_deepspeeds_hjson_load_gives": "unit",
    }),
    "test_check_optim.py": ("unit", {}),
    "test_check_rules.py": ("unit", {
        "test_a_rule_never_reports_a_key_its_release_does_not_read": "data",
    }),
    "test_curated_tables.py": ("data", {}),
    "test_diff.py": ("unit", {}),
    "test_docs.py": ("unit", {
        "test_every_json_example_uses_only_keys_of_its_release": "data",
        "test_every_section_of_every_release_is_on_the_overview": "data",
        "test_field_pages_show_our_explanation_and_deepspeeds_docstring_apart": "data",
        "test_hf_auto_mapping_covers_exactly_the_trainer_paths_of_every_snapshot": "data",
        "test_pages_never_speak_of_the_seed": "data",
    }),
    "test_docs_examples.py": ("unit", {
        "test_example_output": "data",
    }),
    "test_docs_site.py": ("site", {}),
    "test_extract_fixtures.py": ("unit", {}),
    "test_forked.py": ("unit", {}),
    "test_guides.py": ("unit", {
        "test_commands_exit_as_the_page_says": "data",
        # Its fixture reads the newest committed snapshot: a unit test only while another test made it first.
        "test_field_links_name_real_fields_and_nothing_leaves_the_site": "data",
        "test_json_blocks_pass_dsfields_check": "data",
    }),
    "test_history.py": ("unit", {
        "test_amp_story": "data",
        "test_committed_history_is_the_same_with_without_and_with_a_stale_index": "data",
        "test_committed_index_is_current": "data",
        "test_gradient_clipping_default_became_one": "data",
        "test_lookup_history_prints_one_story": "data",
        "test_mics_shard_size_removed_and_rejected": "data",
    }),
    "test_hostile.py": ("unit", {
        "test_400_digit_integers_never_traceback": "data",
        "test_400_digit_numeric_strings_are_parsed_exactly": "data",
        "test_check_formats_off_a_terminal_never_pass_raw_controls_or_newlines": "data",
        "test_empty_versions_and_only_paths_are_refused": "data",
        "test_lookup_star_lists_the_candidates": "data",
        "test_resolve_refuses_what_deepspeed_or_the_hf_trainer_cannot_load": "data",
        "test_the_sgr_token_of_dsfields_own_colour_cannot_be_spelt_by_data": "data",
        "test_a_1_mb_config_checks_in_bounded_time": "data",
        "test_dumps_round_trip_of_a_valid_snapshot_still_validates": "data",
        "test_escape_sequences_in_keys_never_reach_the_terminal": "data",
        "test_huge_train_batch_size_finishes_at_once": "data",
        "test_integers_beyond_pythons_digit_limit_are_refused_as_deepspeed_refuses_them": "data",
        "test_lone_surrogate_key_is_checked_and_shown_escaped": "data",
        "test_queries_versions_and_file_names_are_escaped": "data",
        "test_schema_into_a_path_under_a_file": "data",
    }),
    "test_hf_trainer_args.py": ("unit", {
        "test_check_and_resolve_take_the_arguments_as_one_token": "data",
        "test_check_says_once_that_a_file_looks_like_an_hf_config": "data",
        "test_migrate_sets_the_refused_literals_to_auto": "data",
        "test_other_releases_flags_and_the_diff_between_two": "data",
    }),
    "test_hostile_fuzz.py": ("data", {
        "test_duplicates_after_a_quoteless_value_with_a_brace_are_found": "unit",
        "test_every_key_gets_its_own_line": "unit",
        "test_parse_agrees_with_deepspeeds_hjson_loader": "unit",
        "test_parse_for_hf_agrees_with_json_load": "unit",
    }),
    "test_index.py": ("unit", {
        "test_committed_index_matches_the_snapshots": "data",
        "test_committed_snapshot_has_current_format": "data",
    }),
    "test_launch.py": ("unit", {
        "test_an_op_built_by_one_release_is_shared_only_with_releases_whose_files_are_identical": "build",
        "test_the_wrapped_torch_load_builds_once_and_imports_the_shared_build_for_an_identical_release": "integration",
        "test_two_builders_of_one_op_at_once_compile_it_once": "integration",
        "test_a_ccache_on_path_is_not_put_before_dsfields_own_compiler_wrapper": "integration",
        # hf_plan evaluates the pair's programs from generated/hf/ (one source of truth with check/resolve --hf)
        "test_hf_plan_legacy_cpu_offload_keeps_the_trainers_optimizer": "data",
        "test_hf_plan_offload_optimizer_device_swaps_in_ds_cpu_adam": "data",
        "test_hf_plan_config_optimizer_is_built_by_deepspeed_with_the_trainers_scheduler": "data",
        "test_hf_plan_fills_auto_and_refuses_what_accelerate_refuses": "data",
    }),
    "test_launch_rules.py": ("data", {
        "test_a_malformed_launch_json_counts_as_absent": "unit",
        "test_rule_says_what_where_and_how_to_fix": "unit",
    }),
    "test_layers.py": ("unit", {}),
    "test_lookup.py": ("data", {
        "test_colour_only_on_a_tty_without_no_color": "unit",
        "test_default_text": "unit",
        "test_default_version_is_installed_if_snapshotted_else_newest": "unit",
        "test_fast_installed_version_probe_agrees_with_importlib_metadata": "unit",
        "test_history_in_json": "unit",
        "test_history_one_line_per_version_range": "unit",
        "test_lookup_imports_no_deepspeed_torch_pydantic_jinja2_nor_other_subcommands": "unit",
        "test_a_key_lookup_imports_neither_typing_nor_tomllib_nor_pathlib": "unit",
        "test_scientific": "unit",
        "test_snapshot_of_another_format_exits_2_in_one_line": "unit",
        "test_unknown_version_lists_available_and_exits_2": "unit",
    }),
    "test_migrate.py": ("unit", {
        "test_cli_writes_atomically_and_diffs": "data",
        "test_conversions_are_for_deprecations_that_convert": "data",
        "test_rejected_values_left_alone_exit_1": "data",
    }),
    "test_paths_index.py": ("data", {}),
    "test_prose.py": ("unit", {
        "test_catalog_entries_name_types_deepspeed_builds": "data",
        "test_every_field_key_is_a_path_some_release_has": "data",
        "test_every_leaf_field_of_the_newest_release_is_explained": "data",
        "test_summaries_are_one_short_sentence": "data",
        "test_every_type_of_the_newest_catalogues_is_explained": "data",
        "test_lookup_json_carries_the_explanation_in_the_asked_language": "data",
        "test_lookup_shows_ours_before_deepspeeds_docstring_in_both_languages": "data",
        "test_schema_in_chinese_puts_our_text_into_descriptions": "data",
        "test_unknown_language_is_one_line_and_exit_2": "data",
    }),
    "test_quickcxx.py": ("build", {
        "test_quick_flags_compile_at_o1_without_debug_information": "unit",
        "test_split_compile_keeps_what_the_header_shares_and_sets_apart_the_op_and_its_release": "unit",
        "test_the_release_paths_are_mapped_longest_first": "unit",
        "test_torch_preamble_is_what_comes_before_torchs_header": "unit",
    }),
    "test_resolve.py": ("data", {
        "test_parsed_state_witnesses_on_the_fixture": "unit",
    }),
    "test_schema.py": ("data", {}),
    "test_snapshot_command.py": ("unit", {}),
    "test_snapshot_format.py": ("unit", {
        "test_committed_snapshot_matches_schema_and_is_canonical": "data",
    }),
    "test_static_reads.py": ("unit", {}),
    "test_witnesses.py": ("unit", {
        "test_communication_data_type_choices_come_from_the_release": "data",
        "test_cross_section_probe_rejections_depend_on_the_rest_of_the_config": "data",
        "test_fp16_loss_scale_keys_are_not_ignored_in_old_releases": "data",
        "test_legacy_zero_optimization_true_is_no_error_on_0_19_8": "data",
        "test_lookup_resolves_a_concrete_group_name_to_its_pattern_path": "data",
        "test_passed_sections_never_advise_deleting_keys": "data",
        "test_sequence_and_data_parallel_size_are_read_by_0_19_8": "data",
        "test_string_booleans_follow_the_probes": "data",
        "test_the_fraction_probe_judges_integers_only": "data",
        "test_validator_rejections_from_probes_on_0_19_8": "data",
    }),
}


class LaneViolation(RuntimeError):
    """A unit test touched what only another lane may touch."""


_GENERATED = (str(Path(__file__).resolve().parent.parent / "generated") + os.sep, )
_active = False


def _program(args: tuple) -> str:
    executable = args[0] if args else None
    if executable is None and len(args) > 1 and isinstance(args[1], (list, tuple)) and args[1]:
        executable = args[1][0]
    try:
        return os.path.basename(os.fsdecode(executable)) if executable is not None else ""
    except TypeError:
        return ""


def _audit(event: str, args: tuple) -> None:
    if not _active:
        return
    if event == "open" and args and isinstance(args[0], (str, bytes)):
        path = os.path.abspath(os.fsdecode(args[0]))
        if path.startswith(_GENERATED):
            raise LaneViolation(f"unit test opened a committed snapshot: {path}")
    elif event in ("os.listdir", "os.scandir") and args and isinstance(args[0], (str, bytes)):
        path = os.path.abspath(os.fsdecode(args[0])) + os.sep
        if path.startswith(_GENERATED):
            raise LaneViolation(f"unit test listed the committed snapshots: {path}")
    elif event == "import" and args and isinstance(args[0], str):
        if args[0].partition(".")[0] in HEAVY_MODULES:
            raise LaneViolation(f"unit test imported {args[0]}")
    elif event in ("subprocess.Popen", "os.posix_spawn", "os.exec"):
        program = _program(args)
        if program in HEAVY_PROGRAMS:
            raise LaneViolation(f"unit test started {program}")


sys.addaudithook(_audit)


def marked_lanes(item: pytest.Item) -> list[str]:
    names = {mark.name for mark in item.iter_markers()}
    lanes = {name for name in names if name in LANES}
    lanes |= {IMPLIED[name] for name in names if name in IMPLIED}
    return sorted(lanes)


def lane_of(item: pytest.Item) -> list[str]:
    lanes = marked_lanes(item)
    if lanes:
        return lanes
    module_lane, exceptions = MODULE_LANES.get(item.path.name, (None, {}))
    function = getattr(item, "originalname", None) or item.name.partition("[")[0]
    lane = exceptions.get(function, module_lane)
    return [lane] if lane else []


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    problems = []
    for item in items:
        lanes = lane_of(item)
        if len(lanes) != 1:
            problems.append(f"{item.nodeid}: lanes {lanes or 'none'} (give it exactly one of {', '.join(LANES)})")
        for lane in lanes:
            item.add_marker(getattr(pytest.mark, lane))
    if problems:
        raise pytest.UsageError("tests without exactly one lane:\n  " + "\n  ".join(problems[:40]))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item):
    yield from _guarded(item)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item):
    yield from _guarded(item)


def _guarded(item: pytest.Item):
    global _active
    guarded = lane_of(item) == ["unit"] and not os.environ.get("DSFIELDS_LANE_GUARD_OFF")
    _active = guarded
    try:
        yield
    finally:
        _active = False
