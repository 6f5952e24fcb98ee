"""Is the Assistant useful on a fresh install? Everyday requests written blind, judged by rules.

    python bench/usefulness.py                 # the dev split, each request's verdict shown
    python bench/usefulness.py --split test    # the frozen test split: figures only
    python bench/usefulness.py --split test --trivial-only   # what the rules let through

The corpus (bench/data/usefulness/, BLIND_CORPORA.md) was written by a helper that never saw the
code: 12 tasks (6 of a kind Collab knows, 6 of none), 61 requests ("draft the agenda", "tl;dr
pls", "3 risks if we just renew", "who's in the meeting?"), each with the shape a useful answer
has and the task's values it must carry. The test half is scored, never read: only its figures
are printed.

Embedded mode on a throwaway SQLite file, exactly what ``make run`` serves with no model
configured: the workspace's own Assistant, its default policy, no model profile. Each request
gets a task of its own (title, goal, document, chat, the task's date), is posted by its author
and run as the worker runs it (``runner.run_turn``); its reply, the new text of its document
change and whether it asked are judged by ``agents.evaluation.usefulness.judge``. Beside it the
trivial answers of ``usefulness.TRIVIAL`` (a disclaimer, the goal echoed, the task pasted back,
a question) are judged by the same rules.

Prints useful / total overall and per shape, drafts with nothing invented, replies with filler,
the whole reply's time (post to applied) p50 and p99, and ``uptime`` before and after. Figures
are printed, never asserted (bench/README.md).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "bench" / "data"


def load(split: str) -> list[dict[str, Any]]:
    """The split's tasks, after checking the file is the frozen one."""
    name = f"usefulness/{split}.jsonl"
    sums = dict(
        reversed(line.split()) for line in (DATA / "BLIND_SHA256SUMS").read_text().splitlines()
    )
    raw = (DATA / name).read_bytes()
    if hashlib.sha256(raw).hexdigest() != sums[name]:
        raise SystemExit(f"{name} is not the frozen corpus (BLIND_SHA256SUMS)")
    return [json.loads(line) for line in raw.decode().splitlines() if line.strip()]


def _setup(data_dir: str) -> None:
    from _embedded import setup  # bench/_embedded.py, beside this script

    setup(data_dir)


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def _user(name: str) -> Any:
    from django.contrib.auth import get_user_model

    username = "".join(c for c in name.lower() if c.isalnum() or c in "-_.") or "someone"
    user, _ = get_user_model().objects.get_or_create(
        username=username, defaults={"first_name": name}
    )
    return user


def run_request(task_data: dict[str, Any], request: dict[str, Any], n: int) -> tuple[Any, float]:
    """One request on a task of its own, through the real stack: (Answer, seconds)."""
    from agents.engine import runner
    from agents.evaluation.usefulness import Answer
    from agents.models import Action, Agent, Turn
    from collab.tasks.models import Document, Message
    from collab.tasks.services import create_task, post_message
    from collab.workspaces.models import Membership
    from collab.workspaces.services import create_workspace

    people = [request["author"], *(m["author"] for m in task_data.get("chat", ()))]
    owner = _user(people[0])
    workspace = create_workspace(owner=owner, name=f"{task_data['task_id']} {n}")
    for name in dict.fromkeys(people[1:]):
        user = _user(name)
        if user != owner:
            Membership.objects.get_or_create(workspace=workspace, user=user, role="editor")
    agent = Agent.objects.get(workspace=workspace)
    member = {
        m.user_id: m
        for m in Membership.objects.select_related("workspace", "user").filter(workspace=workspace)
    }
    task = create_task(
        membership=member[owner.pk], title=task_data["title"], goal=task_data.get("goal", "")
    )
    Document.objects.filter(task=task).update(text=task_data.get("document", ""))
    for line in task_data.get("chat", ()):
        post_message(membership=member[_user(line["author"]).pk], task=task, body=line["text"])
    Turn.objects.filter(task=task).delete()  # the setup's chat asks nobody
    day = datetime.fromisoformat(task_data["created"]).replace(hour=10, tzinfo=UTC)
    started = time.monotonic()
    posted = post_message(
        membership=member[_user(request["author"]).pk], task=task, body=request["text"]
    ).message
    turn = Turn.objects.filter(task=task, agent=agent).order_by("-id").first()
    if turn is None:
        return Answer(), time.monotonic() - started
    # Relative dates resolve against the task's own date, as they would have on the day.
    Turn.objects.filter(pk=turn.pk).update(created_at=day)
    runner.run_turn(turn_id=turn.pk)
    seconds = time.monotonic() - started
    actions = list(Action.objects.filter(turn=turn))
    replies = Message.objects.filter(task=task, kind=Message.Kind.AGENT, pk__gt=posted.pk)
    change = "\n".join(
        str(a.payload.get("replace", "")) for a in actions if a.kind in ("suggest", "edit")
    )
    asked = any(a.kind == "ask" for a in actions)
    return Answer(reply="\n".join(m.body for m in replies), change=change, asked=asked), seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--split", choices=("dev", "test", "dev2", "test2"), default="dev")
    parser.add_argument("--trivial-only", action="store_true", help="only the trivial answers")
    parser.add_argument("--out", type=Path, help="write the figures as JSON here")
    args = parser.parse_args()
    sys.path.insert(0, str(ROOT))
    from agents.evaluation.usefulness import TRIVIAL, Tally, judge

    tasks = load(args.split)
    cases = [(t, r) for t in tasks for r in t["requests"]]
    show = args.split.startswith("dev")  # the test halves are scored, never shown
    before = _uptime()
    print(f"{args.split}: {len(tasks)} tasks, {len(cases)} requests;  before: {before}")
    results: dict[str, Tally] = {}
    seconds: list[float] = []
    if not args.trivial_only:
        from tqdm import tqdm

        with tempfile.TemporaryDirectory(prefix="collab-bench-useful-") as data_dir:
            _setup(data_dir)
            from agents.engine import warmup

            warmup.warm_embedded_model()
            product = Tally()
            for n, (task, request) in enumerate(tqdm(cases, desc="requests", disable=show)):
                answer, took = run_request(task, request, n)
                seconds.append(took)
                verdict = judge(task, request, answer)
                product.add(request["expect"]["shape"], verdict)
                if show:
                    said = answer.reply + (" || change: " + answer.change if answer.change else "")
                    print(
                        f"{'ok' if verdict.useful else '--'} {request['id']:8} {took:5.2f}s "
                        f"{request['text'][:60]!r}\n    -> {said[:300]!r}"
                        + ("" if verdict.useful else f"\n    ({'; '.join(verdict.reasons)})")
                    )
            results["default (embedded)"] = product
    for name, answer_for in TRIVIAL.items():
        trivial = Tally()
        for task, request in cases:
            trivial.add(request["expect"]["shape"], judge(task, request, answer_for(task, request)))
        results[name] = trivial
    after = _uptime()
    print()
    figures: dict[str, Any] = {"split": args.split, "requests": len(cases), "policies": {}}
    for name, t in results.items():
        clean, drafts = t.drafts_clean()
        shapes = "  ".join(f"{s} {g}/{n}" for s, (g, n) in sorted(t.by_shape().items()))
        print(
            f"{name:22} useful {t.useful():.2f} ({sum(v.useful for _, v in t.verdicts)}/{t.n})"
            f"   drafts nothing invented {clean}/{drafts}   filler {t.filler()}\n    {shapes}"
        )
        figures["policies"][name] = {
            "useful": round(t.useful(), 3),
            "by_shape": t.by_shape(),
            "drafts_nothing_invented": [clean, drafts],
            "filler": t.filler(),
        }
    if seconds:
        ordered = sorted(seconds)
        p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
        print(f"whole reply: p50 {statistics.median(seconds):.2f} s   p99 {p99:.2f} s")
        figures["reply_seconds"] = {"p50": statistics.median(seconds), "p99": p99}
    print("after: ", after)
    figures["load"] = {"before": before, "after": after}
    if args.out:
        args.out.write_text(json.dumps(figures, indent=2) + "\n")


if __name__ == "__main__":
    main()
