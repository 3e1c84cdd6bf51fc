"""SFT math as pure functions of tensors: token cross-entropy on the completion, prompt tokens masked.

Shapes: `logits` [B, T, V] already aligned with `labels` [B, T] (position t predicts labels[t]; the
caller drops the last logit and the first token), `mask` [B, T] 1 on completion tokens (EOS included).
The loss is the mean over every completion token of the batch (TRL's SFTTrainer with
`completion_only_loss`: Hugging Face's causal-LM loss over the labels that are not -100).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F


def sft_loss(logits: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor, normaliser: float | None = None) -> tuple[torch.Tensor, dict[str, float]]:
    """Summed token cross-entropy over masked positions / `normaliser` (default: the batch's token count).

    A micro-batch passes the whole batch's token count as `normaliser`, so its gradients sum to the batch's.
    Returns the loss and stats: `sft/token_accuracy` (argmax equals the label, share of completion tokens),
    `tokens`.
    """
    m = mask.bool()
    ce = F.cross_entropy(logits.float().reshape(-1, logits.shape[-1]), labels.reshape(-1), reduction="none").view_as(labels)
    tokens = float(m.sum())
    denominator = normaliser if normaliser is not None else max(tokens, 1.0)
    loss = (ce * m).sum() / denominator
    return loss, {"sft/token_accuracy": token_accuracy(logits, labels, mask), "tokens": tokens}


def token_accuracy(logits: torch.Tensor, labels: torch.Tensor, mask: torch.Tensor) -> float:
    """Share of completion tokens where the model's most likely token is the label (TRL's mean_token_accuracy)."""
    with torch.no_grad():
        m = mask.bool()
        correct = (logits.argmax(dim=-1) == labels) & m
        return float(correct.sum()) / max(float(m.sum()), 1.0)
