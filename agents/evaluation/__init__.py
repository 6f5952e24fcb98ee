"""The evaluation harness: scenario sets, simulated users, runners, metrics and reports
(docs/evaluation.md)."""

from __future__ import annotations
