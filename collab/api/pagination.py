"""Cursor pages, the same for every list of the API: the newest page first, each page oldest
first, ``before`` (an id) walks back, ``has_more`` and ``next_before`` say whether and how."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Generic, TypeVar

from django.db.models import Model, QuerySet
from ninja import Field, Schema

from collab.api.schemas import MAX_ID, MAX_PAGE
from collab.tasks.selectors import page_size

RowT = TypeVar("RowT", bound=Model)


class PageQuery(Schema):
    before: int | None = Field(
        None, ge=1, le=MAX_ID, description="Only items with a smaller id (the previous page)."
    )
    limit: int | None = Field(
        None, ge=1, le=MAX_PAGE, description=f"Page size, at most {MAX_PAGE}."
    )


class PageFields(Schema):
    has_more: bool = Field(description="Whether older items exist.")
    next_before: int | None = Field(
        description="Pass as `before` to get the previous (older) page; null when none."
    )


@dataclass(frozen=True)
class Page(Generic[RowT]):
    rows: list[RowT]  # oldest first
    has_more: bool
    next_before: int | None

    def fields(self) -> dict[str, object]:
        return {"has_more": self.has_more, "next_before": self.next_before}


def cursor_page(rows: QuerySet[RowT], page: PageQuery) -> Page[RowT]:
    """The newest ``page.limit`` rows of ``rows`` with an id below ``page.before``; one extra
    row tells whether an older page exists without a second query."""
    limit = page.limit or min(page_size(), MAX_PAGE)
    if page.before is not None:
        rows = rows.filter(pk__lt=page.before)
    found = list(rows.order_by("-pk")[: limit + 1])
    has_more = len(found) > limit
    found = found[:limit]
    found.reverse()
    return Page(rows=found, has_more=has_more, next_before=found[0].pk if has_more else None)
