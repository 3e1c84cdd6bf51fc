"""Learning checks of the offline learners on CPU, seeded, thresholds fixed from the tasks' meaning.

SFT: `reverse abc:` -> `cba` (builtin reverse_word, target column `answer`), a quarter of the rows held out.
The held-out loss (mean token cross-entropy over the answer and its EOS) is reported as `eval/loss`. A model
that ignores the prompt cannot beat ln(10) ~ 2.30 nats on the answer's letters (each is uniform over 10
letters and independent of the ones before it), so we require the last held-out loss to be
  * at least 1 nat below the held-out loss after the first step (learning happened), and
  * below 2.0 nats (learning used the prompt: below anything a prompt-blind model averages over the
    3-5 letters and the EOS, which is at least (3 x ln 10 + 0) / 4 ~ 1.73 only for the shortest words and
    ~2.0 on average over lengths 3..5).

DPO: `say k:` with a chosen completion `kkk` and a rejected `jjj` (j another letter, drawn per row), a quarter
of the pairs held out. At step 0 the policy is its reference, so every held-out margin is 0 and the reward
accuracy (share of pairs whose chosen reward is higher) has nothing to go on. We require the last held-out
  * mean margin (`eval/dpo/margin`, beta x the difference of log-ratios) above 0.5 (the sigmoid loss is then
    below -log sigmoid(0.5) ~ 0.47 on average, from log 2 ~ 0.69 at the start), and
  * reward accuracy (`eval/dpo/accuracy`) at least 0.9 (chance: 0.5).
"""

import json

import pytest
from runtime_helpers import TEST_THREADS, small_spec

from troupe import EventWriter, run_spec

ALPHABET = "abcdefgh"


def _sft_spec(steps: int) -> dict:
    spec = small_spec(steps=steps, evalEvery=1, promptsPerStep=16)
    spec["algorithm"]["name"] = "sft"
    spec["datasets"][0] = {"name": "words", "source": {"kind": "builtin", "name": "reverse_word", "size": 256}, "evalFraction": 0.25}
    spec["rewards"] = []
    spec["environments"][0].update({"dataset": "words", "rewards": [], "completionField": "answer"})
    return spec


def _pairs(path, n: int = 128) -> None:
    import numpy as np

    rng = np.random.default_rng(7)
    with path.open("w") as f:
        for i in range(n):
            k = ALPHABET[i % len(ALPHABET)]
            j = ALPHABET[(i % len(ALPHABET) + int(rng.integers(1, len(ALPHABET)))) % len(ALPHABET)]
            f.write(json.dumps({"prompt": f"say {k}:", "good": k * 3, "bad": j * 3}) + "\n")


def _dpo_spec(steps: int, loss: str = "sigmoid") -> dict:
    spec = small_spec(steps=steps, evalEvery=1, promptsPerStep=16)
    spec["algorithm"].update({"name": "dpo", "beta": 0.1, "dpoLoss": loss})
    spec["datasets"][0] = {"name": "pairs", "source": {"kind": "file", "path": "pairs.jsonl", "format": "jsonl"}, "evalFraction": 0.25}
    spec["rewards"] = []
    spec["environments"][0].update({"dataset": "pairs", "rewards": [], "chosenField": "good", "rejectedField": "bad"})
    return spec


def _eval(result, name):
    return [e["values"][name] for e in result.events if e["type"] == "metric" and name in e["values"]]


@pytest.mark.slow
def test_sft_lowers_held_out_loss(tmp_path):
    spec = _sft_spec(steps=60)
    assert spec["trainer"]["cpuThreads"] == TEST_THREADS
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    held_out = _eval(result, "eval/loss")
    print(f"sft held-out loss: after step 1 {held_out[0]:.3f}, last {held_out[-1]:.3f}; token accuracy {_eval(result, 'eval/sft/token_accuracy')[-1]:.3f}")
    assert len(held_out) == 60
    assert held_out[-1] <= held_out[0] - 1.0, held_out
    assert held_out[-1] < 2.0, held_out[-1]
    assert len(result.metrics("sft/token_accuracy")) == 60


@pytest.mark.slow
def test_dpo_raises_the_held_out_margin(tmp_path):
    _pairs(tmp_path / "pairs.jsonl")
    result = run_spec(_dpo_spec(steps=30), events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    margin, accuracy = _eval(result, "eval/dpo/margin"), _eval(result, "eval/dpo/accuracy")
    print(f"dpo held-out margin: after step 1 {margin[0]:.3f}, last {margin[-1]:.3f}; accuracy last {accuracy[-1]:.3f}")
    assert margin[-1] > 0.5, margin
    assert accuracy[-1] >= 0.9, accuracy
    assert result.metrics("dpo/margin") and result.metrics("loss")


def test_dpo_refuses_a_dataset_without_the_preference_columns(tmp_path):
    _pairs(tmp_path / "pairs.jsonl")
    spec = _dpo_spec(steps=1)
    spec["environments"][0]["rejectedField"] = "worse"
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "failed"
    assert result.message.startswith("environments.0.rejectedField: dpo trains on preference pairs: dataset \"pairs\" has no column \"worse\""), result.message


def test_micro_batches_give_the_whole_batch_update(tmp_path):
    """Each micro-batch's loss is normalised by the whole batch's count: the same losses, step after step."""
    whole = run_spec(_sft_spec(steps=3), events=EventWriter(keep=True), work_dir=tmp_path / "whole")
    spec = _sft_spec(steps=3)
    spec["trainer"]["microBatchSize"] = 3  # 16 rows -> 6 micro-batches, the last one short
    micro = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path / "micro")
    assert whole.state == micro.state == "succeeded", (whole.message, micro.message)
    for name in ("loss", "eval/loss", "sft/token_accuracy"):
        assert _eval(micro, name) == pytest.approx(_eval(whole, name), rel=1e-5, abs=1e-6), name


def test_dpo_on_a_lora_actor_measures_against_its_base(tmp_path):
    """With LoRA there is no reference copy: the base (adapters off) is the reference, so at the first step,
    before any update, every margin is 0; after training the held-out margin is above that 0 (a LoRA adapter
    starts with B = 0 and moves slower than full weights: 15 steps)."""
    import torch

    from troupe.models.loading import build_tiny

    base = tmp_path / "base"
    torch.manual_seed(0)  # a fixed base
    loaded = build_tiny("tiny-char-2l")
    loaded.model.save_pretrained(base)
    loaded.tokenizer.save_pretrained(base)
    _pairs(tmp_path / "pairs.jsonl")
    spec = _dpo_spec(steps=15)
    spec["actors"][0]["model"] = {"source": "local", "path": str(base)}
    spec["actors"][0]["training"]["lora"] = {"rank": 4, "alpha": 8}
    spec["actors"][0]["training"]["learningRate"] = 0.02
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    margins = result.metrics("dpo/margin")
    assert margins[0] == pytest.approx(0.0, abs=1e-6)  # measured before the first update: policy == base
    assert _eval(result, "eval/dpo/margin")[-1] > 0


@pytest.mark.slow
def test_two_cpu_ranks_train_sft_as_one_process(tmp_path):
    """Each rank takes its rows; losses are normalised by the whole batch's tokens, so two gloo ranks report
    (and apply) the single-process update."""
    one = run_spec(_sft_spec(steps=2), events=EventWriter(keep=True), work_dir=tmp_path / "one")
    spec = _sft_spec(steps=2)
    spec["actors"][0]["placement"] = {"processes": 2}
    two = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path / "two")
    assert one.state == two.state == "succeeded", (one.message, two.message)
    for name in ("loss", "eval/loss"):
        assert _eval(two, name) == pytest.approx(_eval(one, name), rel=1e-5), name


def test_an_sft_run_resumes_from_its_checkpoint_exactly(tmp_path):
    """Weights, optimizer, data position and RNGs come back: steps 3-4 after a resume equal the straight run's."""
    spec = _sft_spec(steps=4)
    spec["trainer"]["checkpointEvery"] = 2
    straight = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path / "a")
    resumed = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path / "b", resume=tmp_path / "a" / "checkpoints" / "step-2")
    assert straight.state == resumed.state == "succeeded", (straight.message, resumed.message)
    assert resumed.metrics("loss") == straight.metrics("loss")[2:]


def test_an_eval_only_environment_of_an_sft_run_is_evaluated_not_trained(tmp_path):
    spec = _sft_spec(steps=2)
    spec["trainer"]["evalEvery"] = 2
    spec["datasets"].append({"name": "letters", "source": {"kind": "builtin", "name": "echo_letter", "size": 8}})
    spec["rewards"] = [{"name": "letter_match", "source": {"kind": "builtin", "name": "letter_match"}}]
    spec["environments"].append(
        {"name": "exam", "kind": "single_turn", "dataset": "letters", "actors": ["student"], "prompt": {"field": "prompt", "applyChatTemplate": False},
         "rewards": [{"reward": "letter_match", "weight": 1}], "evalOnly": True}
    )
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    keys = {k for e in result.events if e["type"] == "metric" for k in e["values"]}
    assert "eval/loss" in keys and any("exam" in k for k in keys), sorted(keys)
