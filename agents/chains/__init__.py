"""Chains: agents addressing agents (issue 30). Pure Python, no Django: the guards that stop a
chain (``guards``) and the types of its hops (``hops``). The service that starts hops and
applies the guards' verdicts is ``agents.services.chains``."""
