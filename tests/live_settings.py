"""Settings for a real server process started by tests (see tests/browser/conftest.py).

The test settings, pointed at the test database that pytest-django created
(``COLLAB_TEST_DB_NAME``): a SQLite file in embedded mode, ``test_<name>`` on Postgres.
"""

from __future__ import annotations

import os

from tests.settings import *  # noqa: F403

DATABASES["default"]["NAME"] = os.environ["COLLAB_TEST_DB_NAME"]  # noqa: F405
# A browser test that watches an agent type (its cursor moving) turns live typing back on.
AGENTS_TYPING_SECONDS = float(os.environ.get("COLLAB_TEST_TYPING_SECONDS", "0"))
