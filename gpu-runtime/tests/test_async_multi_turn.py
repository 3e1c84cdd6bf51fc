"""Asynchronous rollouts for multi-turn environments (issue 28 item 1): the producers (thread and process) play
whole episodes of a collaborative environment ahead, every turn of every actor with one weights version. K = 0 is
the synchronous loop bit for bit, the process producer makes the same run as the thread, staleness is reported
on each actor's metrics and never exceeds K, and resume with episodes in flight is exact. The learning check
(K = 1 on the relay demo) is in test_relay_demo_learning.py beside the synchronous one."""

import copy
from pathlib import Path

import pytest
from collab_helpers import secret_digit_spec
from test_async_rollout import _StopAfterStep, episodes, per_step, wd, STALENESS

from troupe.events import EventWriter
from troupe.run import run_spec

ACTORS = ("Alice", "Bob")


def collaborative(folder: Path, steps: int = 4, k: int | None = None, **trainer) -> dict:
    """The golden stream's collaborative run (both actors trained, a shaped reward: real advantages)."""
    s = secret_digit_spec(wd(folder), steps=steps, shaped=True)
    s["trainer"].update(promptsPerStep=2, **trainer)
    s["algorithm"]["groupSize"] = 4
    if k is not None:
        s["algorithm"]["async"] = {"maxStaleness": k}
    return s


def staleness_per_actor(events) -> dict[str, list[float]]:
    return {a: [e["values"]["staleness/max"] for e in events if e["type"] == "metric" and e.get("actor") == a and "staleness/max" in e["values"]] for a in ACTORS}


def test_k0_on_a_collaborative_run_is_the_synchronous_loop_bit_for_bit(tmp_path: Path):
    sync = run_spec(collaborative(tmp_path / "sync"), events=EventWriter(keep=True), work_dir=tmp_path / "sync")
    k0 = run_spec(collaborative(tmp_path / "k0", k=0), events=EventWriter(keep=True), work_dir=tmp_path / "k0")
    assert sync.state == k0.state == "succeeded", (sync.message, k0.message)
    assert any("producer thread" in e.get("message", "") for e in k0.events)
    assert staleness_per_actor(k0.events) == {a: [0.0] * 4 for a in ACTORS}
    want, got = per_step(sync.events), per_step(k0.events, drop=STALENESS)
    assert sorted(got) == sorted(want) and {a for _, a in want} >= set(ACTORS)
    for key in want:  # no tolerance: the same floats
        assert got[key] == want[key], (key, got[key], want[key])
    assert episodes(k0.events) == episodes(sync.events) and len(episodes(sync.events)) > 0


@pytest.mark.parametrize("k", [1, 2])
def test_staleness_is_reported_per_actor_and_never_exceeds_k(tmp_path: Path, k: int):
    """Batch t is sampled with the weights after max(0, t - 1 - K) updates: lags 0, 1, .., K, K, .. for each actor."""
    run = run_spec(collaborative(tmp_path, steps=5, k=k), events=EventWriter(keep=True), work_dir=tmp_path)
    assert run.state == "succeeded", run.message
    assert any("producer process" in e.get("message", "") for e in run.events)
    want = [float(min(t - 1, k)) for t in range(1, 6)]
    assert staleness_per_actor(run.events) == {a: want for a in ACTORS}


def test_the_producer_process_plays_the_same_episodes_as_the_thread(tmp_path: Path, monkeypatch):
    import troupe.train as train_module

    in_process = run_spec(collaborative(tmp_path / "p", k=1), events=EventWriter(keep=True), work_dir=tmp_path / "p")
    monkeypatch.setattr(train_module, "process_producer_ok", lambda *a: "forced by the test")
    threaded = run_spec(collaborative(tmp_path / "t", k=1), events=EventWriter(keep=True), work_dir=tmp_path / "t")
    assert in_process.state == threaded.state == "succeeded", (in_process.message, threaded.message)
    assert per_step(in_process.events) == per_step(threaded.events)
    assert episodes(in_process.events) == episodes(threaded.events) and len(episodes(threaded.events)) > 0


def test_resume_with_episodes_in_flight_is_exact(tmp_path: Path):
    """Mirrors the single-turn resume test: the checkpoint after step 2 saves the conversations of the batches made
    ahead (in_flight.pt), and the resumed run trains on them first."""
    import torch

    straight = run_spec(collaborative(tmp_path / "straight", k=1, checkpointEvery=2), events=EventWriter(keep=True), work_dir=tmp_path / "straight")
    assert straight.state == "succeeded", straight.message
    saved = torch.load(tmp_path / "straight" / "checkpoints" / "step-2" / "in_flight.pt", weights_only=False)
    assert saved["batches"] and all(b["conversations"] and b["conversations"][0]["episodes"] for b in saved["batches"])

    kept = EventWriter(keep=True)
    first = run_spec(collaborative(tmp_path / "resumed", k=1, checkpointEvery=2), events=kept, work_dir=tmp_path / "resumed", stop=_StopAfterStep(kept, 2))
    assert first.state == "cancelled" and first.steps_completed == 2, first.message
    second = run_spec(collaborative(tmp_path / "resumed", k=1, checkpointEvery=2), events=EventWriter(keep=True), work_dir=tmp_path / "resumed", resume="latest")
    assert second.state == "succeeded", second.message
    want = per_step(straight.events)
    got = {**{key: v for key, v in per_step(first.events).items() if key[0] <= 2}, **per_step(second.events)}
    assert got == want and len(want) == 4 * len(ACTORS)
    assert episodes(second.events) == [e for e in episodes(straight.events) if e[0] > 2]


def _game(folder: Path) -> dict:
    from test_game_learning import GAME, game_spec

    return game_spec(3, GAME)


def _python(folder: Path) -> dict:
    from test_acting import relay_spec

    return relay_spec(wd(folder), steps=3)


@pytest.mark.parametrize("make", [_game, _python], ids=["game", "python"])
def test_other_multi_turn_kinds_k0_is_sync_and_k1_runs_in_the_process_as_in_the_thread(tmp_path: Path, make, monkeypatch):
    """A game (tic-tac-toe against a random opponent) and a python environment that acts (test_acting.py's relay):
    K = 0 gives the synchronous run's floats and episodes; K = 1 in the producer process the thread's."""
    import troupe.train as train_module

    def run(name: str, k: int | None):
        s = make(tmp_path / name)
        if k is not None:
            s["algorithm"]["async"] = {"maxStaleness": k}
        result = run_spec(s, events=EventWriter(keep=True), work_dir=wd(tmp_path / name))
        assert result.state == "succeeded", result.message
        return result

    sync, k0, process = run("sync", None), run("k0", 0), run("process", 1)
    assert per_step(k0.events, drop=STALENESS) == per_step(sync.events) and episodes(k0.events) == episodes(sync.events)
    assert len(episodes(sync.events)) > 0
    lags = [e["values"]["staleness/max"] for e in process.events if e["type"] == "metric" and "staleness/max" in e["values"]]
    assert lags and max(lags) == 1.0 and any("producer process" in e.get("message", "") for e in process.events)
    monkeypatch.setattr(train_module, "process_producer_ok", lambda *a: "forced by the test")
    thread = run("thread", 1)
    assert per_step(process.events) == per_step(thread.events) and episodes(process.events) == episodes(thread.events)
