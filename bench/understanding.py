"""How well the reader understands text no generator of ours wrote (issue 26): the vendored
Schema-Guided Dialogue sample and the blind requests, per split, beside trivial policies.

    python bench/understanding.py                 # SGD train + dev, blind dev
    python bench/understanding.py --split test    # the held-out splits: run once, never tune
    python bench/understanding.py --json out.json

Prints stated-value precision / recall / F1 per slot type (SGD) and per source (blind), the ask
decision's MCC with its 95 % interval, over-asking, redundant questions and blocker recall,
values invented, and the reader's time per request (p50, p99). Figures, never asserts.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from agents.evaluation import understanding as u  # noqa: E402
from agents.evaluation import understanding_sgd  # noqa: E402

DATA = ROOT / "bench" / "data"


def _fmt(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, tuple):
        return f"[{value[0]:.2f}, {value[1]:.2f}]"
    if isinstance(value, float):
        return f"{value:.2f}"
    return str(value)


def _table(title: str, header: list[str], rows: list[list[Any]]) -> str:
    lines = [f"\n{title}", "| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_fmt(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def _ask_rows(ask: dict[str, u.AskTally]) -> list[list[Any]]:
    rows = []
    for name, tally in ask.items():
        s = tally.scores()
        rows.append(
            [
                name,
                s["n"],
                s["mcc"],
                s["mcc_interval"],
                s["over_asking"],
                s["asked"],
                s["redundant"],
                s["blocker_recall"],
            ]
        )
    return rows


ASK_HEADER = [
    "policy",
    "n",
    "ask MCC",
    "95 % interval",
    "over-asking",
    "asked",
    "redundant",
    "blocker recall",
]


def sgd(split: str, out: dict[str, Any]) -> None:
    data = json.loads((DATA / "sgd" / f"{split}.json").read_text())
    report = understanding_sgd.measure_sgd(data)
    rows = [
        [kind, *(t.scores()[k] for k in ("stated", "precision", "recall", "f1"))]
        for kind, t in sorted(report.by_type.items())
    ]
    typed = u.Tally()
    free = u.Tally()
    for kind, t in report.by_type.items():
        target = typed if kind in u.TYPED else free
        for k in ("right", "misread", "missed", "spurious"):
            setattr(target, k, getattr(target, k) + getattr(t, k))
    rows += [
        [
            "typed (date, number, money, choice)",
            *(typed.scores()[k] for k in ("stated", "precision", "recall", "f1")),
        ],
        [
            "free text (text, place, person)",
            *(free.scores()[k] for k in ("stated", "precision", "recall", "f1")),
        ],
    ]
    print(
        _table(
            f"SGD {split} ({len(data['dialogues'])} dialogues): stated values per slot type",
            ["slot type", "stated", "precision", "recall", "F1"],
            rows,
        )
    )
    print(
        _table(
            f"SGD {split}: ask at each system turn vs the annotated REQUEST of a required slot",
            ASK_HEADER,
            _ask_rows(report.ask),
        )
    )
    print(
        f"reader time per user turn: p50 {_fmt(u.median(report.read_ms))} ms, "
        f"p99 {_fmt(u.percentile(report.read_ms, 0.99))} ms"
    )
    out[f"sgd-{split}"] = {
        "by_type": {k: t.scores() for k, t in report.by_type.items()},
        "typed": typed.scores(),
        "free_text": free.scores(),
        "ask": {k: t.scores() for k, t in report.ask.items()},
        "read_ms_p50": u.median(report.read_ms),
    }


def blind(split: str, out: dict[str, Any]) -> None:
    path = DATA / "understanding" / f"{split}.jsonl"
    if not path.exists():
        print(f"\n(no blind corpus at {path.relative_to(ROOT)})")
        return
    items = u.load_jsonl(path)
    report = u.measure_blind(items)
    rows = [
        [src, *(t.scores()[k] for k in ("stated", "right", "misread", "missed"))]
        for src, t in sorted(report.by_source.items())
    ]
    rows.append(
        [
            "inferable (needs a calendar or an implication)",
            *(report.inferable.scores()[k] for k in ("stated", "right", "misread", "missed")),
        ]
    )
    print(
        _table(
            f"Blind requests {split} ({len(items)}): values by where they were stated",
            ["stated in", "values", "read right", "misread", "missed"],
            rows,
        )
    )
    print(
        f"inferable values read right and marked as a guess (not a fact): "
        f"{report.inferred_marked} of {report.inferable.right}"
    )
    print(
        f"values invented (read for a slot nobody gave): {report.invented} of "
        f"{report.unstated} unstated slots"
    )
    print(_table(f"Blind requests {split}: the ask decision", ASK_HEADER, _ask_rows(report.ask)))
    print(
        _table(
            f"Blind requests {split}: the default policy per category",
            ASK_HEADER,
            _ask_rows(report.by_category),
        )
    )
    common = ", ".join(f"{t} {w} ({s}): {n}" for (t, w, s), n in report.misreadings.most_common(6))
    print(f"most common misreadings: {common}")
    print(
        f"reader time per request: p50 {_fmt(u.median(report.read_ms))} ms, "
        f"p99 {_fmt(u.percentile(report.read_ms, 0.99))} ms"
    )
    out[f"blind-{split}"] = {
        "by_source": {k: t.scores() for k, t in report.by_source.items()},
        "inferable": report.inferable.scores(),
        "inferred_marked": report.inferred_marked,
        "invented": report.invented,
        "unstated": report.unstated,
        "ask": {k: t.scores() for k, t in report.ask.items()},
        "by_category": {k: t.scores() for k, t in report.by_category.items()},
        "read_ms_p50": u.median(report.read_ms),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--split",
        choices=["dev", "test"],
        default="dev",
        help="dev (with SGD train) while developing; test once, never to tune",
    )
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = parser.parse_args()
    print(f"load before: {os.getloadavg()[0]:.2f}")
    out: dict[str, Any] = {}
    for split in ["train", "dev"] if args.split == "dev" else ["test"]:
        sgd(split, out)
    blind(args.split, out)
    print(f"\nload after: {os.getloadavg()[0]:.2f}")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2, default=list))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
