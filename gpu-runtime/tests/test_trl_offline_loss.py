"""Our SFT and DPO losses (learners/sft.py, learners/dpo.py) against TRL 1.13's, on the same model and tokens.

TRL's losses are not free functions: they are `SFTTrainer.compute_loss` and `DPOTrainer._compute_loss`
(reached through the public `compute_loss(model, inputs)`). So a real trainer is built on a tiny Llama
(CPU, fp32) and handed one batch in the shape its collator produces; ours gets the same token ids and
masks through the path the offline loop uses (offline_data.build_sequences -> offline_loop.forward_logits
-> token_logps -> sft_loss / sequence_logps + dpo_loss). The loss, every parameter's gradient and the
reported metrics must agree to 1e-5 (relative; 1e-6 absolute).

For DPO the policy is moved away from TRL's reference (a copy loaded from the same folder) by a fixed
seeded perturbation, so the log-ratios are not zero and every loss variant has a non-trivial gradient.
"""

import pytest
import torch

trl = pytest.importorskip("trl", reason="trl is in the test extra: pip install -e 'gpu-runtime[test]'")

from troupe.algorithms.learners.dpo import dpo_loss, sequence_logps  # noqa: E402
from troupe.algorithms.learners.offline_data import build_sequences  # noqa: E402
from troupe.algorithms.learners.offline_loop import PairBatch, forward_logits, token_logps  # noqa: E402
from troupe.algorithms.learners.sft import sft_loss  # noqa: E402

RTOL, ATOL = 1e-5, 1e-6


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    vocab = {ch: i for i, ch in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    fast = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|end|>", pad_token="<|pad|>")
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(fast), hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
        num_key_value_heads=2, eos_token_id=fast.eos_token_id, pad_token_id=fast.pad_token_id,
    )
    folder = tmp_path_factory.mktemp("tiny-llama")
    LlamaForCausalLM(config).save_pretrained(folder)
    fast.save_pretrained(folder)
    g = torch.Generator().manual_seed(1)

    def seqs(lengths):
        return [torch.randint(0, 200, (n,), generator=g).tolist() for n in lengths]

    prompts = seqs([4, 6, 3, 5])  # prompts of different lengths: the masks must follow them
    chosen = [c + [fast.eos_token_id] for c in seqs([5, 2, 7, 3])]
    rejected = [r + [fast.eos_token_id] for r in seqs([3, 6, 1, 4])]
    return str(folder), fast, prompts, chosen, rejected, tmp_path_factory.mktemp("trl")


def _grads(model):
    return {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None}


def _assert_same_grads(ours, theirs):
    assert ours.keys() == theirs.keys()
    for name in theirs:
        torch.testing.assert_close(ours[name], theirs[name], rtol=RTOL, atol=ATOL, msg=name)


def test_sft_loss_gradients_and_token_accuracy_match_trl(tiny):
    from datasets import Dataset
    from trl import SFTConfig, SFTTrainer

    folder, tokenizer, prompts, chosen, _, out = tiny
    args = SFTConfig(output_dir=str(out), use_cpu=True, bf16=False, report_to=[], completion_only_loss=True, per_device_train_batch_size=4)
    dataset = Dataset.from_dict({"prompt": ["ab"] * 4, "completion": ["cd"] * 4})
    trainer = SFTTrainer(model=folder, args=args, train_dataset=dataset, processing_class=tokenizer)
    model = trainer.model
    model.train()
    batch = build_sequences(prompts, chosen, tokenizer.pad_token_id)
    labels = torch.where(batch.completion_mask.bool(), batch.input_ids, torch.full_like(batch.input_ids, -100))
    examples = [
        {"input_ids": batch.input_ids[i, : int(batch.attention_mask[i].sum())].tolist(), "labels": labels[i, : int(batch.attention_mask[i].sum())].tolist()}
        for i in range(len(prompts))
    ]
    inputs = trainer.data_collator(examples)
    assert torch.equal(inputs["input_ids"], batch.input_ids) and torch.equal(inputs["attention_mask"], batch.attention_mask)

    model.zero_grad(set_to_none=True)
    trl_value = trainer.compute_loss(model, dict(inputs), num_items_in_batch=batch.label_mask.sum())
    trl_value.backward()
    trl_grads = _grads(model)
    trl_accuracy = trainer._metrics["train"]["mean_token_accuracy"][-1]

    model.zero_grad(set_to_none=True)
    value, stats = sft_loss(forward_logits(model, batch), batch.labels, batch.label_mask)
    value.backward()
    torch.testing.assert_close(value, trl_value, rtol=RTOL, atol=ATOL)
    _assert_same_grads(_grads(model), trl_grads)
    assert stats["sft/token_accuracy"] == pytest.approx(trl_accuracy, abs=1e-7)
    assert stats["tokens"] == float(sum(len(c) for c in chosen))  # prompt tokens masked, EOS trained on


@pytest.mark.parametrize("loss_type, label_smoothing", [("sigmoid", 0.0), ("hinge", 0.0), ("ipo", 0.0), ("robust", 0.1)])
def test_dpo_loss_gradients_and_metrics_match_trl(tiny, loss_type, label_smoothing):
    from datasets import Dataset
    from trl import DPOConfig, DPOTrainer

    folder, tokenizer, prompts, chosen, rejected, out = tiny
    beta = 0.3
    args = DPOConfig(
        output_dir=str(out), use_cpu=True, bf16=False, report_to=[], loss_type=[loss_type], beta=beta,
        label_smoothing=label_smoothing, per_device_train_batch_size=4, precompute_ref_log_probs=False,
    )
    dataset = Dataset.from_dict({"prompt": ["ab"] * 4, "chosen": ["cd"] * 4, "rejected": ["ef"] * 4})
    trainer = DPOTrainer(model=folder, args=args, train_dataset=dataset, processing_class=tokenizer)
    model, reference = trainer.model, trainer.ref_model
    assert reference is not None
    g = torch.Generator().manual_seed(2)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(0.05 * torch.randn(p.shape, generator=g))
    model.train()
    pad = tokenizer.pad_token_id
    c, r = build_sequences(prompts, chosen, pad), build_sequences(prompts, rejected, pad)
    width = max(c.input_ids.shape[1], r.input_ids.shape[1])
    pairs = PairBatch(*(type(b)(*(torch.nn.functional.pad(getattr(b, k), (0, width - b.input_ids.shape[1]), value=pad if k == "input_ids" else 0) for k in ("input_ids", "attention_mask", "completion_mask"))) for b in (c, r)))
    joined = pairs.joined()
    inputs = {"input_ids": joined.input_ids, "attention_mask": joined.attention_mask, "completion_mask": joined.completion_mask}

    model.zero_grad(set_to_none=True)
    trl_value = trainer.compute_loss(model, dict(inputs))
    trl_value.backward()
    trl_grads = _grads(model)
    metrics = {k: v[-1] for k, v in trainer._metrics["train"].items()}

    model.zero_grad(set_to_none=True)
    logps = sequence_logps(token_logps(forward_logits(model, joined), joined.labels), joined.label_mask)
    with torch.no_grad():
        ref = sequence_logps(token_logps(forward_logits(reference, joined), joined.labels), joined.label_mask)
    tokens = joined.label_mask.sum(dim=1).float()
    value, stats = dpo_loss(*logps.chunk(2), *ref.chunk(2), beta, loss_type, label_smoothing, *tokens.chunk(2))
    value.backward()
    torch.testing.assert_close(value, trl_value, rtol=RTOL, atol=ATOL)
    _assert_same_grads(_grads(model), trl_grads)
    assert stats["dpo/margin"] == pytest.approx(metrics["rewards/margins"], rel=RTOL, abs=ATOL)
    assert stats["dpo/accuracy"] == pytest.approx(metrics["rewards/accuracies"], abs=1e-7)
    assert stats["dpo/chosen_reward"] == pytest.approx(metrics["rewards/chosen"], rel=RTOL, abs=ATOL)
    assert stats["dpo/rejected_reward"] == pytest.approx(metrics["rewards/rejected"], rel=RTOL, abs=ATOL)
    assert float(trl_value.detach()) > 0 and max(float(t.abs().max()) for t in trl_grads.values()) > 0  # a non-trivial case


def test_dpo_loss_refuses_an_unknown_variant():
    z = torch.zeros(2)
    with pytest.raises(ValueError, match="unknown DPO loss type 'exo'"):
        dpo_loss(z, z, z, z, 0.1, "exo")
