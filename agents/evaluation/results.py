"""What one played episode produced: the record the metrics are computed from."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class EpisodeResult:
    policy: str
    seed: int
    memory: bool
    episode: str
    user: str
    session: int
    template: str | None
    needs_clarification: bool
    blockers: list[str]
    category: str = ""  # clear / missing / ambiguous / contradictory
    split: str = ""  # dev / test ("" for a set without a split)
    # Asking
    asked: bool = False  # at least one question message before the first document
    questions: int = 0  # question messages in the episode
    asked_slots: list[str] = field(default_factory=list)  # every slot targeted, in order
    asked_before_first: list[str] = field(default_factory=list)  # targeted before 1st document
    redundant: int = 0
    irrelevant: int = 0
    # Question grounding: choices the agent's questions offered, and how many of them come from
    # the request, the document, the chat, memory or the template (the rest are invented).
    choices_offered: int = 0
    choices_grounded: int = 0
    # Contradictions: slots given two values (request / document / memory / chat), and how many
    # the agent noticed (asked about before its first document, or named in an assumption).
    conflicts: int = 0
    conflicts_noticed: int = 0
    # Asking preference in force (question messages allowed; None: none) and whether it held.
    asking_limit: int | None = None
    asking_respected: bool | None = None
    # Outcome
    success: bool = False
    values_right: bool = False  # the final document passes every success check (given up or not)
    gave_up: bool = False
    agent_turns: int = 0
    first_action: str = ""
    silent_wrong: int = 0  # wrong slot values in the first document that were not stated
    wrong_first: int = 0  # wrong slot values in the first document, stated or not
    # First-document correctness: the first edit or suggestion, before any correction, needs no
    # correction (every value right, every success check passed) and follows every preference
    # in force (its checks, and a stated asking limit kept before it). False with no document.
    first_values_right: bool = False
    first_preferences_right: bool = False
    first_correct: bool = False
    questions_before_first: int = 0  # question messages before the first document
    # Assumptions of the first document's turn: how many the person could see in its message,
    # and how many of those named a slot the text left uncertain (not stated, ambiguous or
    # contradicted); `uncertain` is how many slots the text left so.
    assumptions_visible: int = 0
    assumptions_uncertain: int = 0
    uncertain: int = 0
    closing_said: bool = False  # the person ended the episode with its closing remark
    probe: bool = False  # a shared-task leakage probe (only its leakage is counted)
    # Effort
    user_words: int = 0  # words the person typed after the opening request
    user_messages: int = 0
    corrections: int = 0
    enforcements: int = 0
    restated: list[str] = field(default_factory=list)  # ids of the preferences restated
    # Suggestions
    suggestions: int = 0
    suggestions_accepted: int = 0
    # Feedback the person gave the agent's moves (users.feedback_for): thumbs up, thumbs down,
    # "this question was unnecessary"
    feedback_up: int = 0
    feedback_down: int = 0
    feedback_unnecessary: int = 0
    # Preferences: id -> satisfied by the first document of the episode
    first_attempt: dict[str, bool] = field(default_factory=dict)
    final: dict[str, bool] = field(default_factory=dict)  # id -> satisfied by the final document
    # Document preservation: lines of the starting document the episode did not ask to change,
    # and how many of them are still in the final document.
    kept_lines: int = 0
    original_lines: int = 0
    leaked_content: int = 0  # other people's preference content found in the final document
    changed_prefs: list[str] = field(default_factory=list)  # preferences changed this session
    # Leakage: memory items of other people used, documents carrying another person's mark
    leaked_items: int = 0
    leaked_documents: int = 0
    # Cost
    model_calls: int = 0
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float = 0.0

    @property
    def asked_blocker(self) -> bool:
        """A question before the first document targeted a blocker of the episode."""
        return any(slot in self.blockers for slot in self.asked_before_first)

    @property
    def needless_question(self) -> bool:
        """A question before the first document that was not due: the episode had no blocker,
        its person had said "just go ahead", or no question targeted a blocker (a false
        positive of the blocker-targeted confusion, ``metrics.blocker_confusion``)."""
        return self.asked and not (self.should_ask and self.asked_blocker)

    @property
    def first_time_right(self) -> bool:
        """The first document needed no correction and cost the person no needless question
        before it: what asking about everything first cannot buy."""
        return self.first_correct and not self.needless_question

    @property
    def should_ask(self) -> bool:
        """The episode has a blocker and its person allows questions. Under "just go ahead"
        (an asking limit of 0) the right move is to act on a best guess and state it: asking
        there is a false positive, and what the agent assumed is scored by the silent-wrong and
        asking-budget figures instead."""
        return self.needs_clarification and self.asking_limit != 0

    def count_feedback(self, kind: str) -> None:
        if kind == "up":
            self.feedback_up += 1
        elif kind == "down":
            self.feedback_down += 1
        else:
            self.feedback_unnecessary += 1

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EpisodeResult:
        names = set(cls.__dataclass_fields__)
        return cls(**{k: v for k, v in data.items() if k in names})
