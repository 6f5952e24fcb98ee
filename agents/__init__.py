"""Agents: turns, model access, clarification policies, memory and evaluation."""
