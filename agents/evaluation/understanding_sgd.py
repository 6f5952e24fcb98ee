"""The Schema-Guided Dialogue half of the understanding measure (agents/evaluation/
understanding.py): a fixed sample of SGD (bench/data/sgd/, CC BY-SA 4.0), read by the product's
reader with each service's slots and their schema descriptions (no aliases made for SGD), scored
against the annotated INFORM acts; the ask decision at each system turn scored against the
annotated REQUEST acts for the active intent's required slots. Pure Python.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from agents.evaluation.understanding import (
    TRIVIAL,
    AskTally,
    Reader,
    Tally,
    answered,
    read,
    same_value,
)
from agents.policies.base import SlotSpec, SlotType
from agents.policies.registry import get_policy
from agents.policies.situation import build_situation
from agents.policies.templates import TaskTemplate

# SGD's dialogues are set in early March 2019: "the 8th" is annotated 2019-03-08.
SGD_TODAY = date(2019, 3, 1)

# --- SGD ------------------------------------------------------------------------------------

_PLACE = re.compile(r"city|location|destination|origin|area|address|from_|to_|where")
_PERSON = re.compile(r"recipient|receiver|contact_name|^name$|stylist")
_MONEY = re.compile(r"price(?!_range)|fare|amount|balance|cost|rent")
_NUMBER = re.compile(r"number_of|^count|num_|_count$|^rating$|party_size|passengers|seats")


def sgd_slot_type(slot: Mapping[str, Any]) -> SlotType:
    """The reader's type for an SGD slot, from its name and categorical values only."""
    name = str(slot["name"])
    values = [str(v) for v in slot.get("possible_values", [])]
    if "date" in name:
        return "date"
    if slot.get("is_categorical") and values:
        return "number" if all(v.isdigit() for v in values) else "choice"
    if _MONEY.search(name):
        return "money"
    if _NUMBER.search(name):
        return "number"
    if _PERSON.search(name):
        return "person"
    if _PLACE.search(name):
        return "place"
    return "text"


def sgd_template(service: Mapping[str, Any], intent: str | None = None) -> TaskTemplate:
    """A template for one SGD service: its slots (or the intent's, required ones required), each
    labelled by its name and described by its schema description. No aliases, no cues."""
    intents = {i["name"]: i for i in service["intents"]}
    chosen = intents.get(intent or "")
    wanted: dict[str, bool] | None = None
    if chosen is not None:
        wanted = {s: True for s in chosen["required_slots"]}
        wanted.update({s: False for s in chosen.get("optional_slots", {}) if s not in wanted})
    specs = []
    for slot in service["slots"]:
        if wanted is not None and slot["name"] not in wanted:
            continue
        kind = sgd_slot_type(slot)
        choices: tuple[str, ...] = ()
        if kind == "choice":
            choices = tuple(str(v) for v in slot["possible_values"])
        specs.append(
            SlotSpec(
                name=slot["name"],
                type=kind,
                required=bool(wanted.get(slot["name"], False)) if wanted is not None else False,
                label=str(slot["name"]).replace("_", " "),
                description=str(slot["description"]),
                choices=choices,
            )
        )
    return TaskTemplate(
        kind=str(service["service_name"]),
        title=str(service["service_name"]),
        description=str(service.get("description", "")),
        slots=tuple(specs),
    )


def _sgd_gold(frame: Mapping[str, Any]) -> dict[str, list[str]]:
    gold: dict[str, list[str]] = defaultdict(list)
    for action in frame["actions"]:
        if action["act"] == "INFORM" and action["slot"] and action["values"]:
            gold[action["slot"]].extend(action["values"])
            gold[action["slot"]].extend(action["canonical_values"])
    return dict(gold)


@dataclass
class SgdReport:
    by_type: dict[str, Tally]
    ask: dict[str, AskTally]
    read_ms: list[float]
    misreadings: Counter[tuple[str, str]]


def measure_sgd(
    data: Mapping[str, Any], *, policy: str = "ask_when_blocked", reader: Reader = build_situation
) -> SgdReport:
    """Stated values per slot type over every user turn, and the ask decision at every system
    turn, for one split of the vendored SGD sample."""
    services = {s["service_name"]: s for s in data["schemas"]}
    by_type: dict[str, Tally] = defaultdict(Tally)
    ask: dict[str, AskTally] = defaultdict(AskTally)
    read_ms: list[float] = []
    misreadings: Counter[tuple[str, str]] = Counter()
    decider = get_policy(policy)
    for dialogue in data["dialogues"]:
        said: list[str] = []
        intent: dict[str, str] = {}
        system_index = 0
        for turn in dialogue["turns"]:
            if turn["speaker"] == "USER":
                for frame in turn["frames"]:
                    service = services.get(frame["service"])
                    if service is None:
                        continue
                    if frame.get("active_intent", "NONE") != "NONE":
                        intent[frame["service"]] = frame["active_intent"]
                    template = sgd_template(service)
                    situation, ms = read(
                        reader=reader, request=turn["utterance"], template=template, today=SGD_TODAY
                    )
                    read_ms.append(ms)
                    gold = _sgd_gold(frame)
                    readings = answered(situation)
                    for spec in template.slots:
                        tally = by_type[spec.type]
                        if spec.name in gold:
                            if spec.name not in readings:
                                tally.missed += 1
                            elif same_value(spec.type, readings[spec.name][0], gold[spec.name]):
                                tally.right += 1
                            else:
                                tally.misread += 1
                                misreadings[(spec.type, "misread")] += 1
                        elif spec.name in readings:
                            tally.spurious += 1
                said.append(turn["utterance"])
                continue
            # A system turn: did it ask for a required slot of the active intent?
            if not said:
                continue
            for frame in turn["frames"]:
                service = services.get(frame["service"])
                name = intent.get(frame["service"])
                if service is None or name is None:
                    continue
                required = next(
                    (set(i["required_slots"]) for i in service["intents"] if i["name"] == name),
                    set(),
                )
                gold_ask = any(
                    a["act"] == "REQUEST" and a["slot"] in required for a in frame["actions"]
                )
                template = sgd_template(service, name)
                situation, _ = read(
                    reader=reader,
                    request=said[-1],
                    template=template,
                    today=SGD_TODAY,
                    chat=tuple(said[:-1]),
                )
                decision = decider.decide(situation)
                ask[policy].pairs.append((gold_ask, decision.action == "ask"))
                for trivial, rule in TRIVIAL.items():
                    ask[trivial].pairs.append((gold_ask, rule(system_index)))
            system_index += 1
            said.append(turn["utterance"])
    return SgdReport(dict(by_type), dict(ask), read_ms, misreadings)
