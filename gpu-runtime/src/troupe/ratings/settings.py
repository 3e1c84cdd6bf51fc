"""`trainer.ratings` (contracts RatingsSpec) with its defaults: absent means on, at every checkpoint.

The opponent names and the defaults are read from the RunSpec's JSON Schema (exported from the contracts), so the
runtime, the RunSpec and the web name the same fixed opponents; fixed_players.py registers one policy per name.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..spec.runspec_types import TrainerRatings
from ..spec.schema import runspec_schema
from .fixed_players import ANCHOR, FIXED_PLAYERS

_SCHEMA = runspec_schema()["properties"]["trainer"]["properties"]["ratings"]["properties"]
RATING_OPPONENTS: tuple[str, ...] = tuple(_SCHEMA["opponents"]["items"]["enum"])
DEFAULTS: dict[str, Any] = {name: field["default"] for name, field in _SCHEMA.items()}

missing = [name for name in RATING_OPPONENTS if name not in FIXED_PLAYERS]
if missing:
    raise ImportError(f"the contracts name fixed opponents with no policy in ratings/fixed_players.py: {', '.join(missing)}")


@dataclass(frozen=True)
class RatingSettings:
    games_per_pair: int
    opponents: tuple[str, ...]  # the anchor first, always present
    snapshots: int

    @classmethod
    def from_section(cls, ratings: TrainerRatings | None) -> RatingSettings:
        """From the typed `trainer.ratings` (None: absent, the schema's defaults)."""
        given = ratings if ratings is not None else TrainerRatings.from_dict(DEFAULTS)
        unknown = [o for o in given.opponents if o not in RATING_OPPONENTS]
        if unknown:  # the JSON Schema refuses these first; a library caller's dict gets the same field path
            raise ValueError(f"trainer.ratings.opponents: unknown opponent {unknown[0]!r} (known: {', '.join(RATING_OPPONENTS)})")
        ordered = (ANCHOR, *dict.fromkeys(o for o in given.opponents if o != ANCHOR))
        return cls(int(given.games_per_pair), ordered, int(given.snapshots))

    @classmethod
    def from_trainer(cls, trainer: Mapping[str, Any]) -> RatingSettings:
        """From the `trainer` section's JSON document (its `ratings` read into the typed section, defaults filled)."""
        ratings = trainer.get("ratings")
        return cls.from_section(TrainerRatings.from_dict({**DEFAULTS, **ratings}) if ratings else None)

    @property
    def on(self) -> bool:
        return self.games_per_pair > 0
