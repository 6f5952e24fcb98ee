"""Structured keys as the policies read them (SHARED_CONTRACTS.md): ``lists`` becomes
``list_style``, ``spelling`` takes ``british`` / ``american``, ``max_words=N`` becomes
``length`` (the text still says the number), and a ``tone`` the policies do not know
(``neutral``) keeps its text without a key."""

from __future__ import annotations

from typing import Any

from django.db import migrations

SPELLING = {"en-gb": "british", "en-us": "american"}


def _length(words: str) -> str:
    limit = int(words) if words.isdigit() else 0
    return "short" if limit <= 200 else "medium" if limit <= 600 else "long"


def forwards(apps: Any, schema_editor: Any) -> None:
    for name in ("MemoryItem", "MemoryCandidate"):
        model = apps.get_model("memory", name)
        model.objects.filter(key="lists").update(key="list_style")
        for old, new in SPELLING.items():
            model.objects.filter(key="spelling", value__iexact=old).update(value=new)
        model.objects.filter(key="tone").exclude(value__in=["formal", "casual", "friendly"]).update(
            key="", value=""
        )
        for row in model.objects.filter(key="max_words").only("pk", "value"):
            model.objects.filter(pk=row.pk).update(key="length", value=_length(row.value))


def backwards(apps: Any, schema_editor: Any) -> None:
    for name in ("MemoryItem", "MemoryCandidate"):
        model = apps.get_model("memory", name)
        model.objects.filter(key="list_style").update(key="lists")
        for old, new in SPELLING.items():
            model.objects.filter(key="spelling", value=new).update(
                value={"en-gb": "en-GB", "en-us": "en-US"}[old]
            )


class Migration(migrations.Migration):
    dependencies = [("memory", "0008_item_kinds_and_sharing")]

    operations = [migrations.RunPython(forwards, backwards)]
