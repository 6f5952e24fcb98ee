"""Loading the local models when a worker starts, so that no person's first turn waits for it.

A Celery worker (``manage.py worker``, or the one inside ``manage.py serve`` in embedded mode)
sends ``worker_init`` (its pool is then threads or solo) or, in each forked child of a prefork
pool, ``worker_process_init``. On either, a daemon thread loads what this site's turns use:

* the embedded model (when it is the site's default or an agent's model): its hash is checked,
  llama.cpp loads it, its grammar is compiled, and the constant head of its prompt (the system
  message) is evaluated once, so llama.cpp's prefix cache holds it for the first turn;
* the shipped WordLlama embedding, when memory retrieval by meaning uses it
  (``MEMORY_EMBEDDING_PROVIDER=wordllama``, the default): about two seconds to load;
* the clarification policies' parsers (dates, places, money), which every turn reads.

The worker consumes jobs meanwhile; a turn that arrives first waits on the same locks the
loading holds, then finds the model loaded. ``AGENTS_WARM_UP=false`` switches this off (the
tests do, and those that measure it switch it on).
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import date
from typing import Any

from celery.signals import worker_init, worker_process_init
from django.conf import settings
from django.db import connection

from agents import profiles
from agents.llm import embedded
from agents.memory import embeddings as memory_embeddings
from agents.memory import local_embeddings
from agents.models import Agent, Provider
from agents.policies import parse_dates, parse_money, places

log = logging.getLogger(__name__)

_started = threading.Event()


def embedded_model_in_use() -> bool:
    """Whether any turn of this site may run on the embedded model."""
    if profiles.resolve_profile(None).is_embedded:
        return True
    return Agent.objects.filter(model_profile__provider=Provider.EMBEDDED).exists()


def wordllama_in_use() -> bool:
    site = memory_embeddings.profile()
    return site is not None and site.provider == "wordllama"


def warm_embedded_model() -> None:
    """Load the embedded model and evaluate its prompt's constant head (the system message,
    with the names of a few of the agents, "Assistant" first: the default agent's name)."""
    names = Agent.objects.filter(is_active=True).values_list("name", flat=True).distinct()
    embedded.warm_embedded_model(tuple(dict.fromkeys(["Assistant", *names[:3]])))


def warm_wordllama() -> None:
    local_embeddings.WordLlamaEmbeddings().embed_query("warm up")


def warm_detectors() -> None:
    """The clarification policies' parsers: dateparser's language data, the gazetteer and the
    currency tables load on first use (about a second on a quiet machine, several when busy)."""
    parse_dates.find_dates("next Friday at 3pm", today=date.today())
    places.is_known_place("Lisbon")
    parse_money.find_money("6000 EUR")


def warm_up() -> dict[str, float]:
    """Load what this site's turns use; returns seconds per part loaded. Never raises: a part
    that fails is logged, and the first turn that needs it loads it (and reports the error)."""
    took: dict[str, float] = {}
    parts: list[tuple[str, Any, Any]] = [
        ("embedded model", embedded_model_in_use, warm_embedded_model),
        ("wordllama", wordllama_in_use, warm_wordllama),
        ("detectors", lambda: True, warm_detectors),
    ]
    for name, wanted, warm in parts:
        started = time.monotonic()
        try:
            if not wanted():
                continue
            warm()
        except Exception:
            log.warning("warm-up: could not load the %s; its first use will", name, exc_info=True)
            continue
        took[name] = round(time.monotonic() - started, 2)
    if took:
        log.info("warm-up: %s", ", ".join(f"{k} in {v:.2f} s" for k, v in took.items()))
    return took


def _run() -> None:
    try:
        warm_up()
    finally:
        connection.close()  # this thread's own connection


def start() -> threading.Thread | None:
    """Warm up in a daemon thread, once per process (None: already started or switched off)."""
    if not settings.AGENTS_WARM_UP or _started.is_set():
        return None
    _started.set()
    thread = threading.Thread(target=_run, name="agents-warm-up", daemon=True)
    thread.start()
    return thread


def _on_worker_init(sender: Any = None, **kwargs: Any) -> None:
    # A prefork pool's parent runs no job: its children warm up (worker_process_init).
    if str(settings.CELERY_WORKER_POOL) != "prefork":
        start()


def _on_worker_process_init(sender: Any = None, **kwargs: Any) -> None:
    start()


def connect() -> None:
    """Called by ``AgentsConfig.ready``."""
    worker_init.connect(_on_worker_init, weak=False, dispatch_uid="agents-warm-up")
    worker_process_init.connect(
        _on_worker_process_init, weak=False, dispatch_uid="agents-warm-up-child"
    )
