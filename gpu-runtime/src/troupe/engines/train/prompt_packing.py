"""Shared-prompt packing for the trainer's forward: the rows of a GRPO group share one prompt, so run it once.

A batch of B rows, each `prompt (p, left-padded) + completion (t)`, costs B * (p + t) token positions in every
linear layer. The rows of a group (groupSize samples of one prompt) repeat the same prompt tokens; packed, a
group is one row `prompt (its L real tokens) + completion 1 + ... + completion n` (L + n * t positions), with a
4-D attention mask that lets each completion see the prompt and its own earlier tokens only, and the position
ids each row had alone. Each completion token then attends to exactly the keys it attended to unpacked, at the
same positions, so the hidden states are the unpacked ones up to float rounding (the tests hold them to 1e-5).
On the demo (prompt 6 tokens, 8 new tokens, groups of 8) a step's forward + backward runs over 560 positions
instead of 896.

Only where the mask is known to mean that: models whose attention masks are plain causal ones built by
transformers' `create_causal_mask` (which passes a 4-D mask through as given), with `sdpa` or `eager`
attention (a boolean mask, or an additive one for eager), no sliding-window layers. Elsewhere, or when packing
saves under 10% of the positions, or when a packed row would be longer than MAX_PACKED_LENGTH (the dense mask
grows with its square), the batch runs as it is.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

import torch

PACKABLE_MODEL_TYPES = frozenset({"qwen2", "qwen3", "llama"})
PACKABLE_ATTENTION = frozenset({"sdpa", "eager"})
MAX_PACKED_LENGTH = 4096
MIN_SAVING = 0.10  # pack only when it removes at least this share of the token positions


@dataclass(frozen=True)
class PackedBatch:
    input_ids: torch.Tensor  # [G, S]
    position_ids: torch.Tensor  # [G, S]
    allowed: torch.Tensor  # [G, 1, S, S] bool: query (row) may attend to key (column)
    gather: torch.Tensor  # [B, t] flat index into [G * S]: where each row's completion-predicting states are
    tokens: int  # G * S
    unpacked_tokens: int  # B * (p + t)

    def attention_mask(self, implementation: str, dtype: torch.dtype) -> torch.Tensor:
        if implementation == "eager":  # eager adds the mask to the scores
            return torch.zeros(self.allowed.shape, dtype=dtype, device=self.allowed.device).masked_fill(~self.allowed, torch.finfo(dtype).min)
        return self.allowed


def packing_supported(model: Any) -> bool:
    config = getattr(model, "config", None)
    if config is None or getattr(config, "model_type", None) not in PACKABLE_MODEL_TYPES:
        return False
    if getattr(config, "_attn_implementation", None) not in PACKABLE_ATTENTION:
        return False
    if getattr(config, "use_sliding_window", False):
        return False
    layer_types = getattr(config, "layer_types", None)
    return layer_types is None or all(kind == "full_attention" for kind in layer_types)


def _groups(prompt_ids: torch.Tensor, prompt_mask: torch.Tensor) -> list[tuple[list[int], list[int]]]:
    """(real prompt tokens, rows) per packed row, in order of first appearance: the rows of each distinct prompt,
    in chunks of at most the median count. Two groups drawn with the same prompt would otherwise make one row twice
    as long as the others, and every packed row is padded to the longest."""
    by_prompt: dict[tuple[int, ...], list[int]] = {}
    for row, (ids, mask) in enumerate(zip(prompt_ids.tolist(), prompt_mask.tolist())):
        key = tuple(token for token, keep in zip(ids, mask) if keep)
        by_prompt.setdefault(key, []).append(row)
    chunk = max(1, int(statistics.median_low(len(rows) for rows in by_prompt.values())))
    return [(list(key), rows[i : i + chunk]) for key, rows in by_prompt.items() for i in range(0, len(rows), chunk)]


def plan_packing(prompt_ids: torch.Tensor, prompt_mask: torch.Tensor, completion_ids: torch.Tensor, completion_mask: torch.Tensor) -> PackedBatch | None:
    """The packed layout of a batch, or None when it would not pay (or a prompt has no real token)."""
    rows, p = prompt_ids.shape
    t = completion_ids.shape[1]
    if rows < 2 or t == 0:
        return None
    groups = _groups(prompt_ids, prompt_mask)
    if any(len(prompt) == 0 for prompt, _ in groups):
        return None  # a query with no prompt key to see would make a fully masked row
    width = max(len(prompt) + len(members) * t for prompt, members in groups)
    if width > MAX_PACKED_LENGTH or len(groups) * width > (1 - MIN_SAVING) * rows * (p + t):
        return None
    device = prompt_ids.device
    g = len(groups)
    input_ids = torch.zeros(g, width, dtype=prompt_ids.dtype, device=device)
    position_ids = torch.zeros(g, width, dtype=torch.long, device=device)
    # Which segment each packed position belongs to: -1 prompt, i >= 0 the group's i-th completion, -2 padding.
    segment = torch.full((g, width), -2, dtype=torch.long, device=device)
    key_live = torch.zeros(g, width, dtype=torch.bool, device=device)  # may be attended to at all
    gather = torch.empty(rows, t, dtype=torch.long, device=device)
    offsets = torch.arange(t, device=device)
    for gi, (prompt, members) in enumerate(groups):
        length = len(prompt)
        input_ids[gi, :length] = torch.tensor(prompt, dtype=prompt_ids.dtype, device=device)
        position_ids[gi, :length] = torch.arange(length, device=device)
        segment[gi, :length] = -1
        key_live[gi, :length] = True
        n = len(members)
        rows_of = torch.tensor(members, device=device)
        span = slice(length, length + n * t)
        input_ids[gi, span] = completion_ids[rows_of].reshape(-1)
        # As unpacked: position = (number of real tokens up to here) - 1, over prompt + completion.
        position_ids[gi, span] = (length + completion_mask[rows_of].long().cumsum(1) - 1).reshape(-1)
        segment[gi, span] = torch.arange(n, device=device).repeat_interleave(t)
        key_live[gi, span] = completion_mask[rows_of].bool().reshape(-1)
        # The state at the prompt's last token predicts completion token 0; the state at completion token a
        # predicts token a + 1.
        gather[rows_of, 0] = gi * width + length - 1
        starts = gi * width + length + torch.arange(n, device=device) * t
        gather[rows_of, 1:] = starts[:, None] + offsets[None, :-1]
    index = torch.arange(width, device=device)
    causal = index[None, :] <= index[:, None]  # [S_query, S_key]
    q_seg, k_seg = segment[:, :, None], segment[:, None, :]
    sees_prompt = (k_seg == -1) & ((q_seg != -1) | causal)  # completions see the whole prompt, the prompt is causal
    sees_own = (k_seg >= 0) & (k_seg == q_seg) & causal
    allowed = (sees_prompt | sees_own) & key_live[:, None, :]
    # Padding queries (outputs discarded) see the first prompt token, so no row of the mask is empty.
    allowed[:, :, 0] |= (segment == -2)
    return PackedBatch(input_ids, position_ids, allowed[:, None], gather, g * width, rows * (p + t))


def gather_rows(packed_output: torch.Tensor, plan: PackedBatch) -> torch.Tensor:
    """[G, S, D] packed outputs -> [B, t, D]: each row's states at the positions that predict its completion."""
    flat = packed_output.reshape(-1, packed_output.shape[-1])
    return flat[plan.gather]
