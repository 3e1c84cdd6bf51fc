"""Agents x turns (issue 31): each actor's messages sliced by turn index, as metrics of the step."""

from types import SimpleNamespace

from troupe import EventWriter, run_spec
from troupe.reporting.turn_metrics import turn_metrics


def message(actor: str, tokens: int, ended: bool = True, role: str = "assistant"):
    return SimpleNamespace(actor=actor, role=role, text="x" * tokens, ids=list(range(tokens)), ended=ended)


def test_share_tokens_and_truncation_per_turn_index():
    episodes = [
        SimpleNamespace(messages=[message("a", 4), message("env", 3, role="environment"), message("b", 2, ended=False), message("a", 6)]),
        SimpleNamespace(messages=[message("a", 2), message("b", 4)]),
    ]
    conv = SimpleNamespace(env=SimpleNamespace(actors=["a", "b"]), episodes=episodes)
    assert turn_metrics([conv], "a") == {
        "turns/0/share": 1.0, "turns/0/tokens": 3.0, "turns/0/truncated": 0.0,
        "turns/3/share": 0.5, "turns/3/tokens": 6.0, "turns/3/truncated": 0.0,
    }
    b = turn_metrics([conv], "b")
    assert b["turns/1/share"] == 0.5 and b["turns/2/share"] == 0.5 and b["turns/2/truncated"] == 1.0
    assert turn_metrics([conv], "c") == {}  # not in the conversation: nothing


def test_a_two_actor_run_reports_each_actors_turns(tmp_path):
    from collab_helpers import secret_digit_spec

    result = run_spec(secret_digit_spec(tmp_path, steps=2), events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    by_actor = {e["actor"]: e["values"] for e in result.events if e["type"] == "metric" and e["step"] == 2 and "reward/mean" in e["values"]}
    # `Alice -> Bob`: Alice speaks at turn 0 of every conversation, Bob at turn 1; each wrote at most maxNewTokens (2).
    assert by_actor["Alice"]["turns/0/share"] == 1.0 and "turns/1/share" not in by_actor["Alice"]
    assert by_actor["Bob"]["turns/1/share"] == 1.0 and "turns/0/share" not in by_actor["Bob"]
    assert 1 <= by_actor["Bob"]["turns/1/tokens"] <= 2
