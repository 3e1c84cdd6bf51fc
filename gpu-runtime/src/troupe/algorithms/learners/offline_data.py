"""Dataset rows -> token batches for the offline learners (SFT, DPO).

A sequence is the rendered prompt (the same text an RL rollout of this environment would read) followed
by the target completion and one end-of-sequence token, right-padded. `completion_mask` is 1 on the
completion's tokens (EOS included), 0 on the prompt and the padding, so only the completion is trained on.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch

from ...envs.environments import SingleTurnEnvironment
from ...spec import SpecError
from ...spec.runspec_types import Environment as EnvironmentSection
from ...models.tokenizer import Tokenizer

SFT_DEFAULT_FIELD = "completion"
DPO_DEFAULT_FIELDS = ("chosen", "rejected")


@dataclass
class SequenceBatch:
    input_ids: torch.Tensor  # [B, L] right-padded
    attention_mask: torch.Tensor  # [B, L]
    completion_mask: torch.Tensor  # [B, L] 1 on completion tokens

    def to(self, device: torch.device) -> "SequenceBatch":
        return SequenceBatch(self.input_ids.to(device), self.attention_mask.to(device), self.completion_mask.to(device))

    def rows(self, lo: int, hi: int) -> "SequenceBatch":
        return SequenceBatch(self.input_ids[lo:hi], self.attention_mask[lo:hi], self.completion_mask[lo:hi])

    @property
    def labels(self) -> torch.Tensor:
        """The token each position predicts (shifted by one), aligned with `logits[:, :-1]`."""
        return self.input_ids[:, 1:]

    @property
    def label_mask(self) -> torch.Tensor:
        return self.completion_mask[:, 1:]


def end_token(tokenizer: Tokenizer) -> int:
    own = getattr(tokenizer, "eos_token_id", None)
    if own is None:
        inner = getattr(tokenizer, "tokenizer", None)
        own = getattr(inner, "eos_token_id", None)
    return int(own) if own is not None else int(tokenizer.eos_token_ids[0])  # type: ignore[attr-defined]


def build_sequences(prompts: Sequence[Sequence[int]], completions: Sequence[Sequence[int]], pad_id: int) -> SequenceBatch:
    """Right-padded prompt + completion sequences with their completion masks."""
    width = max(len(p) + len(c) for p, c in zip(prompts, completions))
    ids = torch.full((len(prompts), width), pad_id, dtype=torch.long)
    attention = torch.zeros((len(prompts), width), dtype=torch.long)
    completion = torch.zeros((len(prompts), width), dtype=torch.long)
    for i, (p, c) in enumerate(zip(prompts, completions)):
        n = len(p) + len(c)
        ids[i, :n] = torch.tensor([*p, *c], dtype=torch.long)
        attention[i, :n] = 1
        completion[i, len(p) : n] = 1
    return SequenceBatch(ids, attention, completion)


Targets = list[tuple[str, str]]  # (spec field, dataset column) of each target, in batch order


def target_fields(section: EnvironmentSection, algorithm: str) -> Targets:
    """(spec field, dataset column) pairs of the targets this environment's rows must have."""
    if algorithm == "sft":
        return [("completionField", section.completion_field or SFT_DEFAULT_FIELD)]
    return [
        ("chosenField", section.chosen_field or DPO_DEFAULT_FIELDS[0]),
        ("rejectedField", section.rejected_field or DPO_DEFAULT_FIELDS[1]),
    ]


def check_target_columns(env: SingleTurnEnvironment, targets: Targets, algorithm: str) -> None:
    """A field-named refusal when the dataset lacks a target column (found when the dataset loads)."""
    columns = env.dataset.columns()
    for field, column in targets:
        if column not in columns:
            what = "supervised completions" if algorithm == "sft" else "preference pairs"
            raise SpecError.at(
                f"environments.{env.index}.{field}",
                f'{algorithm} trains on {what}: dataset "{env.dataset.name}" has no column "{column}" '
                f'in every row (columns: {", ".join(sorted(columns))})',
            )


@dataclass
class OfflineRows:
    """One environment's rows for a step, tokenised: SFT has one batch, DPO a chosen and a rejected batch."""

    env: SingleTurnEnvironment
    row_indices: list[int]
    batches: list[SequenceBatch]


def tokenise_rows(env: SingleTurnEnvironment, row_indices: list[int], tokenizer: Tokenizer, targets: Targets) -> OfflineRows:
    eos = end_token(tokenizer)
    pad = int(tokenizer.pad_token_id)  # type: ignore[attr-defined]
    prompts = []
    for r in row_indices:
        rendered = env.render(env.dataset.rows[r], r, tokenizer)
        prompts.append(tokenizer.encode(rendered.text, rendered.add_special_tokens))
    batches = []
    for _, column in targets:
        targets = [tokenizer.encode(str(env.dataset.rows[r][column]), add_special_tokens=False) + [eos] for r in row_indices]
        batches.append(build_sequences(prompts, targets, pad))
    return OfflineRows(env, row_indices, batches)
