"""Settings read from the environment, in a new process each: a bad value stops the process at
start-up instead of misbehaving later."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
VARIABLES = (
    "SECRET_KEY",
    "DEBUG",
    "DATABASE_URL",
    "REDIS_URL",
    "CHAT_PAGE_SIZE",
    "INVITATION_DEFAULT_DAYS",
    "SECURE_COOKIES",
    "BEHIND_TLS_PROXY",
    "AGENTS_TYPING_SECONDS",
    "DATABASE_PREPARE_THRESHOLD",
)


def _django_setup(tmp_path: Path, code: str = "", **env: str) -> subprocess.CompletedProcess[str]:
    """``django.setup()`` in a new process with only ``env`` set of the variables above, then
    ``code``."""
    environ = {
        key: value
        for key, value in os.environ.items()
        if key not in VARIABLES and not key.endswith("_FILE")
    }
    environ.update(DJANGO_SETTINGS_MODULE="collab.settings", DATA_DIR=str(tmp_path), **env)
    return subprocess.run(
        [sys.executable, "-c", f"import django; django.setup()\n{code}"],
        cwd=ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def test_settings_load_with_no_environment_at_all(tmp_path):
    result = _django_setup(tmp_path)

    assert result.returncode == 0, result.stderr
    assert (tmp_path / "secret_key").exists()


@pytest.mark.parametrize(
    ("env", "reason"),
    [
        ({"DATABASE_URL": "nonsense://somewhere/db"}, "DATABASE_URL cannot be parsed"),
        ({"SECRET_KEY": "too-short"}, "SECRET_KEY must be at least 32 characters"),
        ({"DEBUG": "perhaps"}, "DEBUG='perhaps' is not a boolean"),
        ({"INVITATION_DEFAULT_DAYS": "0"}, "INVITATION_DEFAULT_DAYS=0 must be at least 1"),
        ({"SECRET_KEY_FILE": "/nonexistent/secret"}, "SECRET_KEY_FILE=.* cannot be read"),
        ({"AGENTS_TYPING_SECONDS": "-1"}, "AGENTS_TYPING_SECONDS=-1.0 must be 0 to 30"),
        ({"AGENTS_TYPING_SECONDS": "soon"}, "AGENTS_TYPING_SECONDS='soon' is not a number"),
        (
            {"DATABASE_URL": "postgres://db/collab", "DATABASE_PREPARE_THRESHOLD": "-1"},
            "DATABASE_PREPARE_THRESHOLD=-1 must be at least 0",
        ),
    ],
)
def test_settings_fail_fast_on_a_bad_value(tmp_path, env, reason):
    result = _django_setup(tmp_path, **env)

    assert result.returncode != 0
    last_line = result.stderr.strip().splitlines()[-1]
    assert last_line.startswith("django.core.exceptions.ImproperlyConfigured:")
    assert re.search(reason, last_line)


def test_postgres_binds_on_the_server_and_a_pooler_can_turn_preparing_off(tmp_path):
    """Statements a connection runs again are prepared (tests/core/test_prepared_statements.py
    checks it on a real connection); ``DATABASE_PREPARE_THRESHOLD=0`` turns that off."""
    url = "postgres://collab@db:5432/collab"
    show = (
        "import json; from django.conf import settings\n"
        "print(json.dumps(settings.DATABASES['default']['OPTIONS']))"
    )

    default = _django_setup(tmp_path, show, DATABASE_URL=url)
    off = _django_setup(tmp_path, show, DATABASE_URL=url, DATABASE_PREPARE_THRESHOLD="0")

    assert json.loads(default.stdout) == {"server_side_binding": True, "prepare_threshold": 5}
    assert json.loads(off.stdout) == {"server_side_binding": True, "prepare_threshold": None}
