"""Collab settings, read from the environment (see README "Configuration").

With no environment at all this gives the embedded mode: a SQLite file under ``DATA_DIR``, an
in-process channel layer and an in-process Celery worker. Setting ``DATABASE_URL`` and
``REDIS_URL`` gives production mode with the same code.
"""

from __future__ import annotations

import secrets
from datetime import timedelta
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from collab.lib.addresses import parse_networks
from collab.lib.env import env_bool, env_float, env_int, env_list, env_str

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(env_str("DATA_DIR", str(BASE_DIR / "data")) or "data")

DEBUG = env_bool("DEBUG", False)


def _secret_key() -> str:
    configured = env_str("SECRET_KEY")
    if configured:
        if len(configured) < 32:
            raise ImproperlyConfigured("SECRET_KEY must be at least 32 characters long.")
        return configured
    # Embedded mode: make one on first start and keep it, so sessions survive restarts.
    key_file = DATA_DIR / "secret_key"
    if key_file.exists():
        return key_file.read_text().strip()
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    key = secrets.token_urlsafe(50)
    key_file.write_text(key)
    key_file.chmod(0o600)
    return key


SECRET_KEY = _secret_key()
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost", "[::1]"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])
SITE_URL = env_str("SITE_URL", "http://127.0.0.1:8000") or ""

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "django_htmx",
    "template_partials",
    "axes",  # login and API-token throttling (collab/accounts/throttle.py)
    "csp",
    "ninja",  # serves the API docs page's assets locally (no CDN)
    "collab.core",
    "collab.accounts",
    "collab.workspaces",
    "collab.tasks",
    "collab.realtime",
    "collab.audit",
    "agents.review",
    "agents.memory",
    "agents",
    "agents.evaluation",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "collab.accounts.middleware.TimeZoneMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "collab.audit.context.AuditOriginMiddleware",
    "csp.middleware.CSPMiddleware",
    "axes.middleware.AxesMiddleware",  # last, as django-axes asks
]

ROOT_URLCONF = "collab.urls"
ASGI_APPLICATION = "collab.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            # {% partialdef %} everywhere, as Django 6 has built in (see docs/adr/0001).
            "builtins": ["template_partials.templatetags.partials"],
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "collab.accounts.middleware.time_zone_context",
            ],
        },
    },
]

# --- Database --------------------------------------------------------------------------------
DATABASE_URL = env_str("DATABASE_URL")
if DATABASE_URL:
    try:
        DATABASES = {"default": dj_database_url.parse(DATABASE_URL, conn_max_age=60)}
    except ValueError as exc:
        raise ImproperlyConfigured(f"DATABASE_URL cannot be parsed: {exc}") from exc
    if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
        # Server-side parameters let psycopg prepare a statement a connection has run a few
        # times, so PostgreSQL parses and plans it once per connection, not on every run (the
        # turn's claim alone spent 1.2 ms planning a seven-table join each time). A pooler in
        # transaction mode that cannot keep prepared statements needs it off.
        _prepare = env_int("DATABASE_PREPARE_THRESHOLD", 5, minimum=0)
        DATABASES["default"].setdefault("OPTIONS", {}).update(
            server_side_binding=True, prepare_threshold=_prepare if _prepare else None
        )
else:
    DATA_DIR.mkdir(parents=True, exist_ok=True)
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": str(DATA_DIR / "collab.sqlite3"),
            # WAL lets the web process and the worker read while the other writes.
            "OPTIONS": {
                "transaction_mode": "IMMEDIATE",
                "timeout": 20,
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
        }
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# --- Redis, channels and Celery --------------------------------------------------------------
REDIS_URL = env_str("REDIS_URL")
if REDIS_URL and not REDIS_URL.startswith(("redis://", "rediss://", "unix://")):
    raise ImproperlyConfigured("REDIS_URL must start with redis://, rediss:// or unix://.")
EMBEDDED = REDIS_URL is None

if REDIS_URL:
    CHANNEL_LAYERS = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {
                # redis-py >= 6 times reads out after 5 s by default, exactly as long as the
                # blocking pop with which channels-redis waits for a socket's next event: an
                # idle socket's consumer would then crash with "Timeout reading from Redis".
                "hosts": [{"address": REDIS_URL, "socket_timeout": 30}],
                "capacity": 1000,
                "expiry": 30,
            },
        }
    }
    CELERY_BROKER_URL = REDIS_URL
    # A job whose worker died is delivered again after this many seconds (acks_late).
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "visibility_timeout": env_int("CELERY_VISIBILITY_TIMEOUT", 3600, minimum=1),
        # Look for such jobs on every 10 s tick, not kombu's default of every tenth tick
        # (100 s), so redelivery follows the visibility timeout closely.
        "unacked_restore_throttle": 1,
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    # The embedded worker runs as a thread of the web process (see `manage.py serve`).
    CELERY_BROKER_URL = "memory://"

CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
# A worker process (`celery -A collab worker`, no --pool) runs several jobs at once in threads:
# an agent turn mostly waits on the database, Redis and the model, and each thread has its own
# database connection, so row locks keep working between them (ARCHITECTURE.md, "Cost of a turn").
CELERY_WORKER_POOL = env_str("CELERY_WORKER_POOL", "threads")
CELERY_WORKER_CONCURRENCY = env_int("CELERY_WORKER_CONCURRENCY", 8, minimum=1)
# Jobs reuse database connections as requests do (CONN_MAX_AGE, collab/celery.py); Celery's
# Django fixup still closes them every this many jobs.
CELERY_DB_REUSE_MAX = env_int("CELERY_DB_REUSE_MAX", 1000, minimum=1)
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True

# --- Auth ------------------------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
AUTHENTICATION_BACKENDS = [
    # Refuses a locked-out address or account before any password is checked.
    "collab.accounts.backends.ThrottledBackend",
    "django.contrib.auth.backends.ModelBackend",
]
# Throttling (django-axes, collab/accounts/throttle.py): after AXES_FAILURE_LIMIT failed logins
# from one address, or for one username, that address or username is refused (429) for
# LOGIN_LOCKOUT_MINUTES; failed API-token checks and taken-username sign-ups count per address.
AXES_FAILURE_LIMIT = env_int("LOGIN_FAILURE_LIMIT", 10, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=env_int("LOGIN_LOCKOUT_MINUTES", 15, minimum=1))
AXES_LOCKOUT_PARAMETERS = "collab.accounts.throttle.lockout_parameters"
AXES_CLIENT_IP_CALLABLE = "collab.accounts.throttle.client_ip"
AXES_USERNAME_CALLABLE = "collab.accounts.throttle.client_username"
AXES_LOCKOUT_CALLABLE = "collab.accounts.throttle.lockout_response"
AXES_RESET_ON_SUCCESS = True
AXES_VERBOSE = False
# Password reset mails go to the console (the web process's output) unless SMTP is configured.
EMAIL_HOST = env_str("EMAIL_HOST")
EMAIL_BACKEND = (
    "django.core.mail.backends.smtp.EmailBackend"
    if EMAIL_HOST
    else "django.core.mail.backends.console.EmailBackend"
)
EMAIL_PORT = env_int("EMAIL_PORT", 587, minimum=1)
EMAIL_HOST_USER = env_str("EMAIL_HOST_USER") or ""
EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD") or ""
EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", True)
DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL", "collab@localhost") or "collab@localhost"
LOGIN_URL = "accounts:login"
LOGIN_REDIRECT_URL = "workspaces:list"
LOGOUT_REDIRECT_URL = "accounts:login"

SESSION_COOKIE_SECURE = env_bool("SECURE_COOKIES", False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
SECURE_PROXY_SSL_HEADER = (
    ("HTTP_X_FORWARDED_PROTO", "https") if env_bool("BEHIND_TLS_PROXY", False) else None
)
# The proxies whose X-Forwarded-For is believed (addresses or networks, comma-separated): the
# audit log and the throttling of guesses use the client address they report. Unset, the
# socket's peer counts and the header is ignored (collab/lib/addresses.py).
TRUSTED_PROXIES = env_list("TRUSTED_PROXIES", [])
parse_networks(TRUSTED_PROXIES)  # a typo stops the process at start-up
# HTTPS only once cookies are: browsers then refuse plain HTTP to this host for a year.
SECURE_HSTS_SECONDS = env_int("HSTS_SECONDS", 31_536_000, minimum=0) if SESSION_COOKIE_SECURE else 0
# Images in markdown from other sites: shown as links unless the administrator allows them.
MARKDOWN_REMOTE_IMAGES = env_bool("MARKDOWN_REMOTE_IMAGES", False)
# Content-Security-Policy (django-csp): scripts only from this site (no inline script, no
# eval: htmx's hx-on is not used); inline styles stay allowed because CodeMirror and
# y-codemirror.next write style attributes; images from this site only, so markdown cannot
# make viewers' browsers fetch other addresses (collab/lib/markdown.py turns remote images
# into links).
CONTENT_SECURITY_POLICY = {
    "DIRECTIVES": {
        "default-src": ["'self'"],
        "script-src": ["'self'"],
        "style-src": ["'self'", "'unsafe-inline'"],
        "img-src": ["'self'", "data:", *(["https:"] if MARKDOWN_REMOTE_IMAGES else [])],
        "connect-src": ["'self'"],
        "font-src": ["'self'"],
        "object-src": ["'none'"],
        "base-uri": ["'self'"],
        "form-action": ["'self'"],
        "frame-ancestors": ["'none'"],
    }
}

# --- Internationalisation and static files ---------------------------------------------------
LANGUAGE_CODE = "en-us"
TIME_ZONE = env_str("TIME_ZONE", "UTC") or "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env_str("STATIC_ROOT", str(BASE_DIR / "staticfiles")) or "staticfiles")
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}

# --- Collab limits ---------------------------------------------------------------------------
CHAT_MESSAGE_MAX_CHARS = 20_000
CHAT_PAGE_SIZE = env_int("CHAT_PAGE_SIZE", 50, minimum=1)
WEBSOCKET_MAX_FRAME_BYTES = 64 * 1024
# Live documents (see docs/protocol.md "Document"): a binary y-websocket frame over this size
# closes the socket with 4413 before it is parsed.
DOCUMENT_MAX_FRAME_BYTES = env_int("DOCUMENT_MAX_FRAME_BYTES", 1024 * 1024, minimum=1024)
# The largest WebSocket message the server sends and receives: Daphne's
# --websocket-max-message-size (1 MiB by default). Larger document syncs are split.
WEBSOCKET_MAX_MESSAGE_BYTES = env_int("WEBSOCKET_MAX_MESSAGE_BYTES", 1024 * 1024, minimum=65536)
# The largest a document's Yjs state may grow (an edit that would pass it is refused), so that
# a new client's sync always fits in one message.
DOCUMENT_MAX_BYTES = env_int("DOCUMENT_MAX_BYTES", 1_000_000, minimum=1024)
if DOCUMENT_MAX_BYTES > WEBSOCKET_MAX_MESSAGE_BYTES - 16 * 1024:
    raise ImproperlyConfigured(
        "DOCUMENT_MAX_BYTES must stay at least 16 KiB under WEBSOCKET_MAX_MESSAGE_BYTES "
        f"({WEBSOCKET_MAX_MESSAGE_BYTES}), or a new client could not be sent the document."
    )
# Updates are written to the database in batches: once no new update has come for
# DOCUMENT_FLUSH_DELAY (a debounce), or DOCUMENT_FLUSH_MAX_WAIT after the first pending one
# when updates keep coming. A longer max wait saves CPU under load (fewer transactions) but its
# larger batches raised the p99 on a busy machine: bench/README.md, issue 31.
DOCUMENT_FLUSH_DELAY = env_float("DOCUMENT_FLUSH_DELAY", 0.05)
DOCUMENT_FLUSH_MAX_WAIT = max(DOCUMENT_FLUSH_DELAY, env_float("DOCUMENT_FLUSH_MAX_WAIT", 0.05))
# A socket is acknowledged (sent the durable state vector) at most once per this many seconds:
# a flush within it defers the socket's acknowledgement to the interval's end, carrying the
# state durable then. Each acknowledgement costs a frame out and the client's answer in, per
# keystroke for a fast typist (issue 31). 0 acknowledges after every flush.
DOCUMENT_ACK_INTERVAL = max(0.0, env_float("DOCUMENT_ACK_INTERVAL", 0.25))
# A room without sockets stays loaded this long, then flushes and unloads.
DOCUMENT_ROOM_IDLE_SECONDS = env_float("DOCUMENT_ROOM_IDLE_SECONDS", 30.0)
# A socket that has been sent nothing for this long gets a sync step 1 (y-websocket clients
# reconnect after 30 s of silence); rooms also re-read the update log this often.
DOCUMENT_KEEPALIVE_SECONDS = env_float("DOCUMENT_KEEPALIVE_SECONDS", 15.0)
DOCUMENT_CATCHUP_SECONDS = env_float("DOCUMENT_CATCHUP_SECONDS", 10.0)
# Sockets re-read the member's role at most this often (role changes apply to open sockets).
DOCUMENT_ROLE_REFRESH_SECONDS = env_float("DOCUMENT_ROLE_REFRESH_SECONDS", 5.0)
# Fold the update log into the snapshot once this many rows follow it.
DOCUMENT_COMPACT_AFTER = env_int("DOCUMENT_COMPACT_AFTER", 500, minimum=1)
# What people type becomes a version once typing pauses this long (seconds)...
DOCUMENT_VERSION_PAUSE_SECONDS = env_float("DOCUMENT_VERSION_PAUSE_SECONDS", 10.0)
# ...or after this many seconds of typing without such a pause.
DOCUMENT_VERSION_INTERVAL = env_float("DOCUMENT_VERSION_INTERVAL", 60.0)
# Redis pub/sub channels are shared by every database number: prefix them per deployment.
DOCUMENT_RELAY_PREFIX = (
    env_str("DOCUMENT_RELAY_PREFIX", "collab:" + (REDIS_URL or "").rsplit("/", 1)[-1]) or "collab"
)
INVITATION_DEFAULT_DAYS = env_int("INVITATION_DEFAULT_DAYS", 7, minimum=1)
# Memory reflection runs once a task's chat has been quiet this long (and when a task is done).
MEMORY_REFLECTION_QUIET_SECONDS = env_int("MEMORY_REFLECTION_QUIET_SECONDS", 120, minimum=1)
# Embeddings for memory retrieval (agents/memory/embeddings.py, docs/adr/0006): "wordllama"
# (the default: a static embedding shipped in the wordllama wheel, offline), "openai" (any
# OpenAI-compatible endpoint, the 'openai' extra), "fake" (tests, benchmarks) or "off"
# (full-text retrieval only).
MEMORY_EMBEDDING_PROVIDER = env_str("MEMORY_EMBEDDING_PROVIDER", "wordllama") or "wordllama"
if MEMORY_EMBEDDING_PROVIDER not in ("off", "wordllama", "openai", "fake"):
    raise ImproperlyConfigured(
        "MEMORY_EMBEDDING_PROVIDER must be 'wordllama', 'openai', 'fake' or 'off'."
    )
if MEMORY_EMBEDDING_PROVIDER == "off":
    MEMORY_EMBEDDING_PROVIDER = ""
MEMORY_EMBEDDING_MODEL = env_str("MEMORY_EMBEDDING_MODEL", "") or ""
MEMORY_EMBEDDING_BASE_URL = env_str("MEMORY_EMBEDDING_BASE_URL", "") or ""
MEMORY_EMBEDDING_API_KEY_ENV = env_str("MEMORY_EMBEDDING_API_KEY_ENV", "") or ""
MEMORY_EMBEDDING_DIMENSIONS = env_int("MEMORY_EMBEDDING_DIMENSIONS", 0, minimum=0)
# Share of relevance that comes from meaning (cosine similarity) rather than shared words.
MEMORY_EMBEDDING_WEIGHT = env_float("MEMORY_EMBEDDING_WEIGHT", 0.5)
if not 0 <= MEMORY_EMBEDDING_WEIGHT <= 1:
    raise ImproperlyConfigured("MEMORY_EMBEDDING_WEIGHT must be between 0 and 1.")
# An item found by meaning alone needs at least this cosine similarity to the query.
# (A static word embedding gives lower cosines than a sentence model: its own default.)
MEMORY_EMBEDDING_MIN_SIMILARITY = env_float(
    "MEMORY_EMBEDDING_MIN_SIMILARITY", 0.15 if MEMORY_EMBEDDING_PROVIDER == "wordllama" else 0.3
)
# How many of the people's newest items are compared by meaning at each turn.
MEMORY_EMBEDDING_CANDIDATES = env_int("MEMORY_EMBEDDING_CANDIDATES", 500, minimum=1)

# --- Agents (see agents/llm/ and agents/engine/) ----------------------------------------------
# Name of a ModelProfile used by agents that have none; unset: the embedded local model.
AGENTS_DEFAULT_PROFILE = env_str("AGENTS_DEFAULT_PROFILE")
# A running turn renews this lease while it works; a dead worker's turn is taken over after it.
AGENTS_TURN_LEASE_SECONDS = env_int("AGENTS_TURN_LEASE_SECONDS", 15, minimum=1)
AGENTS_TURN_TIME_BUDGET_SECONDS = env_int("AGENTS_TURN_TIME_BUDGET_SECONDS", 120, minimum=1)
# A starting worker loads the local models its turns use (the embedded model, WordLlama) in the
# background, so that nobody's first turn waits for them (agents/engine/warmup.py).
AGENTS_WARM_UP = env_bool("AGENTS_WARM_UP", True)
# Agents with the "document idle" trigger act this long after people's last edit.
AGENTS_IDLE_DOCUMENT_SECONDS = env_int("AGENTS_IDLE_DOCUMENT_SECONDS", 30, minimum=1)
# A direct edit by an agent reaches open editors as live typing: its minimal diff in small steps
# (a few words each), spread over at most this many seconds; 0 applies it in one step.
AGENTS_TYPING_SECONDS = env_float("AGENTS_TYPING_SECONDS", 2.0)
if not 0 <= AGENTS_TYPING_SECONDS <= 30:
    raise ImproperlyConfigured(f"AGENTS_TYPING_SECONDS={AGENTS_TYPING_SECONDS} must be 0 to 30.")
# Models set up from the environment at start-up (agents/profiles.py): each creates or refreshes
# a model profile, and the first becomes the site's default when none is set. The keys stay in
# the environment (or <NAME>_FILE); profiles name the variable.
OPENAI_API_KEY_SET = bool(env_str("OPENAI_API_KEY"))
OPENAI_BASE_URL = env_str("OPENAI_BASE_URL", "") or ""
OPENAI_MODEL = env_str("OPENAI_MODEL", "gpt-4.1-mini") or ""
ANTHROPIC_API_KEY_SET = bool(env_str("ANTHROPIC_API_KEY"))
ANTHROPIC_MODEL = env_str("ANTHROPIC_MODEL", "claude-sonnet-4-5") or ""
OLLAMA_BASE_URL = env_str("OLLAMA_BASE_URL", "") or ""
OLLAMA_MODEL = env_str("OLLAMA_MODEL", "llama3.2") or ""
for _name, _url in (("OPENAI_BASE_URL", OPENAI_BASE_URL), ("OLLAMA_BASE_URL", OLLAMA_BASE_URL)):
    if _url and not _url.startswith(("http://", "https://")):
        raise ImproperlyConfigured(f"{_name}={_url!r} must start with http:// or https://.")
# Where a model's base URL may point besides the public internet (agents/llm/endpoints.py):
# "loopback" (a local Ollama or llama.cpp server, the default), "private" (10/8, 172.16/12,
# 192.168/16, fc00::/7: a model server on the local network or another container), both, or
# "none". Link-local and cloud metadata addresses, and the database's and Redis' ports on
# loopback, are refused whatever it says; the address connected to is checked on each connection.
MODEL_BASE_URL_ALLOW = tuple(env_list("MODEL_BASE_URL_ALLOW", ["loopback"]))
if not set(MODEL_BASE_URL_ALLOW) <= {"loopback", "private", "none"}:
    raise ImproperlyConfigured(
        f"MODEL_BASE_URL_ALLOW={','.join(MODEL_BASE_URL_ALLOW)!r}: use loopback, private or none."
    )
# Fault injection for the worker-kill test only: a pause before each action applied on its own.
AGENTS_FAULT_ACTION_DELAY_MS = env_int("AGENTS_FAULT_ACTION_DELAY_MS", 0, minimum=0)
# Chains of agents addressing agents (agents/chains/guards.py, issue 30): at most
# AGENTS_CHAIN_HOP_BUDGET hops since a person last wrote (0: the number of agents on the task
# plus one), and at most AGENTS_CHAIN_AGENT_SENDS messages addressing agents by one agent within
# AGENTS_CHAIN_RATE_SECONDS.
AGENTS_CHAIN_HOP_BUDGET = env_int("AGENTS_CHAIN_HOP_BUDGET", 0, minimum=0)
AGENTS_CHAIN_AGENT_SENDS = env_int("AGENTS_CHAIN_AGENT_SENDS", 3, minimum=1)
AGENTS_CHAIN_RATE_SECONDS = env_int("AGENTS_CHAIN_RATE_SECONDS", 60, minimum=1)
# The sweep (agents/services/sweep.py), every AGENTS_SWEEP_SECONDS: Celery beat in production
# (`celery -A collab worker --beat`, or one `celery -A collab beat`), the embedded worker's own
# timer otherwise. It re-sends queued turns older than AGENTS_STALE_QUEUED_SECONDS (their job
# may never have reached the broker), running turns whose lease ran out (their worker died),
# and expires questions whose time is up; timeouts longer than AGENTS_COUNTDOWN_MAX_SECONDS get
# no countdown at all (a countdown past the broker's visibility timeout is redelivered).
AGENTS_SWEEP_SECONDS = env_int("AGENTS_SWEEP_SECONDS", 15, minimum=1)
AGENTS_STALE_QUEUED_SECONDS = env_int("AGENTS_STALE_QUEUED_SECONDS", 60, minimum=1)
AGENTS_COUNTDOWN_MAX_SECONDS = env_int("AGENTS_COUNTDOWN_MAX_SECONDS", 900, minimum=0)
CELERY_BEAT_SCHEDULE = {
    "agents-sweep": {"task": "agents.jobs.sweep_job", "schedule": float(AGENTS_SWEEP_SECONDS)},
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    # A refused request (403) is one line (user, path, reason), not a traceback.
    "filters": {"one_line_refusals": {"()": "collab.core.log_filters.OneLineRefusals"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "INFO") or "INFO"},
    "loggers": {
        "daphne": {"level": "WARNING"},
        "axes": {"level": "WARNING"},
        # The MCP SDK logs every stateless request's session start and end at INFO.
        "mcp": {"level": "WARNING"},
        # The A2A SDK logs the whole agent card it fetched, at INFO, on every A2A turn.
        "a2a": {"level": "WARNING"},
        "django.request": {"filters": ["one_line_refusals"]},
    },
}
