"""Our GRPO-family losses against TRL 1.13's, on the same model, tokens and log-probs.

TRL's loss is not a free function: it is `GRPOTrainer._compute_loss`, reached through the public
`Trainer.compute_loss(model, inputs)`. So a real `GRPOTrainer` is built on a tiny Llama (CPU, fp32,
no gradient checkpointing) and handed one batch in the shape its rollout step produces:
prompt/completion ids and masks, advantages, the old and reference log-probs, and
`num_items_in_batch`. The old/reference log-probs are the model's own shifted by fixed seeded
offsets, so ratios leave 1 and both clip sides are active. Our `policy_loss` gets the same
advantages, old/reference log-probs and mask, and the model's log-probs from `completion_logprobs`.
Both the loss and every parameter's gradient must agree (fp32; tolerance 1e-5 relative, 1e-6
absolute: the two paths do the same float32 ops in a different order, a chunked log-softmax on
our side).

Prompts have equal length (no left padding): TRL lets the model count positions from 0 over
padding, we count them over real tokens (as `generate` does); equal-length prompts make the
two conventions the same, so the comparison isolates the loss.
"""

import pytest
import torch

trl = pytest.importorskip("trl", reason="trl is in the test extra: pip install -e 'gpu-runtime[test]'")

from troupe.algorithms.grpo import policy_loss  # noqa: E402
from troupe.engines.train.policy import completion_logprobs  # noqa: E402
from troupe.engines.rollout.sampling import Rollout  # noqa: E402

B, P, T = 8, 5, 7  # 2 groups of 4 completions; prompts of 5 tokens; completions up to 7


@pytest.fixture(scope="module")
def setup(tmp_path_factory):
    from datasets import Dataset
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
    # Saved and passed by path: with beta > 0 TRL loads its reference model from the same folder.
    folder = tmp_path_factory.mktemp("tiny-llama")
    LlamaForCausalLM(config).save_pretrained(folder)
    fast.save_pretrained(folder)
    g = torch.Generator().manual_seed(1)
    prompt_ids = torch.randint(0, 200, (B, P), generator=g)
    completion_ids = torch.randint(0, 200, (B, T), generator=g)
    lengths = torch.tensor([7, 3, 5, 7, 1, 6, 7, 2])
    completion_mask = (torch.arange(T).unsqueeze(0) < lengths.unsqueeze(1)).long()
    completion_ids = torch.where(completion_mask.bool(), completion_ids, torch.full_like(completion_ids, fast.pad_token_id))
    batch = dict(
        prompt_ids=prompt_ids,
        prompt_mask=torch.ones(B, P, dtype=torch.long),
        completion_ids=completion_ids,
        completion_mask=completion_mask,
        advantages=torch.tensor([1.2, -0.4, -0.8, 0.0, 0.9, -1.1, 0.3, -0.1]),
        old_offset=0.3 * torch.randn(B, T, generator=g),
        ref_offset=0.2 * torch.randn(B, T, generator=g),
    )
    dataset = Dataset.from_dict({"prompt": ["abc"] * 8})
    return str(folder), fast, dataset, batch, tmp_path_factory.mktemp("trl")


def _trainer(setup, loss_type, beta, level="token"):
    from trl import GRPOConfig, GRPOTrainer

    model, tokenizer, dataset, _, out = setup
    args = GRPOConfig(
        output_dir=str(out),
        use_cpu=True,
        bf16=False,
        gradient_checkpointing=False,
        loss_type=loss_type,
        importance_sampling_level=level,
        beta=beta,
        # TRL 1.13 defaults to weighting the k3 KL by the importance ratio; ours is the plain k3 (as
        # TRL < 1.x and the GRPO paper): compare like with like.
        use_bias_correction_kl=False,
        epsilon=0.2,
        epsilon_high=0.28,
        max_completion_length=T,
        num_generations=4,
        per_device_train_batch_size=B,
        report_to=[],
        temperature=1.0,
    )
    return GRPOTrainer(model=model, reward_funcs=[lambda completions, **_: [0.0] * len(completions)], args=args, train_dataset=dataset, processing_class=tokenizer)


def _grads(model):
    return {n: p.grad.detach().clone() for n, p in model.named_parameters() if p.grad is not None}


@pytest.mark.parametrize(
    "trl_loss, level, ours",
    [("grpo", "token", "grpo"), ("dr_grpo", "token", "dr_grpo"), ("dapo", "token", "dapo"), ("grpo", "sequence", "gspo")],
)
@pytest.mark.parametrize("beta", [0.0, 0.04])
def test_loss_and_gradients_match_trl(setup, trl_loss, level, ours, beta):
    _, _, _, b, _ = setup
    trainer = _trainer(setup, trl_loss, beta, level)
    model = trainer.model
    model.train()
    # Trainer's loop sets this per accumulation window before compute_loss; with
    # gradient_accumulation_steps=1 it is 1 (one micro-batch per optimizer step).
    trainer.current_gradient_accumulation_steps = 1
    rollout = Rollout(b["prompt_ids"], b["prompt_mask"], b["completion_ids"], b["completion_mask"], torch.zeros(B, T), [])
    with torch.no_grad():
        current, _ = completion_logprobs(model, rollout, 1.0)
    mask = b["completion_mask"]
    old = (current + b["old_offset"]) * mask
    ref = (current + b["ref_offset"]) * mask
    inputs = dict(
        prompt_ids=b["prompt_ids"],
        prompt_mask=b["prompt_mask"],
        completion_ids=b["completion_ids"],
        completion_mask=mask,
        advantages=b["advantages"],
        old_per_token_logps=old,
        num_items_in_batch=mask.sum(),
    )
    if beta:
        inputs["ref_per_token_logps"] = ref

    model.zero_grad(set_to_none=True)
    trl_value = trainer.compute_loss(model, inputs)
    trl_value.backward()
    trl_grads = _grads(model)

    model.zero_grad(set_to_none=True)
    logp, _ = completion_logprobs(model, rollout, 1.0)
    value, stats = policy_loss(
        logp, old, b["advantages"], mask, loss_type=ours, clip_eps_low=0.2, clip_eps_high=0.28, max_completion_len=T,
        ref_logp=ref if beta else None, kl_beta=beta,
    )
    value.backward()
    our_grads = _grads(model)

    assert float(value.detach()) == pytest.approx(float(trl_value.detach()), rel=1e-5, abs=1e-6)
    assert stats["clip_frac"] > 0  # the offsets really exercise the clip
    assert trl_grads.keys() == our_grads.keys() and trl_grads
    for name in trl_grads:
        torch.testing.assert_close(our_grads[name], trl_grads[name], rtol=1e-5, atol=1e-6, msg=lambda m, n=name: f"{n}: {m}")
