"""Every change to what agents remember goes through this package, one module per job:

* ``reconciliation``: what a proposal does to what is remembered (add, supersede, invalidate,
  keep); ``propose`` for agents and reflection, ``propose_from_agent`` for an agent's
  ``remember``; the one validation of an item.
* ``commands``: "remember that …" / "forget …" in chat, and the reflection they schedule.
* ``items``: the Memory page (write, edit, pin, share, delete, the review inbox, settings,
  forget everything, audited reads).
* ``import_export``: a person's memory file in and out.

The names below are the package's interface (callers write ``memory.propose(...)``).
"""

from __future__ import annotations

from agents.memory.services.commands import (
    command_notice,
    message_posted,
    schedule_reflection,
    task_finished,
)
from agents.memory.services.import_export import (
    EXPORT_FORMAT,
    IMPORT_MAX_ITEMS,
    import_memory,
    parse_import,
)
from agents.memory.services.items import (
    accept_candidate,
    create_item,
    delete_item,
    edit_item,
    forget_everything,
    record_admin_read,
    record_export,
    reject_candidate,
    set_pinned,
    set_shared,
    update_settings,
    use_everywhere,
)
from agents.memory.services.reconciliation import (
    AGENT_CONFIDENCE,
    Provenance,
    Reconciliation,
    apply_reflection,
    check_proposal,
    memory_enabled,
    normalise,
    propose,
    propose_from_agent,
    reconcile,
    settings_for,
)

__all__ = [
    "AGENT_CONFIDENCE",
    "EXPORT_FORMAT",
    "IMPORT_MAX_ITEMS",
    "Provenance",
    "Reconciliation",
    "accept_candidate",
    "apply_reflection",
    "check_proposal",
    "command_notice",
    "create_item",
    "delete_item",
    "edit_item",
    "forget_everything",
    "import_memory",
    "memory_enabled",
    "message_posted",
    "normalise",
    "parse_import",
    "propose",
    "propose_from_agent",
    "reconcile",
    "record_admin_read",
    "record_export",
    "reject_candidate",
    "schedule_reflection",
    "set_pinned",
    "set_shared",
    "settings_for",
    "task_finished",
    "update_settings",
    "use_everywhere",
]
