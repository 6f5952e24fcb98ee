"""Every change to agents and their work goes through a service, one module per noun.

``agents`` (managing agents), ``turns`` (starting, stopping, failing turns), ``actions``
(validating and applying what a turn decided), ``live_typing`` (a direct edit typed in steps),
``edits`` (agent changes to the live document), ``questions`` (answers, timeouts, assumptions),
``suggestions``, ``feedback``, ``chat`` (what agents post) and ``access`` (the owner check; the
editor and workspace checks are ``collab.workspaces.permissions``). Broadcasts and job enqueues
are registered with ``transaction.on_commit``; jobs are enqueued by name
(``agents.outbox.enqueue``), so no service imports ``agents.jobs``. The turn engine
(``agents.engine``) calls these, never the other way round.
"""
