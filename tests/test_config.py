"""The settings: one validated, read-only object built from the defaults and the user's config.json."""

from __future__ import annotations

import copy
import json
import pickle

import pytest
from click.testing import CliRunner

from miner import config
from miner.cli.main import main


def test_the_defaults_are_valid_and_read_only():
    settings = config.validated({})
    assert settings == config.DEFAULTS and json.loads(json.dumps(settings)) == config.DEFAULTS
    with pytest.raises(TypeError, match="read-only"):
        settings["budget_share"] = 0.5
    with pytest.raises(TypeError, match="read-only"):
        settings["weights"]["type"] = 1.0  # nested objects too
    with pytest.raises(TypeError, match="read-only"):
        settings.update(archive=False)
    assert copy.deepcopy(settings) is settings and pickle.loads(pickle.dumps(settings)) == settings
    assert dict(settings, archive=False)["archive"] is False and settings["archive"] is True  # a plain copy


def test_an_object_merges_key_by_key_and_everything_else_replaces():
    settings = config.validated({"weights": {"type": 0.3}, "startup_latest": 60.0, "spacy_model": None})
    assert settings["weights"] == {**config.DEFAULTS["weights"], "type": 0.3}
    assert settings["startup_latest"] == 60 and isinstance(settings["startup_latest"], int)
    assert settings["spacy_model"] is None  # null: the blank pipeline
    again = config.changed(settings, weights={"recency": 0.5}, archive=False)
    assert again["weights"] == {**config.DEFAULTS["weights"], "type": 0.3, "recency": 0.5} and not again["archive"]


@pytest.mark.parametrize("user, message", [
    ({"budget_shar": 0.05}, "unknown setting 'budget_shar' (did you mean 'budget_share'?)"),
    ({"zzz": 1}, "unknown setting 'zzz' (the settings are listed in the README)"),
    ({"weights": {"typo": 1}}, "setting 'weights' has no key 'typo' (known: recency, relevance, type)"),
    ({"weights": {"type": "high"}}, "setting 'weights.type' must be a number, not \"high\""),
    ({"weights": 3}, "setting 'weights' must be a JSON object, not 3"),
    ({"archive": "yes"}, "setting 'archive' must be true or false, not \"yes\""),
    ({"archive": 1}, "setting 'archive' must be true or false, not 1"),
    ({"startup_latest": 2.5}, "setting 'startup_latest' must be a whole number, not 2.5"),
    ({"budget_share": True}, "setting 'budget_share' must be a number, not true"),
    ({"budget_share": -0.1}, "setting 'budget_share' must not be negative (-0.1)"),
    ({"spacy_model": 3}, "setting 'spacy_model' must be a string, not 3"),
    ({"dedup": {"threshold": "x"}}, "setting 'dedup.threshold' must be a number"),
    ({"budget_share": float("nan")}, "setting 'budget_share' must be a number from 0 to 1e+12, not NaN"),
    ({"budget_share": float("inf")}, "setting 'budget_share' must be a number from 0 to 1e+12, not Infinity"),
    ({"context_window_tokens": 1e308}, "setting 'context_window_tokens' must be a number from 0 to 1e+12, not 1e+308"),
    ({"max_candidates": 10**400}, "setting 'max_candidates' must be a number from 0 to 1e+12, not a number of 401 "
                                  "digits"),
    ({"spacy_model": 1e308}, "setting 'spacy_model' must be a string, not 1e+308"),
    ({"half_life_days": 0}, "setting 'half_life_days' must be at least 0.001, not 0 (it is a half-life)"),
    ({"category_half_life_scale": {"fact": 0}}, "setting 'category_half_life_scale.fact' must be at least 0.001"),
    # each above 0, but their product underflowed to 0 and `miner gc` divided by it
    ({"half_life_days": 1e-200}, "setting 'half_life_days' must be at least 0.001, not 1e-200"),
    ({"category_half_life_scale": {"fact": 1e-200}}, "setting 'category_half_life_scale.fact' must be at least"),
    # Claude Code cuts additionalContext beyond 10,000 characters
    ({"prompt_block_chars": 40_000}, "setting 'prompt_block_chars' must be at most 9,999, not 40000 (Claude Code"),
    # a share of similarity, and an import path: a threshold of 7 merged nothing, and any text was taken
    ({"dedup": {"threshold": 7}}, "setting 'dedup.threshold' must be from 0 to 1, not 7 (it is a share)"),
    ({"dedup": {"embedder": "os.getcwd()"}}, "setting 'dedup.embedder' must be 'module:attribute' (what to import)"),
    # Values a block cannot be built with (a division by zero, an overflow, no room) are refused, not crashed on.
    ({"startup_max_candidates": 0}, "setting 'startup_max_candidates' must be 1 or more, not 0"),
    ({"chars_per_token": 0}, "setting 'chars_per_token' must be 1 or more, not 0"),
    ({"density_exponent": 400}, "setting 'density_exponent' must be from 0 to 10, not 400 (it is an exponent)"),
    ({"void_share": 1.5}, "setting 'void_share' must be from 0 to 1, not 1.5 (it is a share)"),
    ({"restore_user_share": 2}, "setting 'restore_user_share' must be from 0 to 1, not 2"),
])
def test_a_bad_setting_is_one_line_that_names_it(tmp_path, user, message):
    path = tmp_path / "config.json"
    path.write_text(json.dumps(user))
    with pytest.raises(config.ConfigError) as caught:
        config.load(path)
    text = str(caught.value)
    assert "\n" not in text and text.startswith(f"{path}: ") and message in text
    assert text.endswith("fix it or remove it")


def test_a_setting_an_earlier_version_read_is_ignored(tmp_path):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({"startup_shares": {"todo": 0.5}, "session_bonus": 2, "budget_share": 0.01}))
    settings = config.load(path)
    assert "startup_shares" not in settings and "session_bonus" not in settings and settings["budget_share"] == 0.01
    assert config.removed_keys(path) == ["session_bonus", "startup_shares"]


@pytest.mark.parametrize("key,value", [("startup_code_like", 0.9), ("startup_code_ratio", 0.5),
                                       ("startup_role_weights", {"user": 1.2}), ("startup_half_life_scale", 2.0),
                                       ("startup_specific_bonus", 0.1)])
def test_settings_of_the_versions_before_are_ignored_not_refused(tmp_path, key, value):
    path = tmp_path / "config.json"
    path.write_text(json.dumps({key: value}))
    assert key not in config.load(path) and config.removed_keys(path) == [key]


def test_a_command_refuses_a_bad_setting_in_one_line(isolated_home):
    folder = isolated_home / ".config" / "miner"
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps({"prompt_block_char": 0}))
    result = CliRunner().invoke(main, ["recall"])
    assert result.exit_code == 1
    assert result.output.strip().splitlines() == [
        f"Error: {folder / 'config.json'}: unknown setting 'prompt_block_char' (did you mean 'prompt_block_chars'?); "
        "fix it or remove it"]


def test_a_folder_where_the_settings_file_goes_is_one_line(tmp_path):
    folder = tmp_path / "config.json"
    folder.mkdir()
    with pytest.raises(config.ConfigError, match=f"^{folder} is not a file; remove it, or put the settings file"):
        config.load(folder)
