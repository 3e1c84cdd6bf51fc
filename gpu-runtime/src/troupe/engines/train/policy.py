"""The trainer's view of a rollout: token log-probs of the completions under a model.

Positions match what `generate` used (position_ids = cumsum(mask) - 1), and log-probs come
from the last hidden state and the LM head through `troupe_kernels.token_logprobs` (chunked:
the [B, T, vocab] logits never exist at once). Models whose head is not a plain matmul
(softcapping, logit scale, bias) take the logits path instead. Rows that share a prompt (a GRPO group)
run packed, the prompt once per group (prompt_packing.py), where the model allows it.
"""

from __future__ import annotations

from typing import Any

import torch
from troupe_kernels import token_logprobs

from .prompt_packing import gather_rows, packing_supported, plan_packing
from ..rollout.sampling import Rollout


def _plain_head(model: Any) -> torch.nn.Module | None:
    if getattr(model, "_troupe_full_forward", False):  # sharded (fsdp2): only the root's forward gathers the head
        return None
    head = model.get_output_embeddings()
    config = model.config
    if head is None or getattr(head, "bias", None) is not None:
        return None
    if getattr(config, "final_logit_softcapping", None) or getattr(config, "logit_scale", None) not in (None, 1, 1.0):
        return None
    if not hasattr(model, model.base_model_prefix):
        return None
    return head


def completion_hidden(model: Any, rollout: Rollout) -> tuple[torch.Tensor, torch.Tensor] | None:
    """([B, T, H] last hidden states that predict the completion tokens, the LM head weight [V, H]).

    Runs only the model body (no LM head, so no [B, T, vocab] logits); None when the head is not
    a plain matmul (the caller then takes the logits path).
    """
    head = _plain_head(model)
    if head is None:
        return None
    body = getattr(model, model.base_model_prefix)
    return head_operands(_predicting_states(model, body, rollout, lambda out: out.last_hidden_state), head.weight)


def head_operands(hidden: torch.Tensor, weight: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The LM head's operands as the model's own `nn.Linear` head would multiply them: under CUDA autocast, in
    the autocast dtype (gradients flow back to the float32 masters through the cast).

    Why: the final norm returns float32 under autocast (the residual stream is float32 over float32 masters),
    so the fused head received float32 operands and ran float32 GEMMs: on an H200 (2026-11-28, Qwen2.5-0.5B
    shape, 64 x 384 tokens) those SGEMMs were 364 of an update step's 636 ms of CUDA time. CPU is left alone:
    its tiled path multiplies in float32 whatever it is given, so a cast there would lose precision for no speed.
    """
    if hidden.is_cuda and torch.is_autocast_enabled("cuda"):
        dtype = torch.get_autocast_dtype("cuda")
        return hidden.to(dtype), weight.to(dtype)
    return hidden, weight


def _predicting_states(model: Any, module: Any, rollout: Rollout, output: Any) -> torch.Tensor:
    """[B, t, D]: `output(module(...))` at the positions that predict the completion tokens, packed by shared
    prompt where that pays and the model allows it."""
    plan = plan_packing(rollout.prompt_ids, rollout.prompt_mask, rollout.completion_ids, rollout.completion_mask) if packing_supported(model) else None
    if plan is not None:
        mask = plan.attention_mask(model.config._attn_implementation, model.dtype)
        packed = output(module(input_ids=plan.input_ids, attention_mask=mask, position_ids=plan.position_ids, use_cache=False))
        return gather_rows(packed, plan)
    input_ids = torch.cat([rollout.prompt_ids, rollout.completion_ids], dim=1)
    attention_mask = torch.cat([rollout.prompt_mask, rollout.completion_mask], dim=1)
    position_ids = (attention_mask.cumsum(dim=1) - 1).clamp(min=0)
    p, t = rollout.prompt_ids.shape[1], rollout.completion_ids.shape[1]
    states = output(module(input_ids=input_ids, attention_mask=attention_mask, position_ids=position_ids, use_cache=False))
    # The state at position i predicts token i + 1.
    return states[:, p - 1 : p + t - 1]


def completion_logprobs(
    model: Any, rollout: Rollout, temperature: float, with_entropy: bool = False, entropy_grad: bool = False
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """[B, T] log-probs of the completion tokens (float32) and, optionally, per-token entropy
    (detached, a metric; with `entropy_grad` differentiable, for an entropy bonus in the loss).

    The policy update (with autograd) and the reference/old log-probs (under no_grad) both come
    through here, so both use the same kernel and neither materialises full logits.
    """
    temperature = temperature if temperature > 0 else 1.0
    fused = completion_hidden(model, rollout)
    if fused is not None:
        h, weight = fused
        if not with_entropy:
            return token_logprobs(h, weight, rollout.completion_ids, temperature=temperature), None  # type: ignore[return-value]
        logp, entropy = token_logprobs(h, weight, rollout.completion_ids, temperature=temperature, return_entropy=True)
        return logp, entropy if entropy_grad else entropy.detach()
    logits = _predicting_states(model, model, rollout, lambda out: out.logits)
    logp_all = torch.log_softmax(logits.float() / temperature, dim=-1)
    logp = logp_all.gather(-1, rollout.completion_ids.unsqueeze(-1)).squeeze(-1)
    entropy = -(logp_all.exp() * logp_all).sum(-1) if with_entropy else None
    return logp, entropy if entropy is None or entropy_grad else entropy.detach()
