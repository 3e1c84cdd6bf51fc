"""The environment protocol and the registries by name (issue #26): every kind the RunSpec schema names has a
builder, every reward source kind a binder, every game a `GameKind`; the rollout phases call only the protocol
(a kind registered here, unknown to rollout/, flows through them); rollout/ never asks an environment's type."""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import pytest

from troupe.envs.environment_kinds import ENVIRONMENT_KINDS, build_any_environment
from troupe.envs.games.environment import game_issues
from troupe.envs.games.registry import GAME_KINDS
from troupe.envs.protocol import EnvironmentKind, Players, StepShares
from troupe.rewards.binding import REWARD_SOURCES, bind_rewards
from troupe.rollout.collect import roll_out_step, score_step

SCHEMA = json.loads(resources.files("troupe").joinpath("schema", "runspec.v1.schema.json").read_text(encoding="utf-8"))
SRC = Path(__file__).resolve().parents[1] / "src" / "troupe"


def test_every_environment_kind_of_the_schema_has_a_builder_and_no_other() -> None:
    kinds = SCHEMA["properties"]["environments"]["items"]["properties"]["kind"]["enum"]
    assert sorted(ENVIRONMENT_KINDS) == sorted(kinds)


def test_every_reward_source_kind_of_the_schema_has_a_binder_and_no_other() -> None:
    sources = SCHEMA["properties"]["rewards"]["items"]["properties"]["source"]["oneOf"]
    assert sorted(REWARD_SOURCES) == sorted(s["properties"]["kind"]["const"] for s in sources)


def test_games_registry_names_the_board_games_then_chess() -> None:
    assert list(GAME_KINDS) == ["tic_tac_toe", "connect_four", "chess"]
    issues = dict(game_issues({"name": "g", "actors": ["a"], "game": {"name": "go"}}, 3, pettingzoo=True, chess=True))
    assert issues == {"environments.3.game.name": 'unknown game "go" (known: tic_tac_toe, connect_four, chess)'}
    missing = dict(game_issues({"name": "g", "actors": ["a"], "game": {"name": "chess"}}, 0, pettingzoo=True, chess=False))
    assert list(missing) == ["environments.0.game.name"] and "chess.js" in missing["environments.0.game.name"]
    board = dict(game_issues({"name": "g", "actors": ["a"], "game": {"name": "connect_four"}}, 1, pettingzoo=False, chess=True))
    assert list(board) == ["environments.1.kind"] and "PettingZoo" in board["environments.1.kind"]


def test_an_unregistered_kind_and_source_are_refused_with_their_path() -> None:
    with pytest.raises(ValueError, match=r'environments\.2\.kind: no builder for "nope"'):
        build_any_environment({"kind": "nope"}, 2, {}, {}, None, {}, Path("."))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=r'rewards\.0\.source\.kind: no binder for "nope"'):
        bind_rewards({"rewards": [{"name": "r", "source": {"kind": "nope"}}]}, Path("."), {}, None)  # type: ignore[arg-type]


def test_rollout_never_asks_an_environments_type() -> None:
    """No isinstance/type() test in rollout/ names an environment class (the protocol answers instead)."""
    offenders = []
    for path in sorted((SRC / "rollout").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in ("isinstance", "type"):
                if "Environment" in ast.unparse(node):
                    offenders.append(f"{path.name}:{node.lineno}: {ast.unparse(node)}")
    assert offenders == []


# -- a kind rollout/ has never heard of: counts its rows, scores each group by its row index


@dataclass
class Counted:
    env: "CountingEnvironment"
    rows: list[int]
    scored: list[float] = field(default_factory=list)

    def score(self, players: Players) -> None:
        self.scored = [float(r) for r in self.rows for _ in range(players.group_size)]

    def add_to(self, step: StepShares) -> None:
        step.add_conversations(self.env, self.rows, [])


@dataclass
class CountingEnvironment:
    index: int
    spec: dict[str, Any]
    sampler: Any = None
    notes: list[str] = field(default_factory=list)
    drawn: int = 0

    @property
    def name(self) -> str:
        return self.spec["name"]

    @property
    def actors(self) -> list[str]:
        return ["a"]

    def bind(self, handles: dict[str, Any], log: Any = None) -> None: ...

    def close(self) -> None: ...

    def roll_out(self, players: Players, n_prompts: int, step: int, seconds: dict[str, float]) -> Counted:
        rows = list(range(self.drawn, self.drawn + n_prompts))
        self.drawn += n_prompts
        seconds["a"] = seconds.get("a", 0.0) + 0.5
        return Counted(self, rows)


def test_a_new_kind_flows_through_the_rollout_phases_by_the_protocol_alone() -> None:
    envs = [CountingEnvironment(0, {"name": "x"}), None, CountingEnvironment(2, {"name": "y"})]
    assert isinstance(envs[0], EnvironmentKind)
    players = Players({}, {}, seed=7, group_size=3, overlong={"mode": "off"})
    collected, shares = roll_out_step(envs, [2, 5, 0], players, step=1)
    assert [c.row_indices for c in collected.conversations] == [[0, 1]]  # None and 0-prompt environments draw nothing
    assert collected.parts == {} and collected.rollout_seconds == {"a": 0.5}
    assert score_step(collected, shares, players, {"enabled": True, "maxRounds": 2}) == {}
    assert [s.scored for s in shares] == [[0.0, 0.0, 0.0, 1.0, 1.0, 1.0]]  # type: ignore[attr-defined]
