from __future__ import annotations

from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from agents.models import ModelCall, Turn
from agents.review.selectors import ReviewScope
from agents.review.traces import TraceFilter, decode_cursor, list_model_calls, list_turns
from tests import factories
from tests.review.conftest import (
    make_action,
    make_agent,
    make_call,
    make_feedback,
    make_question,
    make_suggestion,
    make_turn,
)

pytestmark = pytest.mark.django_db
ALL = ReviewScope(workspace=None)


def ids(page):
    return [row["id"] for row in page.rows]


def test_calls_are_listed_newest_first_with_tokens_latency_and_cost(as_user, agent, task, alice):
    turn = make_turn(agent, task)
    first = make_call(turn, tokens_in=111, tokens_out=22, cost="0.123400")
    second = make_call(turn)

    response = as_user(alice).get(reverse("review:workspace_traces", args=[task.workspace_id]))

    html = response.content.decode()
    assert ids(response.context["page"]) == [second.pk, first.pk]
    assert "111 / 22" in html
    assert "0.123400" in html
    assert "42 ms" in html


def test_the_trace_list_does_not_query_per_row(
    as_user, agent, task, staff, alice, django_assert_max_num_queries
):
    for _ in range(30):
        turn = make_turn(agent, task)
        make_call(turn)
        suggestion = make_suggestion(turn, status="accepted", decided_by=alice)
        make_feedback(alice, suggestion, rating="up", comment="Nice")
    url = reverse("review:site_traces")
    client = as_user(staff)

    # session, user, the agents for the filter form, the page itself (and on Postgres the
    # planner's estimate of how common the searched word is, and the table's size, cached)
    with django_assert_max_num_queries(6):
        calls = client.get(url, {"has_feedback": "yes", "q": "offsite"})
    with django_assert_max_num_queries(4):
        turns = client.get(url, {"view": "turns", "has_feedback": "yes"})

    assert len(calls.context["page"].rows) == 30
    assert len(turns.context["page"].rows) == 30
    assert turns.content.decode().count("helpful 1 ") == 30


def test_keyset_pages_follow_on_without_gaps_or_repeats(agent, task):
    turn = make_turn(agent, task)
    made = [make_call(turn).pk for _ in range(7)]
    same_moment = timezone.now()
    ModelCall.objects.filter(pk__in=made[2:5]).update(created_at=same_moment)  # ties on time
    ModelCall.objects.filter(pk__in=made[5:]).update(created_at=same_moment + timedelta(seconds=1))

    first = list_model_calls(scope=ALL, filters=TraceFilter(), limit=3)
    second = list_model_calls(
        scope=ALL, filters=TraceFilter(), before=decode_cursor(first.next_before), limit=3
    )
    third = list_model_calls(
        scope=ALL, filters=TraceFilter(), before=decode_cursor(second.next_before), limit=3
    )

    assert ids(first) + ids(second) + ids(third) == sorted(made, reverse=True)
    assert third.next_before is None


def test_an_owner_sees_only_the_calls_of_their_workspace(
    as_user, agent, task, alice, other_workspace
):
    mine = make_call(make_turn(agent, task))
    other_agent = make_agent(other_workspace, "Spy")
    make_call(make_turn(other_agent, factories.make_task(other_workspace)))

    response = as_user(alice).get(
        reverse("review:workspace_traces", args=[task.workspace_id]),
        {"workspace": other_workspace.pk},
    )

    assert ids(response.context["page"]) == [mine.pk]


def test_filters_narrow_the_calls(agent, task, bob, alice):
    other_task = factories.make_task(task.workspace, title="Other")
    helper = make_agent(task.workspace, "Helper")
    old = timezone.now() - timedelta(days=10)
    plain = make_call(make_turn(agent, task))
    failed = make_call(make_turn(agent, task, status="failed", error="boom"), error="Timeout")
    asked = make_call(make_turn(helper, other_task, decision="ask"), model="big")
    ancient = make_call(make_turn(agent, task, at=old), at=old)
    fed_back = make_turn(agent, task)
    make_feedback(bob, make_question(fed_back, answered_by=bob), unnecessary=True)
    answered_only = make_turn(agent, task)  # answering is not feedback
    make_call(answered_only)
    make_question(answered_only, answered_by=bob)
    with_feedback = make_call(fed_back, prompt="Where do we meet in Lisbon?")

    def only(**kwargs):
        return ids(list_model_calls(scope=ALL, filters=TraceFilter(**kwargs)))

    assert only(agent=helper.pk) == [asked.pk]
    assert only(task=other_task.pk) == [asked.pk]
    assert only(model="big") == [asked.pk]
    assert only(status="failed") == [failed.pk]
    assert only(decision="ask") == [asked.pk]
    assert only(policy="ask_once", model="big") == [asked.pk]
    assert only(has_error=True) == [failed.pk]
    assert failed.pk not in only(has_error=False)
    assert only(has_feedback=True) == [with_feedback.pk]
    assert only(until=(old + timedelta(days=1)).date()) == [ancient.pk]
    assert ancient.pk not in only(since=timezone.now().date())
    assert only(q="lisbon") == [with_feedback.pk]
    assert plain.pk in only()


def test_search_reads_responses_too(agent, task):
    make_call(make_turn(agent, task))
    hit = make_call(make_turn(agent, task), response='{"reply": "The venue is a castle"}')

    assert ids(list_model_calls(scope=ALL, filters=TraceFilter(q="castle"))) == [hit.pk]


def test_turns_view_lists_turns_with_their_feedback(as_user, agent, task, staff, alice, bob):
    quiet = make_turn(agent, task)
    judged = make_turn(agent, task)
    suggestion = make_suggestion(judged, status="rejected", decided_by=alice)
    make_feedback(alice, suggestion, rating="down")
    make_feedback(bob, suggestion, rating="down", comment="Wrong day")
    cleared = make_turn(agent, task)  # a thumb clicked away: kept for the bandit, not shown
    make_feedback(alice, make_suggestion(cleared), rating="")

    page = list_turns(scope=ALL, filters=TraceFilter(has_feedback=True))
    without = list_turns(scope=ALL, filters=TraceFilter(has_feedback=False))
    response = as_user(staff).get(reverse("review:site_traces"), {"view": "turns"})

    assert ids(page) == [judged.pk]
    assert set(ids(without)) == {quiet.pk, cleared.pk}
    assert set(ids(response.context["page"])) == {quiet.pk, judged.pk, cleared.pk}
    row = next(r for r in response.context["page"].rows if r["id"] == judged.pk)
    assert (row["thumbs_up"], row["thumbs_down"], row["commented"]) == (0, 2, True)
    assert "not helpful 2 commented" in response.content.decode()


def test_bad_filters_answer_400(as_user, staff):
    response = as_user(staff).get(
        reverse("review:site_traces"), {"since": "yesterday", "before": "12x.4"}
    )

    assert response.status_code == 400
    assert set(response.context["form"].errors) == {"since", "before"}


def test_the_older_link_opens_the_next_page(as_user, agent, task, staff):
    turn = make_turn(agent, task)
    made = [make_call(turn).pk for _ in range(53)]
    client = as_user(staff)

    first = client.get(reverse("review:site_traces"))
    cursor = first.context["page"].next_before
    second = client.get(reverse("review:site_traces"), {"before": cursor})

    assert f"before={cursor}" in first.content.decode()
    assert ids(second.context["page"]) == sorted(made)[:3][::-1]


def test_turn_detail_links_a_turn_another_agent_addressed_to_its_parent(
    as_user, agent, task, alice
):
    asker = make_turn(agent, task)
    addressed = make_turn(agent, task, trigger="agent")
    Turn.objects.filter(pk=addressed.pk).update(parent=asker, hop_kind="review")

    html = as_user(alice).get(reverse("review:turn", args=[addressed.pk])).content.decode()
    own = as_user(alice).get(reverse("review:turn", args=[asker.pk])).content.decode()

    assert f'Review request from <a href="{reverse("review:turn", args=[asker.pk])}">' in html
    assert 'data-testid="parent-turn"' not in own


def test_turn_detail_shows_the_whole_trace(as_user, agent, task, alice, bob):
    turn = make_turn(
        agent,
        task,
        requested_by=bob,
        context={"memory": ["(team preference) Short"], "memory_item_ids": [7]},
    )
    make_call(turn, prompt="Plan <b>the</b> offsite", response='{"reply": "Sure"}')
    make_action(turn)
    make_suggestion(turn, status="edited", decided_by=alice)
    question = make_question(turn, answered_by=bob)
    make_feedback(bob, question, rating="down", comment="<i>Obvious</i>", unnecessary=True)

    html = as_user(alice).get(reverse("review:turn", args=[turn.pk])).content.decode()

    assert "Plan &lt;b&gt;the&lt;/b&gt; offsite" in html  # prompts are escaped
    assert "{&quot;reply&quot;: &quot;Sure&quot;}" in html
    assert "because act" in html
    assert "scores" in html
    assert "Edited, then accepted" in html
    assert "Lisbon" in html
    assert "Memory items used: 7" in html
    feedback = html.split('id="feedback-given"')[1]
    assert "<td>bob</td>" in feedback
    assert "not helpful" in feedback
    assert "&lt;i&gt;Obvious&lt;/i&gt;" in feedback  # comments are escaped
    assert "<td>yes</td>" in feedback  # the question was unnecessary


def test_a_turn_of_another_workspace_is_hidden_from_an_owner(as_user, alice, other_workspace):
    turn = make_turn(make_agent(other_workspace, "Spy"), factories.make_task(other_workspace))

    assert as_user(alice).get(reverse("review:turn", args=[turn.pk])).status_code == 404


def test_a_rare_word_is_searched_through_the_index_and_a_common_one_by_walking(agent, task):
    from django.db import connection

    from agents.review import traces
    from agents.review.traces import _search_sql

    if connection.vendor != "postgresql":
        pytest.skip("The full-text index and its statistics exist on Postgres only.")
    turn = make_turn(agent, task)
    ModelCall.objects.bulk_create(
        ModelCall(turn=turn, agent=agent, provider="fake", response=f"everywhere word{n}")
        for n in range(3000)
    )
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE agents_modelcall")
    traces._table_rows.clear()

    rare = _search_sql("unheardof", column="id").sql
    common = _search_sql("everywhere", column="id").sql

    assert "MATERIALIZED" in rare
    assert "MATERIALIZED" not in common
