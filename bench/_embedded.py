"""Set up Django on the embedded default in a bench's own process: a fresh DATA_DIR, no
external service or provider key, migrated (bench/usefulness.py, embedded_kinds.py,
multi_agent.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def setup(data_dir: str) -> None:
    os.environ["DATA_DIR"] = data_dir
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "collab.settings")
    for name in ("DATABASE_URL", "REDIS_URL", "OPENAI_API_KEY", "ANTHROPIC_API_KEY"):
        os.environ.pop(name, None)
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
