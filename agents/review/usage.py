"""Tokens and cost of model calls per day, the workspace's monthly budget, and the chart.

``check_budget(workspace)`` is what the turn engine calls before it runs a turn.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

from django.db.models import Count, F, Sum
from django.db.models.functions import Coalesce, TruncDate
from django.utils import timezone

from agents.models import ModelCall
from agents.review.models import ReviewSettings
from agents.review.selectors import ReviewScope
from collab.workspaces.models import Workspace

DIMENSIONS = {  # the first is the default
    "model": ("model", "model"),
    "agent": ("agent_id", "agent__name"),
    "person": ("turn__requested_by_id", "turn__requested_by__username"),
    "workspace": ("agent__workspace_id", "agent__workspace__name"),
}
PALETTE = ["#6b5bd6", "#2f9e77", "#d9822b", "#c2385a", "#3b82c4", "#8a8a8a"]
TOP_SERIES = 5


@dataclass(frozen=True)
class UsageRow:
    day: date
    key: Any
    label: str
    calls: int
    tokens_in: int
    tokens_out: int
    cost: Decimal


def usage_by_day(
    *, scope: ReviewScope, since: date, until: date, by: str = "model"
) -> list[UsageRow]:
    """One row per day and value of ``by`` (workspace, person, agent or model), oldest first."""
    key_field, label_field = DIMENSIONS[by]
    start = datetime.combine(since, time.min, tzinfo=UTC)
    end = datetime.combine(until + timedelta(days=1), time.min, tzinfo=UTC)
    calls = ModelCall.objects.filter(created_at__gte=start, created_at__lt=end)
    if scope.workspace is not None:
        calls = calls.filter(agent__workspace=scope.workspace)
    rows = (
        calls.annotate(
            day=TruncDate("created_at", tzinfo=UTC), key=F(key_field), label=F(label_field)
        )
        .values("day", "key", "label")
        .annotate(
            calls=Count("id"),
            tokens_in=Coalesce(Sum("tokens_in"), 0),
            tokens_out=Coalesce(Sum("tokens_out"), 0),
            cost=Coalesce(Sum("cost"), Decimal(0)),
        )
        .order_by("day", "key")
    )
    return [
        UsageRow(
            day=row["day"],
            key=row["key"],
            label=str(row["label"]) if row["label"] not in (None, "") else "(none)",
            calls=row["calls"],
            tokens_in=row["tokens_in"],
            tokens_out=row["tokens_out"],
            cost=Decimal(row["cost"]),
        )
        for row in rows
    ]


@dataclass(frozen=True)
class UsageTotal:
    label: str
    calls: int
    tokens_in: int
    tokens_out: int
    cost: Decimal


def totals_by_key(rows: list[UsageRow]) -> list[UsageTotal]:
    sums: dict[str, list[Any]] = {}
    for row in rows:
        entry = sums.setdefault(row.label, [0, 0, 0, Decimal(0)])
        entry[0] += row.calls
        entry[1] += row.tokens_in
        entry[2] += row.tokens_out
        entry[3] += row.cost
    totals = [UsageTotal(label, *values) for label, values in sums.items()]
    return sorted(totals, key=lambda t: (-t.cost, -(t.tokens_in + t.tokens_out), t.label))


# --- the chart (server-rendered SVG: no script, no CDN) ---------------------------------------


@dataclass(frozen=True)
class Bar:
    x: float
    y: float
    width: float
    height: float
    colour: str
    title: str


@dataclass(frozen=True)
class Chart:
    width: int
    height: int
    bars: list[Bar]
    legend: list[tuple[str, str]]
    ticks: list[tuple[float, str]]
    day_labels: list[tuple[float, str]]
    metric: str


def usage_chart(rows: list[UsageRow], *, since: date, until: date, metric: str = "cost") -> Chart:
    """Stacked bars per day; the top five series by total, the rest as "other"."""
    width, height, left, bottom, top = 720, 240, 56, 24, 8
    days = [since + timedelta(days=i) for i in range((until - since).days + 1)]

    def value(row: UsageRow) -> float:
        if metric == "tokens":
            return float(row.tokens_in + row.tokens_out)
        return float(row.cost)

    totals: dict[str, float] = defaultdict(float)
    for row in rows:
        totals[row.label] += value(row)
    top_labels = [label for label, _ in sorted(totals.items(), key=lambda i: -i[1])][:TOP_SERIES]
    colours = {label: PALETTE[i] for i, label in enumerate(top_labels)}
    per_day: dict[date, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for row in rows:
        label = row.label if row.label in colours else "other"
        per_day[row.day][label] += value(row)
    peak = max((sum(v.values()) for v in per_day.values()), default=0.0) or 1.0
    plot_w, plot_h = width - left - 8, height - bottom - top
    slot = plot_w / max(len(days), 1)
    bars: list[Bar] = []
    for i, day in enumerate(days):
        y: float = top + plot_h
        for label in [*top_labels, "other"]:
            amount = per_day.get(day, {}).get(label, 0.0)
            if amount <= 0:
                continue
            h = plot_h * amount / peak
            y -= h
            shown = f"{amount:,.0f} tokens" if metric == "tokens" else f"{amount:,.4f}"
            bars.append(
                Bar(
                    x=round(left + i * slot + slot * 0.1, 2),
                    y=round(y, 2),
                    width=round(slot * 0.8, 2),
                    height=round(h, 2),
                    colour=colours.get(label, PALETTE[-1]),
                    title=f"{day:%Y-%m-%d} {label}: {shown}",
                )
            )
    ticks = [
        (
            round(top + plot_h - plot_h * f, 2),
            f"{peak * f:,.0f}" if metric == "tokens" else f"{peak * f:,.2f}",
        )
        for f in (0.0, 0.5, 1.0)
    ]
    step = max(1, len(days) // 8)
    day_labels = [
        (round(left + i * slot + slot / 2, 2), f"{day:%m-%d}")
        for i, day in enumerate(days)
        if i % step == 0
    ]
    legend = [(colours[label], label) for label in top_labels]
    if any(row.label not in colours for row in rows):
        legend.append((PALETTE[-1], "other"))
    return Chart(width, height, bars, legend, ticks, day_labels, metric)


# --- budget ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class BudgetStatus:
    spent: Decimal
    limit: Decimal | None
    warn_at_percent: int
    hard_stop: bool

    @property
    def percent(self) -> float | None:
        if self.limit is None or self.limit <= 0:
            return None if self.limit is None else 100.0
        return float(self.spent / self.limit * 100)

    @property
    def state(self) -> str:
        """ "none" (no budget), "ok", "warning" or "exceeded"."""
        if self.limit is None:
            return "none"
        if self.spent >= self.limit:
            return "exceeded"
        percent = self.percent or 0.0
        return "warning" if percent >= self.warn_at_percent else "ok"

    @property
    def blocked(self) -> bool:
        """True when agents must not start another turn in this workspace."""
        return self.hard_stop and self.state == "exceeded"

    @property
    def message(self) -> str:
        if self.state == "exceeded":
            return f"This workspace spent its monthly model budget ({self.spent} of {self.limit})."
        if self.state == "warning":
            return f"This workspace spent {self.percent:.0f}% of its monthly model budget."
        return ""


def month_start(now: datetime | None = None) -> datetime:
    now = (now or timezone.now()).astimezone(UTC)
    return datetime(now.year, now.month, 1, tzinfo=UTC)


def spent_this_month(workspace: Workspace | int) -> Decimal:
    workspace_id = workspace if isinstance(workspace, int) else workspace.pk
    total = ModelCall.objects.filter(
        agent__workspace_id=workspace_id, created_at__gte=month_start()
    ).aggregate(total=Sum("cost"))["total"]
    return Decimal(total or 0)


def check_budget(workspace: Workspace | int) -> BudgetStatus:
    """The workspace's spend this calendar month (UTC) against its budget. Two small queries;
    the turn engine refuses to run a turn when ``.blocked``."""
    workspace_id = workspace if isinstance(workspace, int) else workspace.pk
    found = ReviewSettings.objects.filter(workspace_id=workspace_id).first()
    if found is None or found.monthly_budget is None:
        return BudgetStatus(Decimal(0), None, 80, False)
    return BudgetStatus(
        spent=spent_this_month(workspace_id),
        limit=found.monthly_budget,
        warn_at_percent=found.warn_at_percent,
        hard_stop=found.hard_stop,
    )
