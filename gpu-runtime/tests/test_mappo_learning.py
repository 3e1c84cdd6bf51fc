"""Issue #18's bar: MAPPO learns the two-agent secret digit at least as well as independent GRPO in the same
number of steps (tests/collab_helpers.py: Alice sees a digit 0-3, Bob answers after her; both trainable).

Both learners run here, on the same spec, seed and steps. GRPO as the secret digit's learning check runs it
(test_learning.py); mappo with value normalisation (its default) and an entropy bonus of 0.05: without a bonus its
actors collapse onto one digit before Alice's message carries it (bench/README.md has the diagnosis, and the
sweep over 0.01-0.1 and four seeds that chose 0.05; the default is 0, which suits pretrained LLMs). Most of the
gain is the bonus: GRPO given the same bonus comes close (bench/README.md). Bars, fixed before this test first ran:
- "at least as well": mappo's Bob's last-20-step mean `said` reward >= GRPO's, minus nothing;
- Bob reads Alice under mappo: that mean >= 1/4 + 0.1, the secret-digit learning check's own bar
  (test_learning.py: a Bob that ignores Alice cannot average more than 1/4; 0.1 is 5 standard errors of
  a prompt-blind Bob's 20-step mean), so mappo cannot pass by matching a GRPO that learnt nothing.

Seed 7 is the secret digit's seed everywhere (collab_helpers, test_learning.py, the bench): it was not
chosen for this test. Other seeds are in bench/README.md (bench/runtime/mappo_vs_grpo.py --seeds).
"""

import time

import pytest
from collab_helpers import secret_digit_spec
from test_learning import COLLAB_STEPS

from troupe import EventWriter, run_spec

BLIND_BOB_BEST = 1 / 4
READS_ALICE = BLIND_BOB_BEST + 0.1
MAPPO_ENTROPY_COEF = 0.05  # chosen by the sweep in bench/README.md (best mean over seeds 1, 2, 3, 7)


def _bob_said(tmp_path, algorithm: str) -> list[float]:
    folder = tmp_path / algorithm
    folder.mkdir()
    spec = secret_digit_spec(folder, steps=COLLAB_STEPS, shaped=True)
    spec["algorithm"]["name"] = algorithm
    if algorithm == "mappo":
        spec["algorithm"]["entropyCoef"] = MAPPO_ENTROPY_COEF
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=folder)
    assert result.state == "succeeded", result.message
    said = [e["values"]["reward/said"] for e in result.events if e["type"] == "metric" and e["actor"] == "Bob"]
    assert len(said) == COLLAB_STEPS
    return said


@pytest.mark.slow
def test_mappo_reads_alice_at_least_as_well_as_independent_grpo(tmp_path):
    started = time.monotonic()
    grpo = _bob_said(tmp_path, "grpo")
    mappo = _bob_said(tmp_path, "mappo")
    tail = {name: sum(said[-20:]) / 20 for name, said in (("grpo", grpo), ("mappo", mappo))}
    print(f"secret digit, {COLLAB_STEPS} steps, {time.monotonic() - started:.0f}s: Bob said, last 20 steps: grpo {tail['grpo']:.3f}, mappo {tail['mappo']:.3f}")
    assert tail["mappo"] >= tail["grpo"], tail
    assert tail["mappo"] >= READS_ALICE, tail
