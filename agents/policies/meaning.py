"""Reading by meaning: how close a piece of text is to what a slot is for (its label,
description and examples), through an embedding model the composition root installs.

The policies stay pure: they never load a model themselves. `install` takes a function that
scores each text of one list against each of another (cosine similarity of unit embeddings,
in [-1, 1]); the app (agents/apps.py) and the understanding bench install the shipped WordLlama
embedding (agents/memory/local_embeddings.py). Without one installed, `similarities` returns
None and the reader falls back to what the parsers and the slot's words say on their own.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from agents.policies.base import SlotSpec

Similarity = Callable[[Sequence[str], Sequence[str]], "Sequence[Sequence[float]] | None"]

_installed: list[Similarity] = []


def install(similarity: Similarity | None) -> None:
    """Use `similarity` for every reading by meaning in this process (None: none)."""
    _installed[:] = [] if similarity is None else [similarity]


def installed() -> bool:
    return bool(_installed)


def similarities(texts: Sequence[str], targets: Sequence[str]) -> list[list[float]] | None:
    """texts x targets similarities, or None when no model is installed (or nothing to do)."""
    if not _installed or not texts or not targets:
        return None
    scores = _installed[0](list(texts), list(targets))
    return None if scores is None else [[float(x) for x in row] for row in scores]


def slot_text(spec: SlotSpec) -> str:
    """What a slot is for, as one text: its label and description ("number of seats: Number
    of seats to reserve")."""
    label = spec.display
    return f"{label}: {spec.description}" if spec.description else label


def closest(contexts: Sequence[str], specs: Sequence[SlotSpec]) -> list[list[float]] | None:
    """contexts x specs: how close each context is to each slot's label and description."""
    return similarities(contexts, [slot_text(s) for s in specs])
