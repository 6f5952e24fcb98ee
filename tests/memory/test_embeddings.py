"""Retrieval by meaning when an embedding model is configured: items are embedded by a job on
commit (ids only, idempotent) or by the backfill command, and retrieval ranks full-text matches
and the nearest items in meaning together. Without a model, nothing of this runs."""

from __future__ import annotations

import re

import numpy as np
import pytest
from django.core.management import call_command
from langchain_core.embeddings import Embeddings

from agents.llm import embeddings as embedding_models
from agents.memory import embeddings, jobs, services
from agents.memory.models import MemoryEmbedding, MemoryItem, Scope, Status
from agents.memory.selectors import retrieve_for_turn

CONCEPTS = {
    "holiday": 0, "holidays": 0, "vacation": 0, "leave": 0,
    "coffee": 1, "espresso": 1,
    "budget": 2, "money": 2,
}  # fmt: skip


class ConceptEmbeddings(Embeddings):
    """Words that mean the same land on the same axis (a fake model with some meaning)."""

    def __init__(self, size: int) -> None:
        self.size = size

    def _vector(self, text: str) -> list[float]:
        vector = [0.01] * self.size
        for word in re.findall(r"\w+", text.lower()):
            if word in CONCEPTS:
                vector[CONCEPTS[word]] += 1.0
        return vector

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vector(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)


class BrokenEmbeddings(ConceptEmbeddings):
    def embed_query(self, text: str) -> list[float]:
        raise ConnectionError("the embedding server is down")


embedding_models.register_fake_embeddings("concepts", ConceptEmbeddings)
embedding_models.register_fake_embeddings("broken", BrokenEmbeddings)


@pytest.fixture
def deterministic(settings):
    settings.MEMORY_EMBEDDING_PROVIDER = "fake"
    settings.MEMORY_EMBEDDING_MODEL = ""
    settings.MEMORY_EMBEDDING_DIMENSIONS = 32


@pytest.fixture
def concepts(settings):
    settings.MEMORY_EMBEDDING_PROVIDER = "fake"
    settings.MEMORY_EMBEDDING_MODEL = "concepts"
    settings.MEMORY_EMBEDDING_DIMENSIONS = 8


@pytest.fixture
def embed_jobs(sent_jobs):
    """Item ids sent to the embedding job."""

    class Sent(list):
        def _ids(self):
            return [args[0] for name, args, _ in sent_jobs if name == embeddings.EMBED_JOB]

        def __eq__(self, other):
            return self._ids() == other

        def __getitem__(self, index):
            return self._ids()[index]

    return Sent()


def remember(owner, text, **fields):
    item = MemoryItem.objects.create(owner=owner, text=text, **fields)
    embeddings.embed_items([item.pk])
    return item


def test_without_an_embedding_model_nothing_is_embedded_and_retrieval_is_one_query(
    alice, embed_jobs, django_capture_on_commit_callbacks, django_assert_num_queries
):
    with django_capture_on_commit_callbacks(execute=True):
        services.create_item(user=alice, text="Holiday in August")

    with django_assert_num_queries(1):
        memory = retrieve_for_turn([alice], None, "holiday")

    assert embed_jobs == []
    assert not MemoryEmbedding.objects.exists()
    assert embeddings.embed_items(MemoryItem.objects.values_list("pk", flat=True)) == 0
    assert [m.text for m in memory.relevant] == ["Holiday in August"]


def test_a_new_or_edited_item_is_embedded_by_a_job_on_commit(
    alice, deterministic, embed_jobs, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        item = services.create_item(user=alice, text="Holiday in August").item
    assert embed_jobs == [[item.pk]]

    assert jobs.embed_items_job(embed_jobs[0]) == 1
    stored = MemoryEmbedding.objects.get(item=item)
    vector = embeddings.from_bytes(stored.vector)
    assert vector.shape == (32,)
    assert abs(float(np.linalg.norm(vector)) - 1) < 1e-5
    assert stored.model == "fake:deterministic:32"

    assert jobs.embed_items_job([item.pk]) == 0  # a redelivery changes nothing

    with django_capture_on_commit_callbacks(execute=True):
        services.edit_item(user=alice, item=item, text="Holiday in September", kind="preference")
    assert jobs.embed_items_job(embed_jobs[-1]) == 1
    assert MemoryEmbedding.objects.get(item=item).vector != stored.vector


def test_the_backfill_command_embeds_current_items_once(alice, bob, deterministic):
    current = [MemoryItem.objects.create(owner=alice, text=f"Fact {n}") for n in range(5)]
    MemoryItem.objects.create(owner=bob, text="Old", status=Status.DELETED)

    call_command("memory_embed", "--batch", "2")
    call_command("memory_embed")

    assert set(MemoryEmbedding.objects.values_list("item_id", flat=True)) == {i.pk for i in current}


def test_the_backfill_command_says_when_no_model_is_configured(db):
    from django.core.management.base import CommandError

    with pytest.raises(CommandError, match="No embedding model configured"):
        call_command("memory_embed")


def test_an_item_is_found_by_meaning_when_no_word_matches(alice, concepts):
    vacation = remember(alice, "Vacation: always the first two weeks of August")
    remember(alice, "Espresso, never filter coffee")

    memory = retrieve_for_turn([alice], None, "When are the holidays?")

    assert [m.item_id for m in memory.relevant] == [vacation.pk]
    assert memory.relevant[0].score > 0


def test_words_and_meaning_rank_together(alice, concepts):
    both = remember(alice, "Holiday budget is 2000 euros")
    words_only = remember(alice, "Budget reviews happen on Mondays")
    meaning_only = remember(alice, "Money for the team dinner comes from petty cash")

    memory = retrieve_for_turn([alice], None, "holiday budget")

    ranked = [m.item_id for m in memory.relevant]
    assert ranked[0] == both.pk
    assert set(ranked) == {both.pk, words_only.pk, meaning_only.pk}


def test_nobody_elses_items_are_found_by_meaning(alice, bob, workspace, concepts):
    remember(bob, "Vacation in July")
    remember(bob, "Vacation here in July", scope=Scope.WORKSPACE, workspace=workspace)
    team = remember(alice, "Team vacation calendar is on the wiki", scope=Scope.TEAM,
                    workspace=workspace)  # fmt: skip

    memory = retrieve_for_turn([alice], workspace, "holidays")

    assert [m.item_id for m in memory.relevant] == [team.pk]


def test_memory_off_hides_items_from_retrieval_by_meaning(alice, concepts):
    remember(alice, "Vacation in July")
    services.update_settings(
        user=alice, enabled=False, review_mode="auto", admin_access_allowed=False
    )

    assert retrieve_for_turn([alice], None, "holidays").items == []


def test_a_failing_embedding_model_leaves_full_text_retrieval_working(alice, settings):
    settings.MEMORY_EMBEDDING_PROVIDER = "fake"
    settings.MEMORY_EMBEDDING_MODEL = "broken"
    item = remember(alice, "Holiday in August")

    memory = retrieve_for_turn([alice], None, "holiday")

    assert [m.item_id for m in memory.relevant] == [item.pk]


def test_an_openai_compatible_embedding_model_is_built_without_network(settings):
    settings.MEMORY_EMBEDDING_PROVIDER = "openai"
    settings.MEMORY_EMBEDDING_MODEL = "nomic-embed-text"
    settings.MEMORY_EMBEDDING_BASE_URL = "http://127.0.0.1:9/v1"

    model = embedding_models.build_embeddings(embedding_models.embedding_profile())

    from langchain_openai import OpenAIEmbeddings

    assert isinstance(model, OpenAIEmbeddings)
    assert model.check_embedding_ctx_length is False
    assert model.model == "nomic-embed-text"
