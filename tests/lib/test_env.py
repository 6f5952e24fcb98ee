from __future__ import annotations

import pytest
from django.core.exceptions import ImproperlyConfigured

from collab.lib.env import env_bool, env_float, env_int, env_list, env_str


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for name in ("COLLAB_X", "COLLAB_X_FILE"):
        monkeypatch.delenv(name, raising=False)


@pytest.mark.parametrize("value", ["1", "true", "True", "YES", "on", " yes "])
def test_env_bool_reads_true_words(monkeypatch, value):
    monkeypatch.setenv("COLLAB_X", value)

    assert env_bool("COLLAB_X", False) is True


@pytest.mark.parametrize("value", ["0", "false", "FALSE", "no", "off", ""])
def test_env_bool_reads_false_words(monkeypatch, value):
    monkeypatch.setenv("COLLAB_X", value)

    assert env_bool("COLLAB_X", True) is False


@pytest.mark.parametrize("value", ["maybe", "2", "ture", "y"])
def test_env_bool_fails_fast_on_anything_else(monkeypatch, value):
    monkeypatch.setenv("COLLAB_X", value)

    with pytest.raises(ImproperlyConfigured, match=r"COLLAB_X.*not a boolean"):
        env_bool("COLLAB_X", False)


def test_unset_variables_give_their_defaults():
    assert env_bool("COLLAB_X", True) is True
    assert env_int("COLLAB_X", 7) == 7
    assert env_float("COLLAB_X", 0.5) == 0.5
    assert env_str("COLLAB_X", "fallback") == "fallback"
    assert env_str("COLLAB_X") is None
    assert env_list("COLLAB_X", ["a"]) == ["a"]


def test_an_empty_string_counts_as_unset_for_strings_and_numbers(monkeypatch):
    monkeypatch.setenv("COLLAB_X", "")

    assert env_str("COLLAB_X", "fallback") == "fallback"
    assert env_int("COLLAB_X", 7) == 7
    assert env_float("COLLAB_X", 0.5) == 0.5


def test_env_int_parses_integers(monkeypatch):
    monkeypatch.setenv("COLLAB_X", " 42 ")

    assert env_int("COLLAB_X", 7) == 42


@pytest.mark.parametrize("value", ["forty", "4.5", "1e3", "0x10"])
def test_env_int_fails_fast_on_a_non_integer(monkeypatch, value):
    monkeypatch.setenv("COLLAB_X", value)

    with pytest.raises(ImproperlyConfigured, match=r"COLLAB_X.*not an integer"):
        env_int("COLLAB_X", 7)


def test_env_int_fails_fast_below_its_minimum(monkeypatch):
    monkeypatch.setenv("COLLAB_X", "0")

    with pytest.raises(ImproperlyConfigured, match=r"COLLAB_X=0 must be at least 1"):
        env_int("COLLAB_X", 7, minimum=1)


def test_env_float_fails_fast_on_a_non_number(monkeypatch):
    monkeypatch.setenv("COLLAB_X", "warm")

    with pytest.raises(ImproperlyConfigured, match=r"COLLAB_X.*not a number"):
        env_float("COLLAB_X", 0.5)


def test_env_list_splits_on_commas_and_drops_blanks(monkeypatch):
    monkeypatch.setenv("COLLAB_X", " example.org, ,www.example.org ,")

    assert env_list("COLLAB_X", []) == ["example.org", "www.example.org"]


def test_a_file_variant_supplies_the_value_without_its_trailing_newline(monkeypatch, tmp_path):
    secret = tmp_path / "secret"
    secret.write_text("s3cret-from-a-file\n")
    monkeypatch.setenv("COLLAB_X_FILE", str(secret))

    assert env_str("COLLAB_X") == "s3cret-from-a-file"


def test_a_file_variant_wins_over_the_plain_variable(monkeypatch, tmp_path):
    secret = tmp_path / "flag"
    secret.write_text("true")
    monkeypatch.setenv("COLLAB_X", "false")
    monkeypatch.setenv("COLLAB_X_FILE", str(secret))

    assert env_bool("COLLAB_X", False) is True


def test_a_file_variant_is_parsed_like_the_plain_variable(monkeypatch, tmp_path):
    secret = tmp_path / "number"
    secret.write_text("many\n")
    monkeypatch.setenv("COLLAB_X_FILE", str(secret))

    with pytest.raises(ImproperlyConfigured, match="not an integer"):
        env_int("COLLAB_X", 7)


def test_an_unreadable_file_variant_fails_fast(monkeypatch, tmp_path):
    monkeypatch.setenv("COLLAB_X_FILE", str(tmp_path / "missing"))

    with pytest.raises(ImproperlyConfigured, match=r"COLLAB_X_FILE=.*cannot be read"):
        env_str("COLLAB_X")
