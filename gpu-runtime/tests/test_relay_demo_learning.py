"""Learning check of the seeded multi-agent demo (MULTI_AGENT_DEMO_SPEC_INPUT, the relay), at its defaults.

Only Alice sees the secret letter k (one of 8, her system prompt `secret kkkkkkkk`); Bob sees `relay:` and
Alice's message. Each is rewarded by the share of its own 4 characters equal to k.

Chance: a random policy over the ~100-character vocabulary scores about 0.01; the best policy that ignores
what it cannot see (always the same letter) averages 1/8 = 0.125 — for Bob, whatever he does without
reading Alice. So, as for the single-actor demo (test_learning.py), the bar comes from the task's meaning:
  * the last 20 steps of each actor's reward/mean at least 2 x 1/8 = 0.25 (Bob's can only get there by
    repeating Alice; the standard error of a blind Bob's 20-step mean, 20 x 64 answers, is ~0.01-0.02), and
  * a rise of at least +0.15 from the first 20 steps to the last 20,
  * and the collapse health advisory never fires (the old demo's `bbbbbbbb`, issue 31).
Measured before choosing the bar (seed 1234, 150 steps, CPU): see MEASURED below.
"""

import time

import pytest
from runtime_helpers import FIXTURES, TEST_THREADS

from troupe import EventWriter, run_spec

PROMPT_BLIND_BEST = 1 / 8
MIN_RISE = 0.15
WINDOW = 20
# Measured at seed 1234 on the 2-core CPU host (this test: 217 s with the load average at ~17), 10-step means of reward/mean:
#   alice 0.05 0.12 0.30 0.50 0.79 0.91 0.98 0.99 0.99 1.00 1.00 1.00 1.00 1.00 1.00  (first 20: 0.087, last 20: 0.998)
#   bob   0.02 0.04 0.07 0.07 0.11 0.11 0.10 0.22 0.37 0.62 0.75 0.87 0.96 0.98 0.99  (first 20: 0.033, last 20: 0.984)
# and in the last 20 steps' transcripts Bob's most common character was the secret in 160 of 160. Without the
# entropy bonus (algorithm.entropyCoef 0.05) Bob stopped at 0.48 (deterministic on half the letters).
# The bar (0.25) comes from the task's meaning (as test_learning.py's), not from these numbers.
# MEASURED_K1, the same run with algorithm.async.maxStaleness 1 (producer process; 142 s at load average ~5):
#   alice 0.04 0.13 0.28 0.43 0.62 0.71 0.84 0.88 0.95 0.99 0.99 0.97 0.99 1.00 0.96  (first 20: 0.086, last 20: 0.981)
#   bob   0.02 0.04 0.07 0.08 0.12 0.11 0.09 0.20 0.39 0.57 0.66 0.68 0.64 0.68 0.67  (first 20: 0.030, last 20: 0.675)
# Bob learns later and plateaus lower than synchronously (0.67 vs 0.98) at this seed, still well over the bar.


def relay_spec() -> dict:
    import json

    spec = json.loads((FIXTURES / "multi_agent_demo.input.json").read_text())
    spec["trainer"]["cpuThreads"] = TEST_THREADS  # speed only: the task, models, seed and settings are the demo's
    return spec


@pytest.mark.slow
def test_relay_demo_learns_the_protocol_and_holds_it_without_collapse(tmp_path):
    learns_the_protocol(relay_spec(), tmp_path)


@pytest.mark.slow
def test_relay_demo_learns_with_asynchronous_rollouts_k1(tmp_path):
    """The same run with whole episodes produced one update ahead (algorithm.async.maxStaleness 1, the producer
    process on CPU): the same bars (chance 1/8 for a blind Bob, rise >= 0.15, last 20 steps >= 0.25, no
    collapse), every actor's staleness at most 1. MEASURED_K1 below."""
    spec = relay_spec()
    spec["algorithm"]["async"] = {"maxStaleness": 1}
    result = learns_the_protocol(spec, tmp_path)
    assert any("producer process" in e.get("message", "") for e in result.events)
    for actor in ("alice", "bob"):
        lags = [e["values"]["staleness/max"] for e in result.events if e["type"] == "metric" and e.get("actor") == actor and "staleness/max" in e["values"]]
        assert len(lags) == spec["trainer"]["steps"] and lags[0] == 0.0 and set(lags[1:]) == {1.0}, (actor, lags[:5])


def learns_the_protocol(spec: dict, tmp_path):
    started = time.monotonic()
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    rewards = {
        actor: [e["values"]["reward/mean"] for e in result.events if e["type"] == "metric" and e.get("actor") == actor and "reward/mean" in e["values"]]
        for actor in ("alice", "bob")
    }
    for actor, r in rewards.items():
        assert len(r) == spec["trainer"]["steps"], actor
        head, tail = sum(r[:WINDOW]) / WINDOW, sum(r[-WINDOW:]) / WINDOW
        print(f"relay {actor}: {time.monotonic() - started:.0f}s, first 20 steps {head:.3f}, last 20 {tail:.3f}, 10-step means {[round(sum(r[i:i + 10]) / 10, 2) for i in range(0, len(r), 10)]}")
        assert tail - head >= MIN_RISE, (actor, head, tail)
        assert tail >= 2 * PROMPT_BLIND_BEST, (actor, tail)
    collapse = [e for e in result.events if e["type"] == "advisory" and e["kind"] == "collapse"]
    assert collapse == [], [e["evidence"]["summary"] for e in collapse]
    # The transcripts show the protocol: over the recorded episodes of the last 20 steps, Bob's most common
    # character is the secret (which only Alice's system prompt holds) at least twice as often as a blind
    # Bob's 1/8.
    first_tail = spec["trainer"]["steps"] - WINDOW + 1
    hits = total = 0
    for e in result.events:
        if e["type"] != "episode" or e["step"] < first_tail:
            continue
        secret = next(m["content"] for m in e["messages"] if m["role"] == "system" and m["actor"] == "alice")[-1]
        bob = "".join(m["content"] for m in e["messages"] if m["role"] == "assistant" and m["actor"] == "bob")
        total += 1
        hits += bool(bob) and max(set(bob), key=bob.count) == secret
    print(f"relay transcripts, last 20 steps: Bob's most common character is the secret in {hits} of {total}")
    assert total >= WINDOW and hits / total >= 2 * PROMPT_BLIND_BEST, (hits, total)
    return result
