"""`trainer.microBatchSize: "auto"` (algorithms/micro_batch.py): the activation model against hand-computed values
and against the contracts' memory estimate (fixtures/activation_bytes.json, written by `npm run contracts:export`),
the size it picks under a budget, the update it gives, and the spec's refusals."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch
from runtime_helpers import small_spec

from troupe import EventWriter, run_spec
from troupe.algorithms.micro_batch import (
    BUDGET_ENV,
    METRIC,
    DecoderShape,
    activation_bytes_per_token_layer,
    decoder_shape,
    device_budget,
    fitting_micro_batch_size,
    missing_gradient_bytes,
    resolve_for_training,
    agree,
    resolve_micro_batch_size,
    update_bytes_per_token,
)
from troupe.algorithms.update import update_actor
from troupe.spec.runspec_types import ActorTraining
from troupe.algorithms.update_loss import LossOptions
from troupe.launch.distributed import SINGLE, RankContext
from troupe.engines.rollout.sampling import Rollout
from troupe.engines.train import BackendSettings
from troupe.engines.train.torch import TorchBackend
from troupe.models.loading import build_tiny
from troupe.spec import validate_spec
from troupe.spec import SpecError

FIXTURE = Path(__file__).parent / "fixtures" / "activation_bytes.json"
TINY = DecoderShape(hidden_size=64, layers=2, heads=4, kv_heads=4, intermediate_size=256)  # tiny-char-2l
TINY_PARAMS = 138_176  # the runtime logs 138k; worked out in packages/contracts/test/memoryEstimate.test.ts


# ------------------------------------------------------------------------------------ the pure arithmetic
def test_activation_bytes_by_hand():
    # h = kv = 64, i = 256: 7h + 2kv + 4i = 448 + 128 + 1024 = 1600 values per token and layer.
    assert activation_bytes_per_token_layer(TINY, bf16=False) == 4 * 1600  # 6400
    assert activation_bytes_per_token_layer(TINY, bf16=True) == 2 * 1600 + 8 * 64 + 10 * 64  # 4352
    # 2 layers + the model level (3h fp32 = 768) + one layer of backward working space.
    assert update_bytes_per_token(TINY, bf16=False, checkpointing=False) == 2 * 6400 + 768 + 6400  # 19968
    assert update_bytes_per_token(TINY, bf16=True, checkpointing=False) == 2 * 4352 + 768 + 4352  # 13824
    # Checkpointing keeps each layer's fp32 input (h * 4) and one recomputed layer.
    assert update_bytes_per_token(TINY, bf16=False, checkpointing=True) == 2 * 256 + 6400 + 768 + 6400  # 14080


def test_activation_model_matches_the_contracts_estimate():
    """The port gives the TS estimate's bytes per token on every case it exported (no drift)."""
    cases = json.loads(FIXTURE.read_text())
    assert len(cases) == 12
    for case in cases:
        c = case["config"]
        shape = DecoderShape(c["hiddenSize"], c["layers"], c["heads"], c["kvHeads"], c["intermediateSize"])
        got = update_bytes_per_token(shape, case["precision"] == "bf16", case["gradientCheckpointing"])
        assert got == case["bytesPerToken"], case["model"]


def test_fitting_size_by_hand():
    # 8 rows of 10 tokens at 100 bytes per token: 1000 bytes a row.
    assert fitting_micro_batch_size(8, 10, 100, None) == 8  # no budget: every row (a CPU)
    assert fitting_micro_batch_size(8, 10, 100, 8000, gradient_bytes=5000) == 8  # one pass fits: gradients are not alive with it
    assert fitting_micro_batch_size(8, 10, 100, 7999) == 7
    assert fitting_micro_batch_size(8, 10, 100, 7999, gradient_bytes=3000) == 4  # several passes keep the gradients alive
    assert fitting_micro_batch_size(8, 10, 100, 1) == 1  # never below one row
    assert fitting_micro_batch_size(0, 10, 100, 1) == 1


def test_budget_from_the_environment(monkeypatch):
    monkeypatch.delenv(BUDGET_ENV, raising=False)
    assert device_budget(torch.device("cpu")) is None
    monkeypatch.setenv(BUDGET_ENV, "123456")
    assert device_budget(torch.device("cpu")) == 123456
    for bad in ("lots", "0", "-5"):
        monkeypatch.setenv(BUDGET_ENV, bad)
        with pytest.raises(ValueError, match=BUDGET_ENV):
            device_budget(torch.device("cpu"))


def test_fixed_sizes_pass_through():
    model = torch.nn.Linear(2, 2)  # no decoder config needed when nothing is sized
    assert resolve_micro_batch_size(None, model, 8, 10, SINGLE, False, False) == (None, None)
    assert resolve_micro_batch_size(3, model, 8, 10, SINGLE, False, False) == (3, None)
    with pytest.raises(ValueError, match='trainer.microBatchSize: "auto"'):
        resolve_micro_batch_size("auto", model, 8, 10, SINGLE, False, False)


class _OtherRankChose3(RankContext):
    """Rank 1 of 2, where rank 0 chose 3 (the sum stands in for the all-reduce)."""

    def sum_floats(self, values):
        return [float(v) + other for v, other in zip(values, [3.0, 0.0])]


def test_ranks_agree_on_the_smallest_size():
    ctx = _OtherRankChose3(rank=1, world_size=2)
    assert agree(5, ctx) == 3  # rank 0 fits fewer rows: both take 3, so both run the same number of passes
    assert agree(2, ctx) == 2
    assert agree(7, SINGLE) == 7


# ------------------------------------------------------------------------- the update it gives
B, P, T = 16, 3, 5
VOCAB = 40
OPTIONS = LossOptions(loss_type="grpo", clip_eps_low=0.2, clip_eps_high=0.2, max_completion_len=None, kl_beta=0.0, temperature=1.0)


def _tiny(seed: int = 0) -> torch.nn.Module:
    torch.manual_seed(seed)
    return build_tiny("tiny-char-2l").model.float()


def _batch() -> tuple[Rollout, torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(3)
    lengths = torch.randint(1, T + 1, (B,), generator=g)
    mask = (torch.arange(T).unsqueeze(0) < lengths.unsqueeze(1)).long()
    batch = Rollout(
        torch.randint(4, VOCAB, (B, P), generator=g), torch.ones(B, P, dtype=torch.long),
        torch.randint(4, VOCAB, (B, T), generator=g), mask, -2.0 + 0.1 * torch.randn(B, T, generator=g), [],
    )
    return batch, mask, torch.randn(B, generator=g)


def _training() -> dict:
    """SGD: its step is the clipped gradient itself, so the parameters compare the gradients (Adam's first step
    is about sign(gradient), which turns float rounding on near-zero gradients into whole steps)."""
    return {
        "learningRate": 1e-1, "optimizer": "sgd", "weightDecay": 0.0, "betas": [0.9, 0.999], "maxGradNorm": 1.0,
        "offload": {"params": False, "optimizer": False}, "precision": "fp32", "backend": "torch", "gradientCheckpointing": False,
    }


def _update(model: torch.nn.Module, micro: int | None) -> tuple[dict[str, float], dict[str, torch.Tensor]]:
    backend = TorchBackend(model, BackendSettings("a", _training(), torch.device("cpu"), SINGLE, micro))
    batch, mask, advantages = _batch()
    out = update_actor(backend, batch, mask, advantages, OPTIONS, 1, 1.0, SINGLE, micro, reference=lambda b: None)
    return out, {k: v.detach().clone() for k, v in model.named_parameters()}


def test_a_budget_for_two_micro_batches_gives_the_explicit_and_the_whole_batch_update(monkeypatch):
    """16 rows of 8 tokens at 19,968 bytes per token = 159,744 bytes a row; the gradients not yet allocated
    are 138,176 x 4 = 552,704 bytes. A budget of 1,900,000 cannot hold all 16 rows (2,555,904) and leaves
    (1,900,000 - 552,704) // 159,744 = 8 rows a pass: 2 micro-batches."""
    model = _tiny()
    assert decoder_shape(model) == TINY
    assert missing_gradient_bytes(model.parameters()) == TINY_PARAMS * 4
    monkeypatch.setenv(BUDGET_ENV, "1900000")
    size, chosen = resolve_for_training("auto", model, ActorTraining.from_dict(_training()), B, P + T, SINGLE)
    assert size == 8 and chosen is not None and chosen.bytes_per_token == 19968 and chosen.budget_bytes == 1_900_000
    assert "8 of 16 rows" in chosen.describe("student")

    auto, auto_params = _update(_tiny(), size)
    explicit, explicit_params = _update(_tiny(), 8)
    whole, whole_params = _update(_tiny(), None)
    for key in ("loss", "grad_norm", "entropy", "logprob_gap"):
        assert auto[key] == explicit[key], key  # the same plan: bit for bit
        assert auto[key] == pytest.approx(whole[key], rel=1e-6, abs=1e-9), key  # accumulation = whole batch
    assert auto["grad_norm"] > 1.0  # clipping is active: the norm is of the accumulated gradient
    for name, value in whole_params.items():
        torch.testing.assert_close(auto_params[name], explicit_params[name], rtol=0, atol=0, msg=name)
        torch.testing.assert_close(auto_params[name], value, rtol=1e-6, atol=1e-6, msg=name)
    initial = dict(_tiny().named_parameters())
    assert max(float((v - initial[k].detach()).abs().max()) for k, v in whole_params.items()) > 1e-3  # the step moved them


# --------------------------------------------------------------------------------- through a run
METRICS = ("reward/mean", "loss", "grad_norm", "clip_frac", "entropy", "logprob_gap")


def _run(tmp_path: Path, spec: dict):
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    return result


def test_auto_is_the_default_and_on_a_cpu_the_whole_batch_unreported(tmp_path, monkeypatch):
    """"auto" fills an absent microBatchSize; with no device budget (a CPU) it trains on all 8 rows at once,
    exactly as a size of 8 does, and reports nothing (the golden event streams are these runs)."""
    monkeypatch.delenv(BUDGET_ENV, raising=False)
    spec = small_spec(steps=2)
    assert "microBatchSize" not in spec["trainer"] and validate_spec(spec)["trainer"]["microBatchSize"] == "auto"
    default = _run(tmp_path / "default", spec)
    spec["trainer"]["microBatchSize"] = 8
    whole = _run(tmp_path / "whole", spec)
    for name in METRICS:
        assert default.metrics(name) == whole.metrics(name) != [], name
    assert default.metrics(METRIC) == []
    assert not [e for e in default.events if e["type"] == "log" and 'microBatchSize "auto"' in e["message"]]
    size, chosen = resolve_for_training("auto", _tiny(), ActorTraining.from_dict(_training()), 8, 20, SINGLE)
    assert size == 8 and chosen is not None and chosen.budget_bytes is None  # chosen, but not reported


def test_auto_under_a_budget_trains_like_the_explicit_size(tmp_path, monkeypatch):
    """A budget of 1 byte forces one row per pass: the run equals microBatchSize 1, step for step."""
    spec = small_spec(steps=2)
    spec["trainer"]["microBatchSize"] = 1
    monkeypatch.delenv(BUDGET_ENV, raising=False)
    explicit = _run(tmp_path / "explicit", spec)
    spec["trainer"]["microBatchSize"] = "auto"
    monkeypatch.setenv(BUDGET_ENV, "1")
    auto = _run(tmp_path / "auto", spec)
    for name in METRICS:
        assert auto.metrics(name) == explicit.metrics(name), name
    assert auto.metrics(METRIC) == [1.0, 1.0]


def _metric_values(result, name: str) -> list[float]:
    return [e["values"][name] for e in result.events if e["type"] == "metric" and name in e["values"]]


def _auto_equals_one_row_micro_batches(tmp_path, monkeypatch, spec_with, metrics):
    """Run `spec_with(1)` with no budget, then `spec_with("auto")` under a budget of one byte (so "auto" picks
    one row): the named metrics must be the same, and present. Returns the "auto" run."""
    monkeypatch.delenv(BUDGET_ENV, raising=False)
    explicit = _run(tmp_path / "explicit", spec_with(1))
    monkeypatch.setenv(BUDGET_ENV, "1")
    auto = _run(tmp_path / "auto", spec_with("auto"))
    for name in metrics:
        assert _metric_values(auto, name) == _metric_values(explicit, name) != [], name
    return auto


@pytest.mark.parametrize("algorithm", ["sft", "dpo"])
def test_auto_in_the_offline_loop_trains_like_the_explicit_size(tmp_path, monkeypatch, algorithm):
    """SFT and DPO (a DPO row is a pair: twice the tokens) under a 1-byte budget equal microBatchSize 1."""
    (tmp_path / "pairs.jsonl").write_text(
        "".join(json.dumps({"prompt": f"say {c}:", "good": c * 3, "bad": d * 3}) + "\n" for c, d in zip("abcdefgh" * 4, "hgfedcba" * 4))
    )

    def spec_with(micro):
        spec = small_spec(steps=2, promptsPerStep=6)
        spec["algorithm"]["name"] = algorithm
        spec["rewards"] = []
        if algorithm == "sft":
            spec["datasets"][0] = {"name": "d", "source": {"kind": "builtin", "name": "reverse_word", "size": 64}, "evalFraction": 0.25}
            spec["environments"][0].update({"dataset": "d", "rewards": [], "completionField": "answer"})
        else:
            spec["algorithm"].update({"beta": 0.1})
            spec["datasets"][0] = {"name": "d", "source": {"kind": "file", "path": str(tmp_path / "pairs.jsonl"), "format": "jsonl"}, "evalFraction": 0.25}
            spec["environments"][0].update({"dataset": "d", "rewards": [], "chosenField": "good", "rejectedField": "bad"})
        spec["trainer"]["microBatchSize"] = micro
        return spec

    auto = _auto_equals_one_row_micro_batches(tmp_path, monkeypatch, spec_with, ("loss", "grad_norm"))
    assert _metric_values(auto, METRIC) == [1.0, 1.0]
    assert any('microBatchSize "auto" -> 1 of 6 rows' in e["message"] for e in auto.events if e["type"] == "log")


def test_auto_sizes_the_critic_fit(tmp_path, monkeypatch):
    """PPO: the critic's micro-batches are sized too (value/micro_batch_size), and the run equals microBatchSize 1."""
    def spec_with(micro):
        spec = small_spec(steps=2)
        spec["rewards"][0] = {"name": "letter_match", "source": {"kind": "python", "code": "def reward(prompt, completion, **row):\n    return len(set(completion)) / 8"}}
        spec["algorithm"]["name"] = "ppo"
        spec["trainer"]["microBatchSize"] = micro
        return spec

    auto = _auto_equals_one_row_micro_batches(tmp_path, monkeypatch, spec_with, ("loss", "grad_norm", "value/loss"))
    assert _metric_values(auto, METRIC) == [1.0, 1.0] and _metric_values(auto, "value/micro_batch_size") == [1.0, 1.0]
    assert any(e["message"].startswith('student/critic: trainer.microBatchSize "auto" -> 1') for e in auto.events if e["type"] == "log")


@pytest.mark.slow
def test_auto_with_two_ranks_trains_like_the_explicit_size(tmp_path, monkeypatch):
    """2 CPU ranks (gloo) under a 1-byte budget (the ranks inherit the environment): the same steps as
    microBatchSize 1 on 2 ranks, each rank's 4 rows one at a time (the log says "1 of 4 rows": a rank's share)."""
    def spec_with(micro):
        spec = small_spec(steps=2)
        spec["actors"][0]["placement"] = {"processes": 2}
        spec["trainer"]["microBatchSize"] = micro
        return spec

    monkeypatch.delenv(BUDGET_ENV, raising=False)
    explicit = _run(tmp_path / "explicit", spec_with(1))
    monkeypatch.setenv(BUDGET_ENV, "1")
    auto = _run(tmp_path / "auto", spec_with("auto"))
    for name in METRICS:
        assert auto.metrics(name) == explicit.metrics(name), name
    assert auto.metrics(METRIC) == [1.0, 1.0]
    lines = [e["message"] for e in auto.events if e["type"] == "log" and 'microBatchSize "auto"' in e["message"]]
    assert len(lines) == 1 and "-> 1 of 4 rows" in lines[0] and "budget 0.00 MiB" in lines[0]  # logged once, not per step


# ------------------------------------------------------------------------------------------ the spec
@pytest.mark.parametrize("bad", ["big", 0, 1.5, -1, True])
def test_bad_values_are_refused_by_field(bad):
    spec = small_spec(steps=1)
    spec["trainer"]["microBatchSize"] = bad
    with pytest.raises(SpecError, match=r"trainer\.microBatchSize"):
        validate_spec(spec)


def test_auto_and_numbers_are_accepted():
    for good in ("auto", 1, 64):
        spec = small_spec(steps=1)
        spec["trainer"]["microBatchSize"] = good
        assert validate_spec(spec)["trainer"]["microBatchSize"] == good
