"""Embed every current memory item that has no vector of the configured embedding model."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from agents import llm
from agents.memory import embeddings


class Command(BaseCommand):
    help = (
        "Embed current memory items that have no (or a stale) vector of the configured "
        "MEMORY_EMBEDDING_* model. Safe to run again: unchanged items are skipped."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--batch", type=int, default=256, help="Items per model call.")

    def handle(self, *args: Any, **options: Any) -> None:
        profile = embeddings.profile()
        if profile is None:
            raise CommandError("No embedding model configured (MEMORY_EMBEDDING_PROVIDER).")
        if options["batch"] < 1:
            raise CommandError("--batch must be at least 1.")
        try:
            written = embeddings.backfill(batch=options["batch"])
        except (llm.ModelError, llm.ModelConfigError) as exc:
            raise CommandError(str(exc)) from exc
        self.stdout.write(f"Embedded {written} item(s) with {profile.identity}.")
