"""Test settings: the real settings plus speed-ups only."""

from __future__ import annotations

import os

from collab.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
ALLOWED_HOSTS = ["testserver", "localhost", "127.0.0.1"]

# WhiteNoise warns (an error under our warning filters) when STATIC_ROOT does not exist yet.
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # noqa: F405
WHITENOISE_USE_FINDERS = True

# Async tests reach the database from asgiref's worker thread; a persistent connection there
# would outlive the test run and keep Postgres from dropping the test database.
DATABASES["default"]["CONN_MAX_AGE"] = 0  # noqa: F405

# SQLite: a file, not memory, so that a server process started by browser tests shares it.
if DATABASES["default"]["ENGINE"] == "django.db.backends.sqlite3":  # noqa: F405
    DATABASES["default"]["TEST"] = {"NAME": str(DATA_DIR / "test.sqlite3")}  # noqa: F405

# Agents' direct edits apply in one step unless a test turns live typing on.
AGENTS_TYPING_SECONDS = 0.0

# Speed: memory retrieval by meaning (on by default, the shipped WordLlama model) costs a model
# load per process and a query per retrieval; tests that exercise it switch it on themselves.
MEMORY_EMBEDDING_PROVIDER = ""
# Workers started by tests load no local model at start (tests of the warm-up switch it on).
AGENTS_WARM_UP = False

# Model profiles come from the tests, never from the engineer's own API keys.
OPENAI_API_KEY_SET = ANTHROPIC_API_KEY_SET = False
OLLAMA_BASE_URL = ""

# pytest-xdist: each worker (``gw0``, ``gw1``, ...) has a database of its own (pytest-django
# suffixes the test database's name, the SQLite file's too) and, in production mode, Redis keys
# of its own, so two workers on one Redis never see each other's groups, relayed updates or
# jobs. Processes that tests start (tests/live_settings.py) inherit PYTEST_XDIST_WORKER and so
# share their worker's keys. See CONTRIBUTING.md, "Tests".
XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "")
if XDIST_WORKER and REDIS_URL:  # noqa: F405
    CHANNEL_LAYERS["default"]["CONFIG"]["prefix"] = f"asgi-{XDIST_WORKER}"  # noqa: F405
    DOCUMENT_RELAY_PREFIX = f"{DOCUMENT_RELAY_PREFIX}:{XDIST_WORKER}"  # noqa: F405
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        **CELERY_BROKER_TRANSPORT_OPTIONS,  # noqa: F405
        "global_keyprefix": f"{XDIST_WORKER}:",
    }
