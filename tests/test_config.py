"""Settings: environment parsing, validation, and that secrets stay out of repr."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from target_core.config import DEFAULT_WORKSPACE, SETTINGS, load_settings
from target_core.errors import ConfigError


def test_defaults() -> None:
    settings = load_settings(environ={})
    assert settings.workspace == DEFAULT_WORKSPACE
    assert settings.datasets_path == ()
    assert settings.chroma_host is None and settings.chroma_port == 8000
    assert settings.hub_timeout == 10.0


def test_environment_and_explicit_workspace(tmp_path: Path) -> None:
    env = {"TARGET_WORKSPACE": str(tmp_path / "a"),
           "TARGET_DATASETS": os.pathsep.join([str(tmp_path / "x"), "", str(tmp_path / "y")]),
           "TARGET_CHROMA_HOST": "127.0.0.1", "TARGET_CHROMA_PORT": "9001"}
    settings = load_settings(environ=env)
    assert settings.workspace == tmp_path / "a"
    assert settings.datasets_path == (tmp_path / "x", tmp_path / "y")
    assert settings.chroma_port == 9001
    assert load_settings(tmp_path / "b", environ=env).workspace == tmp_path / "b"


@pytest.mark.parametrize(("name", "value"), [("TARGET_CHROMA_PORT", "eighty"),
                                             ("TARGET_HUB_TIMEOUT", "-1")])
def test_invalid_numbers_name_the_variable(name: str, value: str) -> None:
    with pytest.raises(ConfigError, match=name):
        load_settings(environ={name: value})


def test_api_key_never_in_repr() -> None:
    settings = load_settings(environ={"OPENAI_API_KEY": "sk-planted-secret"})
    assert settings.openai_api_key == "sk-planted-secret"
    assert "sk-planted-secret" not in repr(settings)
    assert "sk-planted-secret" not in str(settings)


def test_every_setting_has_help_and_distinct_env() -> None:
    assert len({s.env for s in SETTINGS}) == len(SETTINGS)
    assert all(s.help.endswith(".") for s in SETTINGS)


def test_sql_limits_for_scoring(tmp_path) -> None:
    """BIRD's evaluation allows 30 s per query; results are compared whole up to the cap."""
    default = load_settings(tmp_path, environ={})
    assert (default.sql_timeout, default.sql_row_cap) == (30.0, 1_000_000)
    given = load_settings(tmp_path, environ={"TARGET_SQL_TIMEOUT": "2.5",
                                             "TARGET_SQL_ROW_CAP": "500"})
    assert (given.sql_timeout, given.sql_row_cap) == (2.5, 500)
