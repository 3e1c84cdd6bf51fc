"""How the HF engine decodes: a static KV cache and a compiled step on CUDA, the lean loop on CPU.

Why: on the first H200 run the lean loop (lean_sampling.py) decoded 1,158 tok/s at the Qwen2.5-0.5B
shape, launch-bound (6,176 kernel launches for 32 tokens; CPU 721 ms against CUDA 110 ms), while
transformers' own `generate(cache_implementation="static")`, which compiles the decode step,
reached 13,723 tok/s in the same run. On CPU the lean loop stays: it is the fastest path there
(eager, no compile; compiling a tiny Qwen2's step took ~90 s on this project's 2-core machines).

The static path is transformers' `generate` with `cache_implementation="static"`: a fixed-size KV
cache and, on CUDA, the model's forward compiled by transformers with its default CompileConfig
(the configuration measured above). A compiled graph is specialised to its shapes, so prompts are
left-padded to a multiple of `LENGTH_BUCKET` (masked padding: the same logits) and the cache
length is that plus `maxNewTokens`: one compile per run and (batch, cache length) bucket, not one
per prompt length. The first call of each bucket is timed and reported through `on_compile`
(the runtime logs it: "compiled ... in N s"). The extra padding columns are dropped again, so the
caller sees exactly what the lean loop returns. Logits processors (the log-prob capture, the
warpers) run eagerly around the compiled forward, as in `generate` everywhere.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable

import torch
from transformers import LogitsProcessorList

LENGTH_BUCKET = 64


@dataclass(frozen=True)
class Bucket:
    model: int  # id() of the module
    batch: int
    prompt_len: int
    cache_len: int
    dtype: str
    device: str


@dataclass(frozen=True)
class CompileRecord:
    bucket: Bucket
    seconds: float  # the bucket's first call: compile plus one generation
    compiled: bool


_SEEN: dict[Bucket, CompileRecord] = {}
_listeners: list[Callable[[CompileRecord], Any]] = []


def on_compile(listener: Callable[[CompileRecord], Any]) -> Callable[[], None]:
    """Calls `listener` with each new bucket's record; returns a function that removes it."""
    _listeners.append(listener)
    return lambda: _listeners.remove(listener)


def compile_records() -> list[CompileRecord]:
    return list(_SEEN.values())


def describe(record: CompileRecord) -> str:
    b = record.bucket
    what = "compiled the static-cache decode step" if record.compiled else "static-cache decode (not compiled)"
    return (
        f"{what} for batch {b.batch}, prompts padded to {b.prompt_len}, cache length {b.cache_len} ({b.dtype}, {b.device}) "
        f"in {record.seconds:.1f}s (first call of this bucket, one generation included)"
    )


def decoder_for(device: torch.device) -> str:
    """'static' on CUDA (static cache, compiled step), 'lean' elsewhere (the eager lean loop)."""
    return "static" if device.type == "cuda" else "lean"


def bucket_length(n: int, bucket: int = LENGTH_BUCKET) -> int:
    return max(bucket, -(-n // bucket) * bucket)


def _left_pad_to(ids: torch.Tensor, mask: torch.Tensor, width: int, pad: int) -> tuple[torch.Tensor, torch.Tensor]:
    extra = width - ids.shape[1]
    if extra <= 0:
        return ids, mask
    return (
        torch.cat([ids.new_full((ids.shape[0], extra), pad), ids], dim=1),
        torch.cat([mask.new_zeros((mask.shape[0], extra)), mask], dim=1),
    )


@torch.no_grad()
def static_generate(
    model: Any,
    prompt_ids: torch.Tensor,
    prompt_mask: torch.Tensor,
    processors: LogitsProcessorList,
    greedy: bool,
    max_new_tokens: int,
    *,
    compile: bool | None = None,
    bucket: int = LENGTH_BUCKET,
) -> torch.Tensor:
    """[B, P + n] prompts and completions, as `lean_generate` returns them. `compile`: None = on CUDA only."""
    device = prompt_ids.device
    if compile is None:
        compile = device.type == "cuda"
    pad = model.generation_config.pad_token_id
    if pad is None:
        eos = model.generation_config.eos_token_id
        pad = eos[0] if isinstance(eos, list) else eos
    width = bucket_length(prompt_ids.shape[1], bucket)
    ids, mask = _left_pad_to(prompt_ids, prompt_mask, width, int(pad))
    key = Bucket(id(model), ids.shape[0], width, width + max_new_tokens, str(next(model.parameters()).dtype), str(device))
    first = key not in _SEEN
    started = time.perf_counter()
    kwargs: dict[str, Any] = {"disable_compile": not compile}
    sequences = model.generate(
        input_ids=ids,
        attention_mask=mask,
        do_sample=not greedy,
        temperature=1.0,  # neutral: the caller's warpers do the work, as in rollout._generate
        top_k=0,
        top_p=1.0,
        max_new_tokens=max_new_tokens,
        logits_processor=processors,
        use_cache=True,
        cache_implementation="static",
        **kwargs,
    )
    if first:
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        record = CompileRecord(key, time.perf_counter() - started, compile)
        _SEEN[key] = record
        for listener in list(_listeners):
            listener(record)
    return sequences[:, width - prompt_ids.shape[1] :]
