"""What a model call raises: ``ModelError`` (a retry may help), ``ModelConfigError`` (it cannot)."""

from __future__ import annotations


class ModelError(Exception):
    """A model call failed in a way that a later retry may fix (network, timeout, bad JSON)."""


class ModelConfigError(Exception):
    """The profile cannot work as configured (missing package, key or model file)."""
