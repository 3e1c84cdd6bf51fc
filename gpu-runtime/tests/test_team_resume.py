"""Exact resume of the team learners and of RAE: N steps straight and N/2 + resume + N/2 give the same per-step
metrics and episodes, bitwise on CPU. The checkpoint holds what each keeps across steps: vdn's and qmix's
per-agent critics (and qmix's mixer and its optimizer), happo's centralised critic and its order RNG, rae's
per-seat baselines."""

from pathlib import Path

import pytest
from collab_helpers import secret_digit_spec
from test_control_and_resume import _StopAfterStep, episodes, per_step

from troupe.events import EventWriter
from troupe.run import run_spec


def _spec(folder: Path, algorithm: str) -> dict:
    folder.mkdir(exist_ok=True)
    s = secret_digit_spec(folder, steps=4, shaped=True)
    if algorithm == "rae":
        s["algorithm"].update(advantage="rae", rae={"decay": 0.5})
    else:
        s["algorithm"]["name"] = algorithm
    s["trainer"].update(checkpointEvery=2, cpuThreads=1)
    return s


@pytest.mark.parametrize("algorithm, state", [("vdn", "critics"), ("qmix", "learner.pt"), ("happo", "learner.pt"), ("rae", "learner.pt")])
def test_team_learners_resume_bitwise(tmp_path: Path, algorithm: str, state: str):
    straight = run_spec(_spec(tmp_path / "straight", algorithm), work_dir=tmp_path / "straight")
    assert straight.state == "succeeded", straight.message
    kept = EventWriter(keep=True)
    first = run_spec(_spec(tmp_path / "resumed", algorithm), events=kept, work_dir=tmp_path / "resumed", stop=_StopAfterStep(kept, 2))
    assert first.steps_completed == 2, first.message
    assert list((tmp_path / "resumed" / "checkpoints").glob(f"*/{state}")), f"the checkpoint holds no {state}"
    second = run_spec(_spec(tmp_path / "resumed", algorithm), work_dir=tmp_path / "resumed", resume="latest")
    assert second.state == "succeeded", second.message
    want = per_step(straight.events)
    got = {**{k: v for k, v in per_step(first.events).items() if k[0] <= 2}, **per_step(second.events)}
    assert got == want
    assert {actor for _, actor in want} == {"Alice", "Bob"}
    if algorithm != "rae":
        assert all("value/loss" in values for values in want.values())
    if algorithm == "happo":
        # Both positions occur: the order really is drawn, and the resumed run drew the same ones.
        assert {values["happo/order"] for values in want.values()} == {1.0, 2.0}
    assert any(values["reward/mean"] > 0 for values in want.values())
    assert episodes(second.events) == [e for e in episodes(straight.events) if e[0] > 2]


def test_a_checkpoint_without_the_learners_state_does_not_resume(tmp_path: Path):
    """A grpo checkpoint (no baselines) resumed as rae fails and says what is missing rather than start from 0."""
    assert run_spec(_spec(tmp_path, "grpo") | {"trainer": {**_spec(tmp_path, "grpo")["trainer"], "steps": 2}}, work_dir=tmp_path).state == "succeeded"
    resumed = run_spec(_spec(tmp_path, "rae"), work_dir=tmp_path, resume="latest")
    assert resumed.state == "failed"
    assert "learner.pt" in resumed.message, resumed.message
