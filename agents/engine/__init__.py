"""The turn engine: ``claim`` a turn, ``decide`` (``stream`` the model's answer), ``act``
(apply its actions), finish; ``runner.run_turn`` strings them together. The engine calls the
services (``agents.services``) to change anything; the turn's context is ``agents.engine.context``.
"""
