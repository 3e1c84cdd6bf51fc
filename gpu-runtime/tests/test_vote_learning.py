"""Learning check: a majority vote of five tiny actors on the arithmetic task (vote_helpers.py, `a+b=` with
operands 0-2, one character answered), fixed seed 7, 140 steps, rewardWeights outcome 1 + own 1.

Chance: an untrained actor draws the one right character out of a ~100-character vocabulary, about 0.01 per
answer; the vote of five such actors is right only when two happen to agree on it (or one alone answers a
number and is right): 0.089 over the first 10 steps, 0.141 over the first 20, as measured.

Measured before this test was written (seed 7, 10-step means): the vote 0.089 -> 0.631 (step 40) -> 0.906
(step 80) -> 0.892 (final 20); the best voter 0.047 -> 0.564 -> 0.805 -> 0.890 (final 20). The test's run
prints the same: vote first20 0.141, last20 0.892; voters' last20 0.430, 0.777, 0.890, 0.455, 0.642 (1m55s here). While the actors
learn, the vote leads its best voter by 0.01-0.10 (10-step means, steps 40-110); by the end the best voter has caught up, and the final
20-step margin is 0.002, a tie in all but name. The assertion below holds for this seed, and it is the
issue's bar, but it is not evidence of a real gain at the end of training: the actors' mistakes are correlated
(the weaker ones fall back on the same modal answer "2"), so a vote cannot do much better than its best voter.
Own-answer rewards alone (outcome 0) were measured too: the vote reached 0.727 and its best voter 0.773.
"""

from statistics import mean

import pytest
from vote_helpers import vote_spec

from troupe import EventWriter, run_spec

AGENTS = [f"s{i + 1}" for i in range(5)]
STEPS = 140


@pytest.mark.slow
def test_majority_vote_learns_arithmetic_and_the_vote_ends_above_its_best_voter(tmp_path):
    spec = vote_spec(tmp_path, "majority_vote", steps=STEPS, seed=7, agents=5, lr=3e-3, top=2, prompts=8, weights={"outcome": 1, "own": 1})
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    voted = result.metrics("vote/accuracy", actor="s1")
    own = {a: result.metrics("vote/own_accuracy", actor=a) for a in AGENTS}
    assert len(voted) == STEPS and all(len(v) == STEPS for v in own.values())
    first, last = mean(voted[:20]), mean(voted[-20:])
    best = max(mean(v[-20:]) for v in own.values())
    print(f"\nvote accuracy first20 {first:.3f} last20 {last:.3f}; own last20 " + ", ".join(f"{a} {mean(v[-20:]):.3f}" for a, v in own.items()))
    assert last - first >= 0.2, (first, last)
    assert last > 0.5  # far above chance (~0.01 per answer, 0.089 for the untrained vote)
    assert last > best, (last, best)
