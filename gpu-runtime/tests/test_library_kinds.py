"""`from_spec` for every environment kind: a RunSpec loads into objects (one class per kind) and `.to_spec()`
gives the same RunSpec back, over the fixtures (the demos and the designer's outcome templates, exported from
packages/contracts) and specs of each acting kind as the runtime's own tests write them. "The same" is compared
both as written and after the schema's defaults are filled (what a run actually reads)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from runtime_helpers import demo_input

from troupe.library import (
    AdversarialEnvironment,
    CodeEnvironment,
    CollaborativeEnvironment,
    GameEnvironment,
    ParallelEnvironment,
    PythonEnvironment,
    RemoteEnvironment,
    SingleTurnEnvironment,
    ToolsEnvironment,
    from_spec,
)
from troupe.spec import validate_spec

FIXTURES = Path(__file__).parent / "fixtures"


def with_env(env: dict, **more: object) -> dict:
    spec = copy.deepcopy(demo_input())
    spec["environments"] = [{"name": "env", "dataset": "letters", "actors": ["student"], "rewards": [], **env}]
    spec.update(more)
    return spec


def acting_specs() -> dict[str, dict]:
    from test_acting import relay_spec
    from test_chess import chess_spec
    from test_game_learning import GAME, game_spec
    from test_remote_run import remote_spec

    import tempfile

    relay = relay_spec(Path(tempfile.mkdtemp()))  # writes its environment file there; only the spec is read here
    return {
        "game: tic-tac-toe (golden run)": game_spec(2, GAME),
        "game: chess, index moves, material cutoff": chess_spec(2, {"opponent": "random", "actorPlays": "alternate", "moveFormat": "index", "cutoff": "material"}),
        "game: chess between actors": chess_spec(1, {"opponent": "actors"}, actors=["white", "black"]),
        "python (golden run)": relay,
        "python with params": with_env({"kind": "python", "entrypoint": "my_envs:Guess", "params": {"top": 9, "hint": True}}),
        "remote over HTTP": remote_spec("http://127.0.0.1:8100"),
        "remote over gRPC with settings": with_env({"kind": "remote", "url": "grpc://envhost:8101", "remote": {"timeoutSeconds": 5, "maxConcurrentSessions": 8}}),
        "tools with MCP": with_env({"kind": "tools", "maxTurns": 3, "rewards": [{"reward": "letter_match"}],
                                    "tools": {"builtin": ["calculator"], "maxCalls": 2, "mcp": [{"kind": "mcp", "command": ["python", "server.py"]}]}}),
        "code": with_env({"kind": "code", "code": {"maxTries": 2}}),
        "adversarial, default round spec": with_env({"kind": "adversarial", "actors": ["student", "student2"], "rewards": [{"reward": "letter_match"}]},
                                                    actors=[*demo_input()["actors"], {**demo_input()["actors"][0], "name": "student2"}]),
        "parallel with visibility": with_env({"kind": "parallel", "actors": ["student", "student2"], "rewards": [{"reward": "letter_match"}],
                                              "visibility": {"student2": ["student"]}},
                                             actors=[*demo_input()["actors"], {**demo_input()["actors"][0], "name": "student2"}]),
    }


def fixture_specs() -> dict[str, dict]:
    return {name: json.loads((FIXTURES / name).read_text()) for name in
            ("demo.input.json", "demo.filled.json", "multi_agent_demo.input.json", "template.debate.json", "template.majority_vote.json")}


ALL = {**fixture_specs(), **acting_specs()}


@pytest.mark.parametrize("name", list(ALL))
def test_a_runspec_of_every_kind_loads_into_objects_and_compiles_back_to_itself(name):
    spec = ALL[name]
    again = from_spec(spec).to_spec()
    assert json.loads(json.dumps(again)) == again  # plain JSON
    assert validate_spec(again) == validate_spec(spec)
    assert again["environments"] == spec["environments"] or validate_spec(again)["environments"] == validate_spec(spec)["environments"]
    assert from_spec(again).to_spec() == again  # a fixed point after one trip


def test_each_kind_comes_back_as_its_own_class_with_its_settings_named():
    kinds = {
        "game: chess, index moves, material cutoff": GameEnvironment,
        "python with params": PythonEnvironment,
        "remote over gRPC with settings": RemoteEnvironment,
        "tools with MCP": ToolsEnvironment,
        "code": CodeEnvironment,
        "adversarial, default round spec": AdversarialEnvironment,
        "parallel with visibility": ParallelEnvironment,
    }
    for name, cls in kinds.items():
        (env,) = from_spec(ALL[name]).environments
        assert type(env) is cls, name
    chess = from_spec(ALL["game: chess, index moves, material cutoff"]).environments[0]
    assert chess.settings["moveFormat"] == "index" and chess.settings["cutoff"] == "material"  # type: ignore[attr-defined]
    remote = from_spec(ALL["remote over gRPC with settings"]).environments[0]
    assert remote.url == "grpc://envhost:8101" and remote.settings == {"timeoutSeconds": 5, "maxConcurrentSessions": 8}  # type: ignore[attr-defined]
    python = from_spec(ALL["python with params"]).environments[0]
    assert python.environment == "my_envs:Guess" and python.params == {"top": 9, "hint": True}  # type: ignore[attr-defined]
    parallel = from_spec(ALL["parallel with visibility"]).environments[0]
    assert parallel.extra == {"visibility": {"student2": ["student"]}}
    assert {type(e) for e in from_spec(ALL["multi_agent_demo.input.json"]).environments} == {CollaborativeEnvironment}
    assert {type(e) for e in from_spec(ALL["demo.input.json"]).environments} == {SingleTurnEnvironment}


def test_objects_written_by_hand_compile_to_the_kinds_fields():
    from troupe import Actor, Data

    student = Actor(name="student", model="tiny:tiny-char-2l")
    rows = Data.builtin("echo_letter", 64)
    chess = GameEnvironment(actors=[student], train_data=rows, name="chess", max_turns=4, settings={"name": "chess", "moveFormat": "index"})
    remote = RemoteEnvironment(actors=[student], train_data=rows, name="far", url="http://envhost:8100", settings={"timeoutSeconds": 5})
    entries = (chess + remote).to_spec(steps=1)["environments"]
    assert entries[0]["kind"] == "game" and entries[0]["game"] == {"name": "chess", "moveFormat": "index"} and entries[0]["maxTurns"] == 4
    assert entries[1]["kind"] == "remote" and entries[1]["url"] == "http://envhost:8100" and entries[1]["remote"] == {"timeoutSeconds": 5}
    with pytest.raises(ValueError, match="needs url"):
        RemoteEnvironment(actors=[student], train_data=rows).to_spec()
    with pytest.raises(ValueError, match="defined at module level"):

        class Local:  # not importable by name
            pass

        PythonEnvironment(actors=[student], train_data=rows, environment=Local).to_spec()
    with pytest.raises(ValueError, match='environments.0.kind: "chess" has no library object'):
        from_spec(with_env({"kind": "chess"}))
