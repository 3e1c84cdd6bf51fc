"""Token log-probs from the last hidden state and the LM head, without materialising all logits.

`token_logprobs(hidden, weight, targets)` equals
`log_softmax(hidden @ weight.T / temperature, -1).gather(-1, targets)` but walks the tokens in
chunks: only `chunk_size x vocab` logits exist at a time, in the forward pass and in the backward
pass (which recomputes each chunk's logits from the saved log-sum-exp instead of keeping them).
For a 150k vocabulary and long completions this is the difference between a few hundred MB and
tens of GB. Everything is computed in float32 whatever the input dtype.
"""

from __future__ import annotations

import torch

# About 64 MiB of float32 logits per chunk: small enough for CPU caches to matter little, large
# enough that the Python loop is negligible.
_DEFAULT_CHUNK_ELEMENTS = 1 << 24


def reference_token_logprobs(
    hidden: torch.Tensor, weight: torch.Tensor, targets: torch.Tensor, temperature: float = 1.0
) -> torch.Tensor:
    """The plain (memory-hungry) definition, for tests and as documentation."""
    logits = hidden.float() @ weight.float().T / temperature
    return torch.log_softmax(logits, dim=-1).gather(-1, targets.unsqueeze(-1)).squeeze(-1)


def _default_chunk(vocab_size: int) -> int:
    return max(1, _DEFAULT_CHUNK_ELEMENTS // max(1, vocab_size))


class _ChunkedTokenLogprobs(torch.autograd.Function):
    @staticmethod
    def forward(ctx, hidden, weight, targets, temperature, chunk_size, want_entropy):  # type: ignore[override]
        w = weight.float()
        n = hidden.shape[0]
        logprobs = torch.empty(n, dtype=torch.float32, device=hidden.device)
        lse_all = torch.empty(n, dtype=torch.float32, device=hidden.device)
        entropy = torch.empty(n if want_entropy else 0, dtype=torch.float32, device=hidden.device)
        for start in range(0, n, chunk_size):
            end = min(n, start + chunk_size)
            logits = hidden[start:end].float() @ w.T
            if temperature != 1.0:
                logits = logits / temperature
            lse = torch.logsumexp(logits, dim=-1)
            lse_all[start:end] = lse
            logprobs[start:end] = logits.gather(-1, targets[start:end].unsqueeze(-1)).squeeze(-1) - lse
            if want_entropy:
                probs = torch.exp(logits - lse.unsqueeze(-1))
                entropy[start:end] = lse - (probs * logits).sum(-1)
        ctx.save_for_backward(hidden, weight, targets, lse_all)
        ctx.temperature = temperature
        ctx.chunk_size = chunk_size
        ctx.mark_non_differentiable(entropy)
        return logprobs, entropy

    @staticmethod
    def backward(ctx, grad_logprobs, _grad_entropy):  # type: ignore[override]
        hidden, weight, targets, lse_all = ctx.saved_tensors
        temperature, chunk_size = ctx.temperature, ctx.chunk_size
        need_h, need_w = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
        w = weight.float()
        grad_h = torch.empty_like(hidden, dtype=torch.float32) if need_h else None
        grad_w = torch.zeros_like(w) if need_w else None
        for start in range(0, hidden.shape[0], chunk_size):
            end = min(hidden.shape[0], start + chunk_size)
            h = hidden[start:end].float()
            logits = h @ w.T
            if temperature != 1.0:
                logits = logits / temperature
            g_out = grad_logprobs[start:end].float()
            # d logp[t] / d logits = onehot(t) - softmax(logits), scaled by the upstream gradient.
            g_logits = torch.exp(logits - lse_all[start:end].unsqueeze(-1)) * (-g_out.unsqueeze(-1))
            g_logits.scatter_add_(-1, targets[start:end].unsqueeze(-1), g_out.unsqueeze(-1))
            if temperature != 1.0:
                g_logits = g_logits / temperature
            if need_h:
                grad_h[start:end] = g_logits @ w
            if need_w:
                grad_w += g_logits.T @ h
        return (
            grad_h.to(hidden.dtype) if need_h else None,
            grad_w.to(weight.dtype) if need_w else None,
            None,
            None,
            None,
            None,
        )


def token_logprobs(
    hidden: torch.Tensor,
    weight: torch.Tensor,
    targets: torch.Tensor,
    temperature: float = 1.0,
    chunk_size: int | None = None,
    return_entropy: bool = False,
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """Log-prob of each target token under `softmax(hidden @ weight.T / temperature)`.

    hidden: [..., H] (any float dtype), weight: [V, H] (the LM head), targets: [...] token ids.
    Returns float32 log-probs shaped like `targets`; with `return_entropy`, also the entropy of
    each position's distribution (not differentiable: it is a metric).
    Differentiable with respect to `hidden` and `weight`.
    """
    if hidden.shape[:-1] != targets.shape:
        raise ValueError(f"hidden {tuple(hidden.shape)} and targets {tuple(targets.shape)} disagree on the token dims")
    if weight.dim() != 2 or weight.shape[1] != hidden.shape[-1]:
        raise ValueError(f"weight must be [vocab, {hidden.shape[-1]}], got {tuple(weight.shape)}")
    if temperature <= 0:
        raise ValueError("temperature must be > 0")
    lead_shape = targets.shape
    h2 = hidden.reshape(-1, hidden.shape[-1])
    t1 = targets.reshape(-1).long()
    chunk = chunk_size if chunk_size is not None else _default_chunk(weight.shape[0])
    if chunk < 1:
        raise ValueError("chunk_size must be >= 1")
    logprobs, entropy = _ChunkedTokenLogprobs.apply(h2, weight, t1, float(temperature), int(chunk), return_entropy)
    logprobs = logprobs.reshape(lead_shape)
    if return_entropy:
        return logprobs, entropy.reshape(lead_shape)
    return logprobs
