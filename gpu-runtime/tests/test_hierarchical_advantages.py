"""algorithm.advantage "hierarchical" (algorithms/hierarchical.py): the proposer's reward from its solvers', the
solver's and the proposer's advantages against hand-computed references, the shared proposer turn
(envs/collaborative.py share_turns), and a 3-step run of a tiny proposer–solver spec."""

import math
from pathlib import Path

import pytest
import torch
from runtime_helpers import TEST_THREADS
from vote_helpers import actor, write_arithmetic

from troupe import EventWriter, run_spec
from troupe.algorithms.advantage_estimators import build_estimator, shared_turns
from troupe.algorithms.grpo import ADVANTAGE_EPS
from troupe.algorithms.hierarchical import proposer_advantages, proposer_rewards, solve_rates, solver_advantages
from troupe.envs.collaborative import Episode, share_turns
from troupe.spec.runspec_types import Algorithm, ActorTraining


def close(got: torch.Tensor, want: list[float]) -> None:
    assert got.tolist() == pytest.approx(want, abs=1e-5)


def test_solve_rates_are_each_proposals_mean_clamped():
    # Two proposals answered 4 times: 1 of 4 right; rewards outside [0, 1] are clamped after the mean.
    close(solve_rates(torch.tensor([1.0, 0, 0, 0, 2, 2, 1, 1]), 4), [0.25, 1.0])


def test_proposer_rewards_from_the_solvers_results():
    solver = torch.tensor([1.0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 1, 1, 0, 0])  # p = 1/4, 1, 0, 1/2
    close(proposer_rewards(solver, 4, "learnability"), [0.1875] * 4 + [0.0] * 4 + [0.0] * 4 + [0.25] * 4)  # p(1-p)
    close(proposer_rewards(solver, 4, "frontier"), [0.75] * 4 + [0.0] * 4 + [0.0] * 4 + [0.5] * 4)  # 1-p inside (0, 1)
    close(proposer_rewards(solver, 4, "difficulty"), [0.75] * 4 + [0.0] * 4 + [1.0] * 4 + [0.5] * 4)  # 1-p
    with pytest.raises(ValueError, match="proposerReward"):
        proposer_rewards(solver, 4, "novelty")


def test_solver_advantages_are_against_the_answers_to_the_same_proposal():
    # Proposal 1: answers 1, 0 (mean 0.5, sample std sqrt(0.5)); proposal 2: 1, 1 (all equal: 0).
    s = 1 / (math.sqrt(0.5) + ADVANTAGE_EPS)  # grpo.group_advantages' eps beside the std
    close(solver_advantages(torch.tensor([1.0, 0, 1, 1]), 2, "none"), [0.5, -0.5, 0.0, 0.0])
    close(solver_advantages(torch.tensor([1.0, 0, 1, 1]), 2, "group"), [0.5 * s, -0.5 * s, 0.0, 0.0])


def test_proposer_advantages_are_against_the_rows_other_proposals():
    # One row, groupSize 6 = 3 proposals x 2 answers; the proposals' rewards 0.25, 0, 0.25 (each on its 2 episodes).
    rewards = torch.tensor([0.25, 0.25, 0.0, 0.0, 0.25, 0.25])
    mean = 0.5 / 3
    close(proposer_advantages(rewards, 2, 6, "none"), [0.25 - mean] * 2 + [-mean] * 2 + [0.25 - mean] * 2)
    # Normalised by the 3 proposals' sample std (not the 6 copies'): sqrt(((1/12)^2*2 + (1/6)^2) / 2) = sqrt(1/48).
    std = math.sqrt(1 / 48) + ADVANTAGE_EPS
    close(proposer_advantages(rewards, 2, 6, "group"), [(0.25 - mean) / std] * 2 + [-mean / std] * 2 + [(0.25 - mean) / std] * 2)


def _algorithm(**hierarchical) -> Algorithm:
    return Algorithm.from_dict({"name": "grpo", "advantage": "hierarchical", "groupSize": 4, "hierarchical": {"solverSamples": 2, **hierarchical}})


class _Batch:
    def __init__(self, episodes):
        self.conversations = [type("Conv", (), {"episodes": episodes})()]


def _episode(i: int, solver: float) -> Episode:
    e = Episode(0, 0, i, [], "", {}, {})
    e.rewards = {"proposer": 0.0, "solver": solver}
    return e


def test_the_estimator_pays_the_proposer_then_sets_each_role_against_its_group():
    estimator = build_estimator(_algorithm())
    episodes = [_episode(i, r) for i, r in enumerate([1.0, 0.0, 1.0, 1.0])]  # p = 1/2, 1
    estimator.prepare(_Batch(episodes))
    assert [e.rewards["proposer"] for e in episodes] == [0.25, 0.25, 0.0, 0.0]
    assert episodes[0].components["proposer"] == {"hierarchical/learnability": 0.25}
    training = ActorTraining.from_dict({"advantageNorm": "none"})
    got = estimator.advantages(
        ["tasks/proposer", "tasks/solver", "other/alice"],
        [[e.rewards["proposer"] for e in episodes], [e.rewards["solver"] for e in episodes], [1.0, 0.0, 0.0, 0.0]],
        4, training,
    )
    close(got, [0.125, 0.125, -0.125, -0.125] + [0.5, -0.5, 0.0, 0.0] + [0.75, -0.25, -0.25, -0.25])
    assert estimator.state_dict() == {}  # nothing kept across steps: a resume needs nothing of it


def test_own_keeps_the_environments_reward_for_the_proposer():
    estimator = build_estimator(_algorithm(proposerReward="own"))
    episodes = [_episode(i, r) for i, r in enumerate([1.0, 0.0, 1.0, 1.0])]
    for e, own in zip(episodes, [0.5, 0.5, 1.0, 1.0]):
        e.rewards["proposer"] = own
    estimator.prepare(_Batch(episodes))
    assert [e.rewards["proposer"] for e in episodes] == [0.5, 0.5, 1.0, 1.0]


def test_only_the_proposer_speaks_once_per_block():
    assert shared_turns(_algorithm(proposer="teacher")) == {"teacher": 2}
    assert shared_turns(Algorithm.from_dict({"name": "grpo"})) == {}
    episodes = [Episode(0, i // 4, i % 4, [], "", {}, {}) for i in range(8)]  # 2 rows x groupSize 4
    share_turns(episodes, {"proposer": 2}, 4)
    leads = [episodes.index(e.leaders["proposer"]) if "proposer" in e.leaders else i for i, e in enumerate(episodes)]
    assert leads == [0, 0, 2, 2, 4, 4, 6, 6]


# The solver succeeds when its character does not sort below the proposer's: a proposal's solve rate is then about
# the share of the vocabulary at or above it, so untrained proposals are solved sometimes (p inside (0, 1)).
AT_LEAST = (
    "def reward(conversation, actor_name, **row):\n"
    "    said = [m['content'] for m in conversation if m['actor'] in ('proposer', 'solver')]\n"
    "    return float(len(said) == 2 and said[1] >= said[0])\n"
)


def proposer_solver_spec(folder: Path, steps: int = 3) -> dict:
    rows = write_arithmetic(folder)
    return {
        "specVersion": 1,
        "name": "proposer-solver",
        "seed": 5,
        "actors": [actor("alice"), actor("bob")],
        "datasets": [{"name": "sums", "source": {"kind": "file", "path": str(rows.resolve()), "format": "jsonl"}}],
        "rewards": [{"name": "at_least", "scope": "conversation", "source": {"kind": "python", "code": AT_LEAST}}],
        "environments": [
            {
                "name": "tasks",
                "kind": "collaborative",
                "dataset": "sums",
                "actors": ["alice", "bob"],
                "roles": {"proposer": "alice", "solver": "bob"},
                "roundSpec": "proposer -> solver",
                "maxTurns": 2,
                "prompt": {"field": "prompt", "applyChatTemplate": False},
                "rewards": [{"reward": "at_least"}],
            }
        ],
        "algorithm": {"name": "grpo", "advantage": "hierarchical", "groupSize": 8, "hierarchical": {"solverSamples": 4}},
        "trainer": {"steps": steps, "promptsPerStep": 2, "episodesPerStep": 1, "cpuThreads": TEST_THREADS},
    }


def test_a_tiny_proposer_solver_run_reports_each_role(tmp_path):
    result = run_spec(proposer_solver_spec(tmp_path), events=EventWriter(keep=True), work_dir=tmp_path / "run")
    assert result.state == "succeeded", result.message
    metrics = [e for e in result.events if e["type"] == "metric"]
    by_actor = {(e["step"], e["actor"]): e["values"] for e in metrics}
    for step in (1, 2, 3):
        proposer, solver = by_actor[(step, "alice")], by_actor[(step, "bob")]
        assert "role/proposer/reward" in proposer and "role/solver/reward" in solver
        assert 0.0 <= proposer["role/proposer/reward"] <= 0.25  # learnability p(1-p)
    # Every block of 4 episodes (one proposal) read the same proposal, and the proposer was paid p(1-p) of its
    # block's solver rewards.
    episodes = [e for e in result.events if e["type"] == "episode"]
    blocks: dict[tuple, list[dict]] = {}
    for e in episodes:
        blocks.setdefault((e["step"], e["group"], e["sample"] // 4), []).append(e)
    paid = []
    whole = [block for block in blocks.values() if len(block) == 4]  # the transcripts report a sample of episodes
    assert whole
    for block in whole:
        said = [{m["actor"]: m for m in e["messages"]} for e in block]
        assert len({s["proposer"]["content"] for s in said}) == 1
        p = sum(s["solver"]["reward"] for s in said) / len(said)
        assert [s["proposer"]["reward"] for s in said] == pytest.approx([p * (1 - p)] * len(said))
        paid.append(p * (1 - p))
    assert any(v > 0 for v in paid), "some proposals were solved sometimes, not always or never"
