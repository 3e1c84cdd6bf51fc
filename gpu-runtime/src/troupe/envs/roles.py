"""`environments[].roles`: role names mapped to actors, so one policy can play several roles (self-play: X and O
are one model, one set of weights, one update over both roles' tokens).

Inside an environment everything is keyed by role: the round spec and the game seats name roles, each episode keeps
a token view, reward and advantage per role, and messages (transcripts) carry the role as their speaker. Each role
samples with its actor's engine, tokenizer and sampling settings. Without `roles` each actor is its own role (the
identity map), so an environment without them behaves exactly as before.

The kinds that play roles are listed here (ROLE_KINDS); the others are refused by field (spec/role_rules.py).

A role exchange (`RoleExchange`, CORY's pioneer and observer) changes which actor plays which role between steps:
the map of step s is computed here from the spec's, never by a branch in the loop (algorithms/learners/cory.py
applies it before each step's rollout).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping

# Kinds whose turns are named by a round spec or by game seats: a role is a name in them.
ROLE_KINDS = ("collaborative", "adversarial", "parallel", "game")


def role_map(env_spec: Mapping[str, Any]) -> dict[str, str]:
    """role -> actor: the spec's `roles`, or each actor as its own role."""
    roles = env_spec.get("roles")
    return dict(roles) if roles else {a: a for a in env_spec["actors"]}


def player_names(env_spec: Mapping[str, Any]) -> list[str]:
    """The names turns and seats refer to: the roles when given, else the actors (in spec order)."""
    return list(role_map(env_spec))


def roles_of(env: Any) -> dict[str, str]:
    """role -> actor of a built environment (an environment without roles: each actor its own)."""
    mapped = getattr(env, "role_actor", None)
    return dict(mapped) if mapped else {a: a for a in env.actors}


def roles_played_by(env: Any, actor: str) -> list[str]:
    """The roles `actor` plays in `env`, in the environment's order."""
    return [r for r, a in roles_of(env).items() if a == actor]


@dataclass(frozen=True)
class RoleExchange:
    """Two roles whose actors trade places every `every` steps (CORY's pioneer and observer). Steps count from 1:
    steps 1..every are played as `environments[].roles` maps them, the next `every` swapped, and so on."""

    roles: tuple[str, str]
    every: int

    def swapped(self, step: int) -> bool:
        return ((step - 1) // self.every) % 2 == 1

    def map_at(self, mapped: Mapping[str, str], step: int) -> dict[str, str]:
        """role -> actor for `step`, from the spec's map (the roles keep their order: round specs and seats read it)."""
        out = dict(mapped)
        if self.swapped(step):
            a, b = self.roles
            out[a], out[b] = mapped[b], mapped[a]
        return out


def play_roles_at(env: Any, exchange: RoleExchange, step: int) -> None:
    """Before `step` is rolled out: the environment's roles played by the actors the exchange gives that step."""
    env.role_actor = exchange.map_at(role_map(env.spec), step)


def as_played(env: Any) -> Any:
    """A copy of a built environment that keeps today's role -> actor map, so a step's episodes are read (metrics,
    transcripts) with the roles they were played with after the environment's map has moved on."""
    return replace(env, role_actor=dict(roles_of(env)))
