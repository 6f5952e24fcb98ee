"""The producers this site runs, in the order ``producer_for`` asks them; the model producer
last, as the fallback. ``AgentsConfig.ready`` (the composition root) calls ``register_all``
once the app registry is ready. A new kind of agent adds its module beside this one and one
line here."""

from __future__ import annotations

from agents.engine.producers import register_producer
from agents.engine.producers.a2a import A2AProducer
from agents.engine.producers.draft_review import DraftReviewProducer
from agents.engine.producers.model import ModelProducer
from agents.engine.producers.outside import OutsideProducer
from agents.engine.producers.plans import PlanProducer
from agents.engine.producers.skills import SkillsProducer


def register_all() -> None:
    register_producer(A2AProducer())  # an Agent2Agent agent at its card's URL (issue 29)
    register_producer(OutsideProducer())  # a program outside Collab (issue 29)
    register_producer(PlanProducer())  # a coordinator's plan and its steps (issue 30)
    register_producer(DraftReviewProducer())  # a reviewer's check of a draft (issue 30)
    register_producer(SkillsProducer())  # the embedded default's skills (issue 27)
    register_producer(ModelProducer(), fallback=True)
