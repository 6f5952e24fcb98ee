"""What the agents app sends out of its process: live events for every open page of a task
(``events``), the agents' presence in documents (``presence``), and jobs by name (``enqueue``).
Services register events and jobs with ``transaction.on_commit``; nothing here changes a row."""
