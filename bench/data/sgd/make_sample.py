"""Build the vendored Schema-Guided Dialogue sample (bench/data/sgd/*.json) from a checkout of
google-research-datasets/dstc8-schema-guided-dialogue (CC BY-SA 4.0; see ./README.md).

    python bench/data/sgd/make_sample.py /path/to/dstc8-schema-guided-dialogue

The sample is fixed: dialogue files are read in name order, dialogues shuffled with a fixed seed,
and the first N of each split kept (test 240, dev 120, train 120). What is kept of a dialogue:
its services, and per turn the speaker, the utterance and each frame's service, acts
(act, slot, values, canonical values), slot spans and the user's active intent. The schemas are
kept for the services the sample uses (slot descriptions, categorical values, intents with their
required and optional slots). Nothing is re-worded.
"""

from __future__ import annotations

import json
import random
import sys
from pathlib import Path
from typing import Any

SIZES = {"test": 240, "dev": 120, "train": 120}
SEED = 20261204
HERE = Path(__file__).resolve().parent


def _turn(raw: dict[str, Any]) -> dict[str, Any]:
    frames = []
    for frame in raw["frames"]:
        kept: dict[str, Any] = {
            "service": frame["service"],
            "actions": [
                {
                    "act": a["act"],
                    "slot": a.get("slot", ""),
                    "values": a.get("values", []),
                    "canonical_values": a.get("canonical_values", []),
                }
                for a in frame.get("actions", [])
            ],
            "slots": [
                {"slot": s["slot"], "start": s["start"], "end": s["exclusive_end"]}
                for s in frame.get("slots", [])
            ],
        }
        if "state" in frame:
            kept["active_intent"] = frame["state"].get("active_intent", "NONE")
        frames.append(kept)
    return {"speaker": raw["speaker"], "utterance": raw["utterance"], "frames": frames}


def build(source: Path, split: str, size: int) -> dict[str, Any]:
    dialogues: list[dict[str, Any]] = []
    files = sorted((source / split).glob("dialogues_*.json"))
    for path in files:
        dialogues.extend(json.loads(path.read_text()))
    random.Random(SEED).shuffle(dialogues)
    chosen = sorted(dialogues[:size], key=lambda d: d["dialogue_id"])
    services = sorted({s for d in chosen for s in d["services"]})
    schema = [s for s in json.loads((source / split / "schema.json").read_text())]
    return {
        "split": split,
        "source": "google-research-datasets/dstc8-schema-guided-dialogue",
        "licence": "CC BY-SA 4.0",
        "files": [p.name for p in files],
        "schemas": [s for s in schema if s["service_name"] in services],
        "dialogues": [
            {
                "dialogue_id": d["dialogue_id"],
                "services": d["services"],
                "turns": [_turn(t) for t in d["turns"]],
            }
            for d in chosen
        ],
    }


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__)
        return 2
    source = Path(argv[1])
    for split, size in SIZES.items():
        data = build(source, split, size)
        out = HERE / f"{split}.json"
        out.write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")) + "\n")
        print(f"{split}: {len(data['dialogues'])} dialogues, {len(data['schemas'])} services")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
