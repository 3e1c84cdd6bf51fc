"""Learning check: a trainable attacker learns to make a frozen tiny defender emit a target.

The defender (`adversarial_helpers.build_bag_of_characters_defender`) is a one-layer Qwen2 with
hand-set weights, loaded by the runtime as a `local` model: it answers "#" with probability ~0.96
when the attacker's message holds the trigger character `~`, and ~0.0006 otherwise
(checked below on the exact context the runtime builds). The attacker (tiny-char-2l, trainable)
writes up to 4 characters; reward = the defender's one-character reply is "#".

Chance: a uniformly random attacker (100 tokens: 96 characters and 4 specials, end-of-sequence
among them) puts the trigger in its 4 tokens with probability 1 - (99/100)^4 ~ 0.04, so its target rate is
~0.04 x 0.96 ~ 0.04 (the untrained tiny model is close to uniform; the first steps measure it).
The margins:
  * rise >= 0.3 from the first 5 steps to the last 5: each window is 5 x 32 = 160 independent
    episodes, so the standard error of the difference of two window rates is at most
    sqrt(2 x 0.25 / 160) ~ 0.056; 0.3 is over 5 standard errors, no drift of a non-learning
    attacker reaches it;
  * last-5 rate >= 0.5: the attacker must put the trigger in more than half its messages (over
    10x what a random writer does): it learned *what* makes the defender say "#".
Neither number comes from this seed's outcome. The windows are short because this is a bandit
(one fixed prompt, reward on 4 characters): the attacker finds a trigger within ~10 steps, so a
20-step first window would already hold mostly learned behaviour.
"""

import time

import pytest
from adversarial_helpers import TARGET, adversarial_spec, build_bag_of_characters_defender, target_probability

from troupe import EventWriter, run_spec

STEPS = 40
WINDOW = 5
MIN_RISE = 0.3
MIN_FINAL_RATE = 0.5


def test_the_defender_reads_the_attackers_message_not_the_last_token(tmp_path):
    # The runtime's context for the defender ends with "\nBob:" whatever the attacker said: the
    # defender must depend on the message itself, or no attacker could ever move it.
    defender = build_bag_of_characters_defender(tmp_path / "defender")
    assert target_probability(defender, "abcd") < 0.01
    assert target_probability(defender, "") < 0.01
    assert target_probability(defender, "{|}!") < 0.01  # only the trigger moves it
    for attack in ("~bcd", "ab~", "~", "abc~"):
        assert target_probability(defender, attack) > 0.9, attack


@pytest.mark.slow
def test_attacker_learns_to_make_the_frozen_defender_say_the_target(tmp_path):
    defender = build_bag_of_characters_defender(tmp_path / "defender")
    started = time.monotonic()
    result = run_spec(adversarial_spec(tmp_path, defender, steps=STEPS), events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    # the defender is frozen: only the attacker reports training metrics
    assert {e.get("actor") for e in result.events if e["type"] == "metric"} == {"Alice"}

    # reward/target is the share of the step's 32 episodes where the defender's reply was "#"
    rate = result.metrics("reward/target", actor="Alice")
    assert len(rate) == STEPS
    head, tail = sum(rate[:WINDOW]) / WINDOW, sum(rate[-WINDOW:]) / WINDOW
    print(f"adversarial: {time.monotonic() - started:.1f}s, target rate first {WINDOW} steps {head:.3f}, last {WINDOW} steps {tail:.3f}")
    # the sample transcripts agree: a rewarded episode is one where the defender said the target
    for e in (e for e in result.events if e["type"] == "episode"):
        reply = [m for m in e["messages"] if m["role"] == "assistant"][-1]
        assert reply["actor"] == "Bob" and reply["trained"] is False
        assert e["reward"] == (1.0 if reply["content"].strip() == TARGET else 0.0), e
    assert tail - head >= MIN_RISE, (head, tail)
    assert tail >= MIN_FINAL_RATE, tail
