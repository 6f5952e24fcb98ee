"""Hook registries: what the platform tells the apps built on it, without importing them.

The platform apps of ``collab`` (tasks, workspaces, realtime, ...) never import ``agents``: an
import contract checks it (``lint-imports``). Where the platform has news the agents care about
(a message was posted, a document was edited, a task finished), or room on a page for what the
agents add (fragments beside a message, the agents' part of the task page), it calls a hook
here; ``agents.apps.AgentsConfig.ready`` registers the agents' implementations.

Each hook is declared by a stub function whose signature every implementation must match
(mypy checks ``register``); calling a hook calls every implementation in registration order,
with keyword arguments only, and returns their results in that order. A hook with no
implementation returns ``[]``: the platform works on its own (its tests run without agents'
hooks by ``replaced``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, ParamSpec, Protocol, TypeVar

if TYPE_CHECKING:
    from django.contrib.auth.models import User

    from collab.tasks.models import Message, Task
    from collab.workspaces.models import Membership, Workspace

P = ParamSpec("P")
R = TypeVar("R")


class Hook(Generic[P, R]):
    """One named hook: ``register`` implementations, call it to run them all."""

    def __init__(self, spec: Callable[P, R]) -> None:
        self.name = spec.__name__
        self.__doc__ = spec.__doc__
        self._implementations: list[Callable[P, R]] = []

    def __repr__(self) -> str:
        return f"<Hook {self.name}: {len(self._implementations)} implementation(s)>"

    def register(self, implementation: Callable[P, R]) -> Callable[P, R]:
        """Add ``implementation`` (usable as a decorator). Registering the same one twice is a
        no-op, so a second ``AppConfig.ready`` (tests, autoreload) does not double the work."""
        if implementation not in self._implementations:
            self._implementations.append(implementation)
        return implementation

    @property
    def implementations(self) -> tuple[Callable[P, R], ...]:
        return tuple(self._implementations)

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> list[R]:
        if args:
            raise TypeError(f"hook {self.name} takes keyword arguments only")
        return [implementation(*args, **kwargs) for implementation in self._implementations]

    @contextmanager
    def replaced(self, *implementations: Callable[P, R]) -> Iterator[None]:
        """Run the block with only ``implementations`` registered (none: the platform alone)."""
        saved = self._implementations
        self._implementations = list(implementations)
        try:
            yield
        finally:
            self._implementations = saved


def hook(spec: Callable[P, R]) -> Hook[P, R]:
    """Declare a hook from a stub whose signature and docstring say what it is called with."""
    return Hook(spec)


# --- What the hooks carry ------------------------------------------------------------------


@dataclass(frozen=True)
class HookReport:
    """What an implementation of ``message_posted`` tells the platform back."""

    # A sentence for the person who posted the message, and for nobody else (e.g. what a
    # "remember that ..." command did). Empty: nothing to say.
    memory_notice: str = ""
    # The notice says what changed in the author's memory: it links to their Memory page
    # (other notices, such as an @name that is nobody, have nothing there to show).
    about_memory: bool = False


@dataclass(frozen=True)
class PostedMessage:
    """What ``collab.tasks.services.post_message`` returns: the stored message and what the
    hooks reported about it (the notice is for the author only, never broadcast)."""

    message: Message
    memory_notice: str = ""
    about_memory: bool = False

    @classmethod
    def from_reports(cls, message: Message, reports: list[HookReport]) -> PostedMessage:
        notices = [report.memory_notice for report in reports if report.memory_notice]
        about_memory = any(report.about_memory for report in reports)
        return cls(message=message, memory_notice=" ".join(notices), about_memory=about_memory)


class TaskTemplateLike(Protocol):
    """What the platform needs to know of a task template (``task_templates`` hook)."""

    @property
    def title(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def skeleton(self) -> str: ...


# --- The hooks (names fixed in the helpers' shared contracts) -------------------------------


@hook
def message_posted(*, message: Message, membership: Membership) -> HookReport:
    """A person posted ``message`` (inside ``post_message``'s transaction, before its broadcast
    is registered on commit). Start what the message triggers; register I/O on commit."""
    raise NotImplementedError


@hook
def document_edited(*, latest_updates: Mapping[int, int]) -> None:
    """People's edits were stored (inside the flush transaction): the newest stored update id
    per task id, for every document of the batch that a person (not an agent) changed."""
    raise NotImplementedError


@hook
def task_finished(*, task: Task) -> None:
    """A task was marked done (inside ``set_task_status``'s transaction)."""
    raise NotImplementedError


@hook
def workspace_created(*, workspace: Workspace, owner: User, agent_name: str) -> None:
    """A workspace was created by ``owner`` (inside ``create_workspace``'s transaction);
    ``agent_name``: the name asked for its default agent ("" for the default name)."""
    raise NotImplementedError


@hook
def demo_seeded(*, task: Task, owner: User) -> None:
    """``seed_demo`` made (or found) the demo task of ``owner``'s demo workspace (inside its
    transaction): add what a first look should show. Idempotent."""
    raise NotImplementedError


@hook
def task_created(*, task: Task) -> None:
    """A task was created (inside ``create_task``'s transaction, its document included)."""
    raise NotImplementedError


@hook
def message_fragments(*, task_id: int, messages: list[dict[str, Any]], viewer: User) -> None:
    """Add what is shown beside chat messages (serialized dicts, ``message_event``) for
    ``viewer``: e.g. the feedback widget and the assumption card of an agent's message. One
    call per page of messages, so an implementation can read what it needs in one query."""
    raise NotImplementedError


@hook
def task_page_context(*, task: Task, membership: Membership) -> dict[str, Any]:
    """Extra context for the task page (what it shows of agents); merged into the page's."""
    raise NotImplementedError


@hook
def task_templates() -> Mapping[str, TaskTemplateLike]:
    """The task templates a task can start from, by kind (``Task.template`` stores the kind)."""
    raise NotImplementedError


@hook
def task_participants(*, task: Task) -> list[dict[str, str]]:
    """Non-human participants of a task shown in the editor's presence list even when they are
    not connected: ``{"name": ..., "color": ...}`` each."""
    raise NotImplementedError
