"""Issue #27's learning check for the team learners on the two-agent secret digit (tests/collab_helpers.py: Alice
sees a digit 0-3, Bob answers after her, both trainable, the shaped spec of the mappo check): happo, seed 7.

Chance: a Bob who ignores Alice says the digit at most 1/4 of the time. The bar is the issue's, 0.9, over the last
20 steps, and it holds over the 20 steps before them too; the first 20 steps are near chance (the rise).

Measured beforehand with bench/runtime/multi_agent.py on the shared 2-core machine, seed 7 (bench/README.md,
"Team learners"), Bob's 20-step `said` means:
- entropyCoef 0.05 (the mappo check's bonus, test_mappo_learning.py), 400 steps: happo 0.105, 0.193, 0.209, 0.255,
  0.666, 0.970, 0.988, then 0.995-1.000 to step 400 (the bar first reached at step 111, last 20: 1.000); mappo
  settles near 0.5 from step 100 (last 20: 0.519); vdn at chance to step 220, reaches the bar at step 292 and does
  not hold it (last 20: 0.850). Only happo is checked here: vdn and mappo did not hold the bar, and a lower bar
  for them would not be the issue's.
- at default settings (no entropy bonus) happo, vdn and mappo all sat at chance (0.23-0.27 over steps 21-104) and
  from step 83 their rewards were identical step by step: both tiny policies had collapsed onto fixed answers
  before Alice's message carried the digit. The issue's "at default settings" is not met by any of them here.
  Seeds 1 and 2 (100 steps each, bench/README.md "Why the team learners collapse at default settings"): Bob at
  chance over steps 81-100 for all three (0.231-0.269). No bug was found in their advantages (hand-checked on real
  batches); a blind Bob's answer random-walks onto one digit before Alice's message carries hers, and nothing in
  the learners pulls it back (GRPO's per-group std normalisation does; patched into happo it kept Bob's entropy at
  seeds 1 and 2 but Alice then settled on 3 of the 4 digits: 0.750 at seed 2, 400 steps).
  Run to 400 steps at defaults, mappo reached the bar at seed 2 (by step 280, last 20: 1.000: Alice named her digit
  while Bob still explored) and stayed at chance at seed 1 (last 20: 0.257): 1 of 3 seeds, so not checked here.
The scheduler is constant, so this run's 140 steps are the bench's first 140 (the same floats on one thread).
"""

import pytest
from collab_helpers import secret_digit_spec

from troupe import EventWriter, run_spec

CHANCE = 1 / 4
BAR = 0.9  # issue #27's
ENTROPY_COEF = 0.05  # test_mappo_learning.py's, chosen there by a sweep over seeds 1, 2, 3, 7
STEPS = 140
SEED = 7


@pytest.mark.slow
def test_happo_reaches_and_holds_the_issues_bar(tmp_path):
    spec = secret_digit_spec(tmp_path, steps=STEPS, seed=SEED, shaped=True)
    spec["algorithm"].update(name="happo", entropyCoef=ENTROPY_COEF)
    spec["trainer"]["cpuThreads"] = 1
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    said = [e["values"]["reward/said"] for e in result.events if e["type"] == "metric" and e["actor"] == "Bob"]
    assert len(said) == STEPS
    first, before_last, last = (sum(said[a:b]) / 20 for a, b in ((0, 20), (STEPS - 40, STEPS - 20), (STEPS - 20, STEPS)))
    print(f"happo seed {SEED}: Bob said, first 20 {first:.3f}, steps {STEPS - 39}-{STEPS - 20} {before_last:.3f}, last 20 {last:.3f} (chance {CHANCE})")
    assert first < CHANCE + 0.1, first  # starts from not knowing the digit
    assert before_last >= BAR and last >= BAR, (first, before_last, last)
