"""The default embedding model: WordLlama's static embedding, shipped inside its wheel.

``wordllama`` (MIT, by Lee Miller, github.com/dleemiller/WordLlama) ships a 16 MB token
embedding (``l2_supercat``, 256 dimensions) and its tokenizer in the package's own folder. It is
loaded from there with downloads disabled (the package's own default would look in
``~/.cache`` and then fetch from a model hub); both files' SHA-256 are checked against the
values below before first use, so a different file is refused rather than used. Embedding a
query is a tokenizer call and an average of rows: under a millisecond on one core.

Nothing here runs unless ``MEMORY_EMBEDDING_PROVIDER`` is ``wordllama`` (the default).
"""

from __future__ import annotations

import hashlib
import logging
import threading
from collections.abc import Sequence
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

DISTRIBUTION = "wordllama"
AUTHOR = "Lee Miller"
CONFIG = "l2_supercat"
DIMENSIONS = 256
FILES = {
    "weights/l2_supercat_256.safetensors": (
        "64b47a2dc493cb8e85944076601189739852d7b64e0e1eedcb1937a251cd9fd5"
    ),
    "tokenizers/l2_supercat_tokenizer_config.json": (
        "93248f2a9ec36c7b35f700a033d5f36228aae48db61aee31007fa49062cdeb68"
    ),
}
IDENTITY = f"wordllama:{CONFIG}:{DIMENSIONS}"


class LocalEmbeddingError(Exception):
    """The shipped embedding cannot be used (package missing, or a file is not the one pinned)."""


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def package_folder() -> Path:
    """The installed package's folder, after checking that name, author and files agree."""
    try:
        meta = metadata.metadata(DISTRIBUTION)
        files = metadata.files(DISTRIBUTION) or []
    except metadata.PackageNotFoundError as exc:
        raise LocalEmbeddingError("The 'wordllama' package is not installed.") from exc
    authors = " ".join(str(value) for value in meta.get_all("Author-email") or ())
    authors += " ".join(str(value) for value in meta.get_all("Author") or ())
    if AUTHOR not in authors:
        raise LocalEmbeddingError("The installed 'wordllama' is not Lee Miller's.")
    init = next((f for f in files if str(f) == "wordllama/__init__.py"), None)
    if init is None:
        raise LocalEmbeddingError("The installed 'wordllama' has no package folder.")
    folder = Path(str(init.locate())).parent
    for name, expected in FILES.items():
        path = folder / name
        if not path.is_file() or _sha256(path) != expected:
            raise LocalEmbeddingError(f"wordllama's {name} is missing or not the pinned file.")
    return folder


_LOCK = threading.Lock()


@cache
def _model() -> Any:
    """The loaded model, once per process (about 2 s and 20 MB)."""
    folder = package_folder()
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    import wordllama  # optional at import time: only this provider needs it

    # wordllama configures the root logger when imported; leave the process's logging alone.
    root.handlers[:], root.level = handlers, level
    # The package's own folder as the "cache": both files are found there, nothing is fetched
    # (disable_download raises instead of downloading anything missing).
    return wordllama.WordLlama.load(
        config=CONFIG, dim=DIMENSIONS, disable_download=True, cache_dir=folder
    )


def model() -> Any:
    with _LOCK:
        return _model()


class WordLlamaEmbeddings(Embeddings):
    """langchain-core ``Embeddings`` over the shipped WordLlama model (unit-length vectors)."""

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        if not texts:
            return []
        return [[float(x) for x in row] for row in model().embed(list(texts), norm=True)]

    def embed_query(self, text: str) -> list[float]:
        return self.embed_documents([text])[0]


# Slot descriptions and short phrases recur across turns: their vectors are kept (bounded).
_VECTORS: dict[str, Any] = {}
_MAX_CACHED = 20_000


def similarities(texts: Sequence[str], targets: Sequence[str]) -> Any | None:
    """texts x targets cosine similarities (a numpy array) with the shipped model: the
    reader's sense of meaning (agents/policies/meaning.py installs this); None when the
    shipped model cannot be used (the reader then goes by words alone)."""
    try:
        loaded = model()
    except LocalEmbeddingError:
        return None
    wanted = [t for t in dict.fromkeys([*texts, *targets]) if t not in _VECTORS]
    if wanted:
        if len(_VECTORS) + len(wanted) > _MAX_CACHED:
            _VECTORS.clear()
        for text, row in zip(wanted, loaded.embed(wanted, norm=True), strict=True):
            _VECTORS[text] = row
    a = np.array([_VECTORS[t] for t in texts])
    b = np.array([_VECTORS[t] for t in targets])
    return a @ b.T
