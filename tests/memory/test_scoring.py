"""One score formula: the SQL the database runs is built from ``scoring`` and computes what
its Python function does."""

from __future__ import annotations

import pytest
from django.db import connection

from agents.memory import scoring


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("confidence", "days"), [(0.0, 0.0), (0.6, 30.0), (1.0, 365.0), (0.3, 7.5)]
)
def test_the_sql_weight_is_the_python_weight(confidence, days):
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {scoring.weight_sql('%s', '%s')}", [confidence, days])
        (in_sql,) = cursor.fetchone()

    assert float(in_sql) == pytest.approx(scoring.weight(confidence, days), abs=1e-9)


def test_the_weight_halves_recency_every_half_life_and_stays_between_a_quarter_and_one():
    assert scoring.weight(1.0, 0.0) == 1.0
    assert scoring.weight(0.0, 10_000.0) == pytest.approx(0.25)
    assert scoring.weight(0.6, scoring.RECENCY_HALF_LIFE_DAYS) == pytest.approx(0.8 * 0.75)
