"""The third stage, understand: the turn's request parsed and its ``Situation`` built, once
(the pure core is ``agents.policies.understand``).

The one thing here that is not pure: a policy that reads model signals (``agents.engine.signals``)
gets them from structured calls to the agent's model, run together in model threads within a
share of the turn's time budget; each is logged and counted, answered or not. A call that fails
or times out gives no signal; only a Stop interrupts. A registered signal provider's options
(gathered in ``TurnInput.provided``) take precedence: then no call is made.
"""

from __future__ import annotations

import threading
import time
from typing import Any

from agents.engine import signals
from agents.engine.calls import log_call
from agents.engine.gather import TurnInput
from agents.engine.lease import seconds_left, time_budget_seconds
from agents.engine.stream import await_signal, producers
from agents.policies.adapter import ParsedRequest
from agents.policies.understand import Understanding, parse_with
from agents.policies.understand import understand as understood
from agents.skills.route import route

# The requests that produce the work itself, so need the task's values (and a request no skill
# covers, which the policy reads by its words as before).
WORK_SKILLS = frozenset({"draft", ""})


def model_signals(inp: TurnInput, parsed: ParsedRequest) -> dict[str, Any]:
    """The policy's model signals for the ``parsed`` request (``signals`` / ``extraction``
    options, maybe none)."""
    turn, profile = inp.turn, inp.profile
    calls = signals.plan(inp.policy_name, profile, parsed)
    if not calls:
        return {}
    budget = max(0.0, min(time_budget_seconds() * signals.TIME_SHARE, seconds_left(turn)))
    deadline = time.monotonic() + budget
    stop = threading.Event()
    futures = [producers.submit(signals.run_call, profile, call, stop) for call in calls]
    answers = []
    try:
        for call, future in zip(calls, futures, strict=True):
            answers.append(await_signal(turn, future, deadline) or signals.timed_out(call, budget))
    finally:
        stop.set()  # calls still running (timed out, or the turn was stopped) end at once
        for future in futures[len(answers) :]:
            future.cancel()
        for call, answer in zip(calls, answers, strict=False):
            log_call(turn, signals.model_call(turn, profile, call, answer), fields={})
    return signals.options(answers)


def understand(inp: TurnInput) -> Understanding:
    """The turn's understanding: a provider's options, else the model signals the policy reads
    (with the task's shipped template); a turn whose question timed out goes ahead."""
    options: dict[str, Any]
    if inp.provided is not None:
        options = dict(inp.provided)
        parsed = parse_with(inp.context, options)
    else:
        parsed = parse_with(inp.context, {"template_kind": inp.template_kind})
        options = {**model_signals(inp, parsed)}
        options.setdefault("template_kind", inp.template_kind)
    if inp.timed_out:  # nobody answered the agent's question in time
        options["timed_out"] = True
    asked = inp.route if parsed.request.strip() == inp.request.strip() else route(parsed.request)
    if asked.skill not in WORK_SKILLS:
        # A question about the task, a summary, a checklist, risks: answered with what is
        # known and what is open, never held up by a question first (issue 27).
        options.setdefault("needs_slots", False)
    return understood(inp.context, parsed, kind=inp.template_kind, options=options)
