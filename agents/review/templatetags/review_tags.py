from __future__ import annotations

import json
from typing import Any

from django import template

register = template.Library()


@register.filter
def pretty_json(value: Any) -> str:
    """Indented JSON for <pre> blocks (the template escapes it)."""
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True, default=str)
