"""Sampling completions with transformers `generate` (KV cache), keeping the sampler's own tokens
and log-probs: completions are never re-tokenised from text. Where the model allows, the same model
calls run in a lean loop of our own (lean_sampling.py: the same draws, bit for bit, with less around them).

The sampler's log-prob of a token is log_softmax(raw logits / temperature) at the step it was
drawn, read by a logits processor placed before the truncating warpers (top-k, top-p), so it
is the same quantity the trainer recomputes and `logprob_gap` measures only numerical drift
(KV cache vs full forward, kernels, precision), not truncation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Sequence, Union

import torch
from transformers import LogitsProcessor, LogitsProcessorList, TemperatureLogitsWarper, TopKLogitsWarper, TopPLogitsWarper

from . import static_decode
from .lean_sampling import lean_generate, lean_sampling_refusal
from ...spec.runspec_types import ActorEvalSampling, ActorSampling


@dataclass
class Rollout:
    """B sampled sequences: left-padded prompts and right-padded completions."""

    prompt_ids: torch.Tensor  # [B, P]
    prompt_mask: torch.Tensor  # [B, P] 1 on prompt tokens, 0 on left padding
    completion_ids: torch.Tensor  # [B, T]
    completion_mask: torch.Tensor  # [B, T] 1 up to and including the first EOS
    sampler_logprobs: torch.Tensor  # [B, T] float32, meaningless where mask is 0
    texts: list[str]  # decoded completions (special tokens dropped)
    # [B] bool: the sampler drew an end-of-sequence token; False = cut off at maxNewTokens.
    # None where the rows are not single sampled completions (a conversation view).
    ended: torch.Tensor | None = None

    @property
    def lengths(self) -> torch.Tensor:
        return self.completion_mask.sum(dim=1)


def left_pad(sequences: Sequence[Sequence[int]], pad_id: int) -> tuple[torch.Tensor, torch.Tensor]:
    width = max(len(s) for s in sequences)
    ids = torch.full((len(sequences), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(sequences), width), dtype=torch.long)
    for i, s in enumerate(sequences):
        if s:
            ids[i, width - len(s) :] = torch.tensor(list(s), dtype=torch.long)
            mask[i, width - len(s) :] = 1
    return ids, mask


def completion_mask(completion_ids: torch.Tensor, eos_ids: Sequence[int]) -> torch.Tensor:
    """1 on every token up to and including the first EOS (all tokens when none was drawn)."""
    is_eos = torch.isin(completion_ids, torch.tensor(list(eos_ids), device=completion_ids.device))
    # Count of EOS strictly before each position: 0 means "still inside the completion".
    eos_before = torch.cumsum(is_eos.long(), dim=1) - is_eos.long()
    return (eos_before == 0).long()


class CaptureLogprobs(LogitsProcessor):
    """Records log_softmax(raw logits / T); reads each chosen token's log-prob one call later."""

    def __init__(self, temperature: float):
        self.temperature = temperature if temperature > 0 else 1.0
        self._previous: torch.Tensor | None = None
        self.chosen: list[torch.Tensor] = []

    def __call__(self, input_ids: torch.LongTensor, scores: torch.FloatTensor) -> torch.FloatTensor:
        if self._previous is not None:
            self._take(input_ids[:, -1])
        self._previous = torch.log_softmax(scores.float() / self.temperature, dim=-1)
        return scores

    def _take(self, tokens: torch.Tensor) -> None:
        assert self._previous is not None
        self.chosen.append(self._previous.gather(1, tokens.unsqueeze(1)).squeeze(1))

    def finish(self, last_tokens: torch.Tensor) -> torch.Tensor:
        self._take(last_tokens)
        self._previous = None
        return torch.stack(self.chosen, dim=1)


def model_device(model: Any, fallback: torch.device) -> torch.device:
    """Where the model's parameters are now (each actor has its own placement); `fallback` for a model without any."""
    try:
        return next(iter(model.parameters())).device
    except (StopIteration, AttributeError, TypeError):
        return fallback


SamplingSettings = Union[ActorSampling, ActorEvalSampling]


def sampling_settings(sampling: SamplingSettings | Mapping[str, Any]) -> SamplingSettings:
    """An actor's typed `sampling` (or `evalSampling`) section; a JSON document of one (what environments and
    evaluation still hand over) is read into the typed section, its absent fields at the schema's defaults."""
    return ActorSampling.from_dict(sampling) if isinstance(sampling, Mapping) else sampling


@torch.no_grad()
def sample(
    model: Any,
    tokenizer: Any,
    prompt_token_ids: Sequence[Sequence[int]],
    sampling: SamplingSettings | Mapping[str, Any],
    device: torch.device,
) -> Rollout:
    """One completion per prompt (repeat prompts for groups), with the actor's sampling settings (typed, or
    their JSON document)."""
    settings = sampling_settings(sampling)
    device = model_device(model, device)
    prompt_ids, prompt_mask = left_pad(prompt_token_ids, tokenizer.pad_token_id)
    prompt_ids, prompt_mask = prompt_ids.to(device), prompt_mask.to(device)
    temperature = float(settings.temperature)
    capture = CaptureLogprobs(temperature)
    processors: list[LogitsProcessor] = [capture]
    greedy = temperature == 0
    if not greedy:
        if temperature != 1.0:
            processors.append(TemperatureLogitsWarper(temperature))
        if settings.top_k > 0:
            processors.append(TopKLogitsWarper(int(settings.top_k)))
        if settings.top_p < 1.0:
            processors.append(TopPLogitsWarper(float(settings.top_p)))
    was_training = model.training
    model.eval()
    # A sharded model's every forward is a collective: keep ranks' forward counts equal even if one
    # rank's samples end earlier (transformers' synced_gpus, made for ZeRO-3 and FSDP).
    synced = bool(getattr(model, "_troupe_full_forward", False)) and torch.distributed.is_initialized()
    if lean_sampling_refusal(model, synced) is None:  # the same draws as generate's, with less around them
        # CUDA: static KV cache + compiled step; CPU: the lean loop
        decode = static_decode.static_generate if static_decode.decoder_for(device) == "static" else lean_generate
        sequences = decode(model, prompt_ids, prompt_mask, LogitsProcessorList(processors), greedy, int(settings.max_new_tokens))
    else:
        sequences = _generate(model, prompt_ids, prompt_mask, processors, greedy, int(settings.max_new_tokens), synced)
    if was_training:
        model.train()
    completion_ids = sequences[:, prompt_ids.shape[1] :]
    logprobs = capture.finish(completion_ids[:, -1])
    if logprobs.shape != completion_ids.shape:
        raise RuntimeError(f"captured {tuple(logprobs.shape)} log-probs for {tuple(completion_ids.shape)} tokens")
    mask = completion_mask(completion_ids, tokenizer.eos_token_ids)
    ended = torch.isin(completion_ids, torch.tensor(list(tokenizer.eos_token_ids), device=completion_ids.device)).any(dim=1)
    texts = []
    for ids, m in zip(completion_ids.tolist(), mask.tolist()):
        kept = [t for t, keep in zip(ids, m) if keep and t not in tokenizer.eos_token_ids]
        texts.append(tokenizer.decode(kept))
    return Rollout(prompt_ids, prompt_mask, completion_ids, mask, logprobs, texts, ended)


def _generate(model: Any, prompt_ids: torch.Tensor, prompt_mask: torch.Tensor, processors: list[LogitsProcessor], greedy: bool, max_new_tokens: int, synced: bool) -> torch.Tensor:
    return model.generate(
        synced_gpus=synced,
        input_ids=prompt_ids,
        attention_mask=prompt_mask,
        do_sample=not greedy,
        # Neutral values: the warpers above do the work, in the order HF would apply them.
        temperature=1.0,
        top_k=0,
        top_p=1.0,
        max_new_tokens=max_new_tokens,
        logits_processor=LogitsProcessorList(processors),
        use_cache=True,
    )


def _pad_to(t: torch.Tensor, width: int, value: int | float, left: bool) -> torch.Tensor:
    extra = width - t.shape[1]
    if extra == 0:
        return t
    pad = torch.full((t.shape[0], extra), value, dtype=t.dtype, device=t.device)
    return torch.cat([pad, t] if left else [t, pad], dim=1)


def concat_rollouts(parts: Sequence[Rollout], pad_id: int) -> Rollout:
    """Stack rollouts of one actor from several environments into one batch (re-padding)."""
    if len(parts) == 1:
        return parts[0]
    p = max(r.prompt_ids.shape[1] for r in parts)
    t = max(r.completion_ids.shape[1] for r in parts)
    return Rollout(
        torch.cat([_pad_to(r.prompt_ids, p, pad_id, left=True) for r in parts]),
        torch.cat([_pad_to(r.prompt_mask, p, 0, left=True) for r in parts]),
        torch.cat([_pad_to(r.completion_ids, t, pad_id, left=False) for r in parts]),
        torch.cat([_pad_to(r.completion_mask, t, 0, left=False) for r in parts]),
        torch.cat([_pad_to(r.sampler_logprobs, t, 0.0, left=False) for r in parts]),
        [text for r in parts for text in r.texts],
        torch.cat([r.ended for r in parts]) if all(r.ended is not None for r in parts) else None,  # type: ignore[misc]
    )


def select_rows(rollout: Rollout, rows: Sequence[int]) -> Rollout:
    """The given rows of a rollout, in that order (padding columns kept)."""
    index = torch.tensor(list(rows), dtype=torch.long, device=rollout.completion_ids.device)
    return Rollout(
        rollout.prompt_ids[index],
        rollout.prompt_mask[index],
        rollout.completion_ids[index],
        rollout.completion_mask[index],
        rollout.sampler_logprobs[index],
        [rollout.texts[i] for i in rows] if rollout.texts else [],
        rollout.ended[index] if rollout.ended is not None else None,
    )
