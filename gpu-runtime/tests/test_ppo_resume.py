"""PPO-family checkpoints hold the critics too: N steps straight and N/2 + resume to N give the same
per-step metrics (value loss, explained variance, returns included), bitwise on CPU."""

from pathlib import Path

import pytest

from collab_helpers import secret_digit_spec
from runtime_helpers import small_spec
from test_control_and_resume import _StopAfterStep, episodes, per_step
from troupe.events import EventWriter
from troupe.run import run_spec


def _straight_and_resumed(tmp_path: Path, make_spec):
    straight = run_spec(make_spec(tmp_path / "straight"), work_dir=tmp_path / "straight")
    assert straight.state == "succeeded", straight.message
    kept = EventWriter(keep=True)
    first = run_spec(make_spec(tmp_path / "resumed"), events=kept, work_dir=tmp_path / "resumed", stop=_StopAfterStep(kept, 2))
    assert first.steps_completed == 2, first.message
    assert list((tmp_path / "resumed" / "checkpoints").glob("*/critics/*.pt")), "the checkpoint holds no critic"
    second = run_spec(make_spec(tmp_path / "resumed"), work_dir=tmp_path / "resumed", resume="latest")
    assert second.state == "succeeded", second.message
    want = per_step(straight.events)
    got = {**{k: v for k, v in per_step(first.events).items() if k[0] <= 2}, **per_step(second.events)}
    assert got == want
    assert all("value/loss" in values for values in want.values())
    # The rewards really scored (a reward that always fails would make every run trivially equal).
    assert any(values["reward/mean"] > 0 for values in want.values())
    assert episodes(second.events) == [e for e in episodes(straight.events) if e[0] > 2]
    return want


@pytest.mark.parametrize("algorithm", ["ppo", "ippo"])
def test_ppo_resumes_bitwise(tmp_path: Path, algorithm: str):
    def make_spec(folder: Path):
        s = small_spec(steps=4, checkpointEvery=2)
        s["rewards"][0] = {"name": "letter_match", "source": {"kind": "python", "code": "def reward(prompt, completion, **row):\n    return len(set(completion)) / 8"}}
        s["algorithm"]["name"] = algorithm
        return s

    _straight_and_resumed(tmp_path, make_spec)


def test_mappo_with_two_trainable_actors_resumes_bitwise(tmp_path: Path):
    def make_spec(folder: Path):
        folder.mkdir(exist_ok=True)
        s = secret_digit_spec(folder, steps=4)
        s["algorithm"]["name"] = "mappo"
        s["trainer"].update(checkpointEvery=2, cpuThreads=1)
        return s

    want = _straight_and_resumed(tmp_path, make_spec)
    assert {actor for _, actor in want} == {"Alice", "Bob"}


def test_a_critic_saved_without_value_normalisation_does_not_resume_a_run_with_it(tmp_path: Path):
    """The running statistics are part of a critic's state: resuming without them would read its outputs
    on the wrong scale, so the run fails and names the setting."""
    spec = small_spec(steps=2, checkpointEvery=2)
    spec["algorithm"].update({"name": "ppo", "valueNorm": False})
    assert run_spec(spec, work_dir=tmp_path).state == "succeeded"
    spec = small_spec(steps=4, checkpointEvery=2)
    spec["algorithm"]["name"] = "ppo"  # valueNorm absent: on
    resumed = run_spec(spec, work_dir=tmp_path, resume="latest")
    assert resumed.state == "failed"
    assert "valueNorm" in resumed.message, resumed.message
