"""Elo per checkpoint: at each checkpoint, each actor of a game environment plays rating games and every
player's rating is refitted over all games so far (elo.py), then reported as metrics.

Players (per game environment, one rating pool each):
    <actor>@<step>   a trainable actor's weights at that checkpoint; after its games a frozen copy is kept in host
                     memory (the newest `snapshots` per actor) and plays the later checkpoints' weights
    <actor>          a frozen actor (its weights never change)
    random, ...      the fixed opponents (fixed_players.py); `random` is the anchor, 1000

At a checkpoint every current player plays `gamesPerPair` games (sides alternating, X first) against each fixed
opponent, each kept snapshot (its own earlier weights and the other actors') and each other current player.

Metrics at the checkpoint's step (an actor in one game environment; in several, `elo/<environment>/...`):
    per actor:  elo/rating, elo/ci95 (1.96 standard errors), elo/games (games its current weights played)
    no actor:   elo/opponent/<fixed opponent> (the anchor's 1000 included)
An earlier checkpoint's reported rating stays as it was reported; the refit moves it as it plays more.

Rating games draw from their own generators and restore torch's and numpy's RNG states afterwards, so a run
with ratings trains exactly as the same run without them.
Games and snapshots live in memory: a resumed run starts its ratings afresh. Not played with several ranks yet.
"""

from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np
import torch

from ..engines.rollout.colocate import engine_of, sleep_for_training, wake_for_rollout
from ..engines.rollout.hf import HFEngine
from ..engines.rollout.sampling_copy import sampling_dtype_for
from ..envs.acting import ActingEnvironment
from ..envs.games.environment import GameEnvironment
from .elo import Game, fit_ratings
from .fixed_players import ANCHOR, FIXED_PLAYERS
from .match import FixedSide, ModelSide, Side, play_games
from .settings import RatingSettings
from ..spec.runspec_types import Trainer


@dataclass
class _Snapshot:
    key: str
    actor: str
    module: torch.nn.Module  # on the host between checkpoints


@dataclass
class RatingPool:
    """The players and every game of one game environment."""

    env: ActingEnvironment
    actors: list[str]  # its local actors (API actors are not rated: their weights are not ours to snapshot)
    games: list[Game] = field(default_factory=list)
    snapshots: dict[str, list[_Snapshot]] = field(default_factory=dict)

    @property
    def game_name(self) -> str:
        return str(self.env.impl.settings["name"])


def _seed(*parts: object) -> int:
    return int.from_bytes(hashlib.sha256(":".join(map(str, parts)).encode()).digest()[:8], "little")


def _pairings(current: list[Side], others: list[Side], games_per_pair: int) -> list[tuple[Side, Side]]:
    """Each current player against each other player, `games_per_pair` games, alternating who plays X; each
    pair of current players once."""
    out: list[tuple[Side, Side]] = []
    for k, mine in enumerate(current):
        for theirs in [*current[k + 1 :], *others]:
            out.extend((mine, theirs) if g % 2 == 0 else (theirs, mine) for g in range(games_per_pair))
    return out


class Rater:
    """Called once per checkpoint (train.py's `save`); does nothing for runs without a game environment."""

    def __init__(self, settings: RatingSettings, pools: list[RatingPool], actors: dict[str, Any], residency: Any, seed: int) -> None:
        """Each actor plays, and its snapshots are played, on the actor's own device."""
        self.settings, self.pools, self.actors = settings, pools, actors
        self.residency, self.seed = residency, seed

    @classmethod
    def for_run(
        cls, trainer: Trainer, seed: int, environments: list[Any], actors: dict[str, Any], residency: Any, distributed: bool, log: Callable[[str, str], Any]
    ) -> Rater:
        """From the typed `trainer` section (its `ratings` and checkpoint interval) and the run's seed."""
        settings = RatingSettings.from_section(trainer.ratings)
        pools = []
        if settings.on and trainer.checkpoint_every > 0:
            for env in environments:
                if isinstance(env, ActingEnvironment) and isinstance(env.impl, GameEnvironment):
                    local = [a for a in env.actors if a in actors]
                    if local:
                        pools.append(RatingPool(env, local))
        if pools and distributed:
            log("warning", "Elo ratings (trainer.ratings) are not played with several ranks yet: none are reported")
            pools = []
        return cls(settings, pools, actors, residency, seed)

    def at_checkpoint(self, step: int, events: Any, is_main: bool = True) -> None:
        if not self.pools:
            return
        names = [a for pool in self.pools for a in pool.actors]
        self.residency.for_rollout(names)
        wake_for_rollout(self.actors)
        torch_state, np_state = torch.get_rng_state(), np.random.get_state()
        on_cuda = any(self.actors[a].device.type == "cuda" for a in names)
        cuda_state = torch.cuda.get_rng_state_all() if on_cuda else None
        try:
            torch.manual_seed(_seed(self.seed, "ratings", step) % 2**63)
            for pool in self.pools:
                self._play(pool, step)
                if is_main:
                    self._report(pool, step, events)
                self._keep_snapshots(pool, step)
        finally:
            torch.set_rng_state(torch_state)
            np.random.set_state(np_state)
            if cuda_state is not None:
                torch.cuda.set_rng_state_all(cuda_state)
            sleep_for_training(self.actors)

    # -- players
    def _key(self, actor: str, step: int) -> str:
        return f"{actor}@{step}" if self.actors[actor].trainable else actor

    def _side(self, pool: RatingPool, key: str, actor: str, engine: Any) -> ModelSide:
        a = self.actors[actor]
        row = pool.env.dataset.rows[0] if pool.env.dataset.rows else {}
        return ModelSide(key, actor, engine, a.loaded.tokenizer, a.section.eval_sampling or a.section.sampling, pool.env.system_text(actor, row, 0))

    def _play(self, pool: RatingPool, step: int) -> None:
        current: list[Side] = [self._side(pool, self._key(a, step), a, engine_of(self.actors[a])) for a in pool.actors]
        snapshots = [s for kept in pool.snapshots.values() for s in kept]
        for s in snapshots:
            s.module.to(self.actors[s.actor].device)  # a snapshot plays where its actor does
        try:
            others: list[Side] = [FixedSide(name, FIXED_PLAYERS[name]) for name in self.settings.opponents]
            others += [self._side(pool, s.key, s.actor, self._snapshot_engine(s)) for s in snapshots]
            pairings = _pairings(current, others, self.settings.games_per_pair)
            rng = np.random.default_rng(_seed(self.seed, "ratings", pool.env.name, step))
            with torch.no_grad():
                scores = play_games(pool.game_name, pairings, rng, int(pool.env.spec["maxTurns"]))
        finally:
            for s in snapshots:
                s.module.to("cpu")
        pool.games.extend(Game(x.key, o.key, score) for (x, o), score in zip(pairings, scores))

    def _snapshot_engine(self, s: _Snapshot) -> HFEngine:
        actor = self.actors[s.actor]
        return HFEngine(s.module, actor.loaded.tokenizer, actor.device, sampling_dtype_for(actor))

    def _keep_snapshots(self, pool: RatingPool, step: int) -> None:
        if self.settings.snapshots == 0:
            return
        for actor in pool.actors:
            if not self.actors[actor].trainable:
                continue
            module = copy.deepcopy(self.actors[actor].loaded.model).to("cpu").eval()
            kept = pool.snapshots.setdefault(actor, [])
            kept.append(_Snapshot(self._key(actor, step), actor, module))
            del kept[: -self.settings.snapshots]

    # -- report
    def _prefix(self, pool: RatingPool, actor: str | None) -> str:
        several = sum(1 for p in self.pools if actor is None or actor in p.actors) > 1
        return f"elo/{pool.env.name}/" if several else "elo/"

    def _report(self, pool: RatingPool, step: int, events: Any) -> None:
        ratings = fit_ratings(pool.games, ANCHOR)
        for actor in pool.actors:
            r = ratings[self._key(actor, step)]
            p = self._prefix(pool, actor)
            events.metric(step, {f"{p}rating": r.rating, f"{p}ci95": r.ci95, f"{p}games": float(r.games)}, actor=actor)
        p = self._prefix(pool, None)
        events.metric(step, {f"{p}opponent/{name}": ratings[name].rating for name in self.settings.opponents if name in ratings})

