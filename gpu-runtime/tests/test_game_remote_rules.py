"""`game` and `remote` environments refused by field before the run: the contracts' cases
(packages/contracts/test/gameRemoteRules.test.ts) with the same paths and words, plus the runtime's own."""

import copy
import re

import pytest
from runtime_helpers import demo_input

from troupe.envs.acting import ACTING_KINDS
from troupe.spec import SpecError, validate_spec
from troupe.spec.support import support_issues


def spec(env: dict) -> dict:
    s = copy.deepcopy(demo_input())
    s["environments"] = [{"name": "env", "dataset": "letters", "actors": ["student"], "rewards": [], **env}]
    return s


def issues(s: dict) -> dict[str, str]:
    try:
        validated = validate_spec(s)
    except SpecError as e:
        return {i.path: i.message for i in e.issues}
    return {i.path: i.message for i in support_issues(validated, cuda_available=False)}


CASES = [
    ("a remote environment without url", {"kind": "remote"}, "environments.0.url", r'needs url: "http://host:port"'),
    ("a url that is not http", {"kind": "remote", "url": "ftp://x"}, "environments.0.url", r"does not match '\^\(https\?"),  # the schema's words
    ("a grpc url with a path", {"kind": "remote", "url": "grpc://envhost:8101/env"}, "environments.0.url", r"does not match '\^\(https\?"),
    ("two actors against the random player", {"kind": "game", "actors": ["student", "student"]}, "environments.0.actors", r"exactly one actor"),
    ("a role named O playing X against the random player", {"kind": "game", "roles": {"O": "student"}}, "environments.0.roles", r'needs actorPlays "second"'),
    ("one actor in a game between actors", {"kind": "game", "game": {"opponent": "actors"}}, "environments.0.actors", r"exactly two"),
    ("a side between actors", {"kind": "game", "actors": ["student", "student"], "game": {"opponent": "actors", "actorPlays": "second"}},
     "environments.0.game.actorPlays", r'only for opponent "random"'),
    ("a chess move format on another game", {"kind": "game", "game": {"name": "connect_four", "moveFormat": "index"}}, "environments.0.game.moveFormat",
     r"only chess takes moveFormat"),
    ("a chess cutoff rule on another game", {"kind": "game", "game": {"cutoff": "material"}}, "environments.0.game.cutoff", r"only chess takes cutoff"),
    ("game settings on another kind", {"kind": "single_turn", "rewards": [{"reward": "letter_match"}], "game": {}}, "environments.0.game",
     r"only game environments take game settings"),
    ("a url on another kind", {"kind": "single_turn", "rewards": [{"reward": "letter_match"}], "url": "http://x:1"}, "environments.0.url",
     r"only remote environments take a url"),
]


@pytest.mark.parametrize("name, env, path, message", CASES, ids=[c[0] for c in CASES])
def test_refused_by_field(name, env, path, message):
    found = issues(spec(env))
    assert path in found, found
    assert re.search(message, found[path])


def test_game_settings_pass_through_the_runtime_checks():
    found = issues(spec({"kind": "game", "game": {"name": "connect_four"}}))
    if "game" in ACTING_KINDS:
        assert found == {}
    else:  # until the acting dispatch builds the kind, it says how to run the same class today
        assert found == {"environments.0.kind": '"game" is not wired into this runtime yet: use kind "python", entrypoint '
                         '"troupe.games.environment:GameEnvironment" and params (the game settings)'}


@pytest.mark.parametrize("url", ["http://envhost:8100", "https://envhost/env", "grpc://envhost:8101", "grpc://10.0.0.7:8101/"])
def test_http_and_grpc_urls_pass(url):
    assert issues(spec({"kind": "remote", "url": url})) == {}


def test_without_grpcio_a_grpc_url_is_refused_at_the_url(monkeypatch):
    from troupe.spec import support

    monkeypatch.setattr(support, "grpc_available", lambda: False)
    assert issues(spec({"kind": "remote", "url": "http://envhost:8100"})) == {}
    assert issues(spec({"kind": "remote", "url": "grpc://envhost:8101"})) == {
        "environments.0.url": 'a "grpc://" url needs grpcio and protobuf on this host (pip install "troupe[grpc]"); '
        "they are not installed here: install them, or serve the environment over http://"
    }


def test_without_pettingzoo_a_game_is_refused_at_its_kind(monkeypatch):
    from troupe.spec import support

    monkeypatch.setattr(support, "pettingzoo_available", lambda: False)
    assert issues(spec({"kind": "game"})) == {"environments.0.kind": '"game" needs PettingZoo on the runner (pip install "troupe[games]": pettingzoo and pygame)'}
