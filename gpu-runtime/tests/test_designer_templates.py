"""The designer's templates (packages/contracts/src/designerTemplates.ts, exported as
fixtures/designer_templates.json): each is a valid RunSpec here, and the majority-vote and summary templates
run through the runtime, every actor's reward following the outcome."""

import json

import pytest
from runtime_helpers import FIXTURES, TEST_THREADS

from troupe import EventWriter, run_spec
from troupe.spec import validate_spec
from troupe.spec.support import support_issues

TEMPLATES = json.loads((FIXTURES / "designer_templates.json").read_text())


def test_the_designer_offers_debate_majority_vote_summary_cory_proposer_solver_and_a_self_play_game():
    assert list(TEMPLATES) == ["debate", "majority_vote", "summary", "cory", "proposer_solver", "self_play_game"]
    assert [TEMPLATES[k]["environments"][0]["kind"] for k in TEMPLATES] == ["collaborative", "majority_vote", "summary", "collaborative", "collaborative", "game"]


@pytest.mark.parametrize("name", list(TEMPLATES))
def test_template_is_a_valid_spec(name):
    spec = validate_spec(TEMPLATES[name])
    if name != "self_play_game":  # the game needs PettingZoo on the runner, which this host may lack
        assert support_issues(spec, cuda_available=False) == []


def test_cory_template_runs_and_exchanges_roles(tmp_path):
    """Two steps with swapEvery 1: alice is the pioneer at step 1, bob at step 2; each role's reward is reported."""
    spec = json.loads(json.dumps(TEMPLATES["cory"]))
    spec["trainer"].update({"steps": 2, "promptsPerStep": 2, "episodesPerStep": 4, "cpuThreads": TEST_THREADS})
    spec["algorithm"].update({"groupSize": 4, "cory": {"swapEvery": 1}})
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    pioneers = [(e["step"], e["actor"]) for e in result.events if e["type"] == "metric" and e["values"].get("cory/plays_pioneer") == 1.0]
    assert pioneers == [(1, "alice"), (2, "bob")]
    assert len(result.metrics("role/pioneer/reward")) == 2 and len(result.metrics("role/observer/reward")) == 2


def test_proposer_solver_template_runs_and_pays_the_proposer_from_its_solvers(tmp_path):
    """Two steps of the template as it is (2 proposals x 4 answers per row): each role's reward is reported, and the
    proposer's is learnability p(1-p), so never above 0.25."""
    spec = json.loads(json.dumps(TEMPLATES["proposer_solver"]))
    spec["trainer"].update({"steps": 2, "promptsPerStep": 2, "episodesPerStep": 8, "cpuThreads": TEST_THREADS})
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    proposer = result.metrics("role/proposer/reward", actor="alice")
    assert len(proposer) == 2 and all(0.0 <= v <= 0.25 for v in proposer)
    assert len(result.metrics("role/solver/reward", actor="bob")) == 2


@pytest.mark.parametrize("name, area", [("majority_vote", "vote"), ("summary", "summary")])
def test_outcome_template_runs(tmp_path, name, area):
    spec = json.loads(json.dumps(TEMPLATES[name]))
    spec["trainer"].update({"steps": 2, "promptsPerStep": 2, "episodesPerStep": 4, "cpuThreads": TEST_THREADS})
    spec["algorithm"]["groupSize"] = 4
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    weights = spec["environments"][0]["majorityVote" if name == "majority_vote" else "summary"]["rewardWeights"]
    for episode in (e for e in result.events if e["type"] == "episode"):
        for key, value in episode["rewardComponents"].items():
            term = key.split("/")[1]
            assert value in (0.0, weights[term]), key
    assert len(result.metrics(f"{area}/accuracy", actor="s1")) == 2


def test_self_play_template_is_one_policy_in_both_seats(tmp_path):
    """Issue #27: self-play is one model, not two copies. The template's one actor plays X and O; one step trains it
    once, and the roles' metrics are reported apart."""
    spec = json.loads(json.dumps(TEMPLATES["self_play_game"]))
    assert [a["name"] for a in spec["actors"]] == ["policy"]
    assert spec["environments"][0]["roles"] == {"X": "policy", "O": "policy"}
    spec["trainer"].update(steps=1, promptsPerStep=2)
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    updates = [e for e in result.events if e["type"] == "metric" and "loss" in e["values"]]
    assert [e["actor"] for e in updates] == ["policy"]
    rewards = next(e["values"] for e in result.events if e["type"] == "metric" and "reward/mean" in e["values"])
    assert {"role/X/reward", "role/O/reward"} <= set(rewards)
