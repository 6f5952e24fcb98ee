"""The default embedding model (WordLlama, shipped in its wheel): loaded from the package's own
folder with no network, pinned by hash, and finding memory by meaning through retrieval."""

from __future__ import annotations

import socket

import pytest

from agents.memory import embeddings, local_embeddings
from agents.memory.models import MemoryItem
from agents.memory.selectors import retrieve_for_turn


@pytest.fixture
def wordllama(settings):
    settings.MEMORY_EMBEDDING_PROVIDER = "wordllama"
    settings.MEMORY_EMBEDDING_MIN_SIMILARITY = 0.15


@pytest.fixture
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("the network was used")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def test_the_shipped_model_loads_from_its_package_with_no_network(no_network):
    local_embeddings._model.cache_clear()

    vector = local_embeddings.WordLlamaEmbeddings().embed_query("Zoë's stand-up, 15 minutes")

    assert len(vector) == local_embeddings.DIMENSIONS
    assert abs(sum(x * x for x in vector) - 1) < 1e-3


def test_a_file_that_is_not_the_pinned_one_is_refused(monkeypatch):
    name = next(iter(local_embeddings.FILES))
    monkeypatch.setitem(local_embeddings.FILES, name, "0" * 64)

    with pytest.raises(local_embeddings.LocalEmbeddingError, match="not the pinned file"):
        local_embeddings.package_folder()


def test_by_default_an_item_sharing_no_word_with_the_query_is_found_by_meaning(
    alice, wordllama, no_network
):
    standup = MemoryItem.objects.create(owner=alice, text="Our stand-ups always run 15 minutes")
    MemoryItem.objects.create(owner=alice, text="My cat is called Tom")
    MemoryItem.objects.create(owner=alice, text="Lunch on Fridays is vegetarian")
    assert embeddings.embed_items(MemoryItem.objects.values_list("pk", flat=True)) == 3

    memory = retrieve_for_turn([alice], None, "how long is the daily meeting")

    assert [m.item_id for m in memory.relevant][:1] == [standup.pk]
    assert embeddings.profile().identity == local_embeddings.IDENTITY
