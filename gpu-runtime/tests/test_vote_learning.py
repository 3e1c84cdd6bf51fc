"""Learning check: a majority vote of five tiny actors on the arithmetic task (vote_helpers.py, `a+b=` with
operands 0-2, one character answered), fixed seed.

Chance: an untrained actor draws the one right character out of a ~100-character vocabulary, about 0.01 per
answer; the vote of five such actors is right only when two happen to agree on it (or one alone answers a
number and is right), measured at 0.075 over the first 10 steps. Each actor is trained on its own answer
(rewardWeights own 1, outcome 0): five independent learners, the setting in which a vote is expected to beat
its voters if their mistakes are independent.

Measured (seed 7, 140 steps, first and last 20 steps): see the printed line. The voted accuracy rises far past
chance (asserted: by at least 0.2 over training, final 20-step mean). It does NOT exceed the best single voter:
the actors' mistakes are not independent. Each falls back to the same modal answer ("2", the most common sum,
right on 3 of the 9 problems) on the problems it has not learned, so a wrong majority outvotes the best actor
there. That bar of issue #27 is kept as a strict expected failure below, with the numbers, until a learner or a
reward that decorrelates the voters (e.g. the outcome weight with a diversity term) makes it pass.
"""

from statistics import mean

import pytest
from vote_helpers import vote_spec

from troupe import EventWriter, run_spec

AGENTS = [f"s{i + 1}" for i in range(5)]
STEPS = 140


@pytest.fixture(scope="module")
def curves(tmp_path_factory):
    folder = tmp_path_factory.mktemp("vote")
    spec = vote_spec(folder, "majority_vote", steps=STEPS, seed=7, agents=5, lr=3e-3, top=2, prompts=8, weights={"outcome": 0, "own": 1})
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=folder)
    assert result.state == "succeeded", result.message
    voted = result.metrics("vote/accuracy", actor="s1")
    own = {a: result.metrics("vote/own_accuracy", actor=a) for a in AGENTS}
    assert len(voted) == STEPS and all(len(v) == STEPS for v in own.values())
    first, last = mean(voted[:20]), mean(voted[-20:])
    best = max(mean(v[-20:]) for v in own.values())
    print(f"\nvote accuracy first20 {first:.3f} last20 {last:.3f}; own last20 " + ", ".join(f"{a} {mean(v[-20:]):.3f}" for a, v in own.items()))
    return first, last, best


@pytest.mark.slow
def test_the_voted_answer_learns_arithmetic(curves):
    first, last, _ = curves
    assert last - first >= 0.2, (first, last)
    assert last > 0.3  # far above chance (~0.01 per answer)


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="the voters' mistakes are correlated (a shared fallback answer): the vote trails its best voter; see the module docstring")
def test_the_vote_beats_its_best_voter(curves):
    _, last, best = curves
    assert last > best, (last, best)
