"""STAND-IN for vLLM's offline `LLM`: vLLM is not installed on any machine of this workplace.

This is not vLLM. It samples with a real Hugging Face model (loaded from the same folder vLLM would
load) and implements exactly the calls troupe/rollout_engines/vllm_engine.py makes (VLLM_CALLS there),
with vLLM's parameter names (vllm/entrypoints/llm.py `LLM.__init__`, `generate`, `sleep`, `wake_up`,
`reset_prefix_cache`; vllm/entrypoints/rl/offline.py `init_weight_transfer_engine`, `start_weight_update`,
`update_weights`, `finish_weight_update`; vllm/config `WeightTransferConfig`; the IPC backend's update_info,
vllm/distributed/weight_transfer/ipc_engine.py; vllm/sampling_params.py `SamplingParams`; vllm/lora/request.py
`LoRARequest`; vllm/outputs.py `RequestOutput`/`CompletionOutput`; vllm/sequence.py `Logprob`; vLLM 0.22-0.33),
and it enforces the contract those calls have in vLLM, so an engine that misuses them fails here:

- `sleep` needs `enable_sleep_mode=True`; level 1 backs the weights up on the host and drops the KV cache,
  level 2 drops both: after a level-2 sleep the weights are garbage (NaN here) until every parameter has
  been loaded again, and generating before that raises;
- `generate` while any part sleeps raises; so does a weight update while the weights sleep;
- weight sync: `init_weight_transfer_engine` needs `LLM(weight_transfer_config=...)` and comes once, before
  any update; then `start_weight_update` -> `update_weights` (any number) -> `finish_weight_update`, in that
  order (an update or finish without a start, or a second start, raises); `generate` or `sleep` while an
  update is open raises. Each update_info carries exactly the IPC backend's keys (names, dtype_names, shapes,
  ipc_handles) of equal lengths; each handle is keyed by the device ("cpu" here; the GPU's UUID in vLLM) and
  rebuilt as vLLM's receiver does; the rebuilt tensor must have the dtype and shape announced, and the name
  and shape of a parameter of the model;
- `wake_up(tags)` accepts only "weights" and "kv_cache" (None = both);
- `skip_tokenizer_init=True` accepts token-id prompts only and returns no text;
- log-probs follow `logprobs_mode` ("raw_logprobs": log_softmax of the raw logits; "processed_logprobs":
  after temperature, top-k and top-p), for the sampled token (`logprobs=0`); the sampled token ids include
  the stop token, and `finish_reason` is "stop" or "length";
- each request's `seed` drives its own generator, so equal seeds sample equal tokens;
- `lora_request` needs `enable_lora=True` and an adapter folder (peft's files);
- every call is recorded, in order, in `llm.calls` (the model's own `load_weights` too).

One process, no tensor parallelism (`tensor_parallel_size` must be 1), no paged attention, no CUDA graphs:
enough for the engine's contract, not for vLLM's speed or memory, which only real vLLM shows.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

import torch
from transformers import AutoModelForCausalLM

__version__ = "0.0.0+standin"
LOGPROBS_MODES = ("raw_logprobs", "raw_logits", "processed_logprobs", "processed_logits")
WAKE_TAGS = ("weights", "kv_cache")
TRANSFER_BACKENDS = ("nccl", "ipc")
IPC_UPDATE_KEYS = {"names", "dtype_names", "shapes", "ipc_handles"}


class StandinStateError(RuntimeError):
    """What real vLLM would do wrong silently or crash on: the stand-in raises instead."""


@dataclass
class SamplingParams:
    n: int = 1
    temperature: float = 1.0
    top_p: float = 1.0
    top_k: int = 0
    max_tokens: int | None = 16
    logprobs: int | None = None
    seed: int | None = None
    stop_token_ids: list[int] | None = None
    detokenize: bool = True

    def __post_init__(self) -> None:
        if self.n != 1:
            raise ValueError("stand-in: n > 1 is not implemented (the engine repeats prompts for groups)")
        if self.temperature < 0:
            raise ValueError(f"temperature must be non-negative, got {self.temperature}")
        if not 0 < self.top_p <= 1:
            raise ValueError(f"top_p must be in (0, 1], got {self.top_p}")
        if self.top_k < -1:
            raise ValueError(f"top_k must be -1 (disable), or at least 0, got {self.top_k}")


@dataclass
class WeightTransferConfig:
    backend: str = "nccl"

    def __post_init__(self) -> None:
        if self.backend not in TRANSFER_BACKENDS:
            raise ValueError(f"stand-in: weight transfer backend must be one of {TRANSFER_BACKENDS}, got {self.backend!r}")


class config:  # noqa: N801  (vllm.config, the module WeightTransferConfig is imported from)
    WeightTransferConfig = WeightTransferConfig


@dataclass
class LoRARequest:
    lora_name: str
    lora_int_id: int
    lora_path: str = ""

    def __post_init__(self) -> None:
        if self.lora_int_id < 1:
            raise ValueError(f"id must be > 0, got {self.lora_int_id}")


@dataclass
class Logprob:
    logprob: float
    rank: int | None = None
    decoded_token: str | None = None


@dataclass
class CompletionOutput:
    index: int
    text: str
    token_ids: list[int]
    cumulative_logprob: float | None
    logprobs: list[dict[int, Logprob]] | None
    finish_reason: str | None = None


@dataclass
class RequestOutput:
    request_id: str
    prompt: str | None
    prompt_token_ids: list[int]
    outputs: list[CompletionOutput]
    finished: bool = True


class StandinModel:
    """What vLLM's receiving worker loads into: the model's own `load_weights(weights) -> set of names`."""

    def __init__(self, hf: torch.nn.Module, llm: "LLM"):
        self.hf = hf
        self.llm = llm
        self.params = dict(hf.named_parameters())
        self.tied = bool(getattr(hf.config, "tie_word_embeddings", False))

    def load_weights(self, weights: Any) -> set[str]:
        if "weights" in self.llm.sleeping:
            raise StandinStateError("load_weights while the weights sleep: their memory is not mapped (wake_up(tags=['weights']) first)")
        loaded: set[str] = set()
        with torch.no_grad():
            for name, tensor in weights:
                if name not in self.params:
                    if self.tied and name == "lm_head.weight":
                        continue  # vLLM's loaders skip it when embeddings are tied
                    raise KeyError(f"stand-in: the model has no parameter {name!r}")
                target = self.params[name]
                if tuple(tensor.shape) != tuple(target.shape):
                    raise ValueError(f"stand-in: {name} has shape {tuple(target.shape)}, got {tuple(tensor.shape)}")
                target.copy_(tensor.to(target.device, target.dtype))
                loaded.add(name)
        self.llm.unloaded -= loaded
        self.llm.record("load_weights", len(loaded))
        return loaded


@dataclass
class _Request:
    ids: list[int]
    params: SamplingParams
    generator: torch.Generator
    out: list[int] = field(default_factory=list)
    logps: list[float] = field(default_factory=list)
    finish: str | None = None


class LLM:
    def __init__(
        self,
        model: str,
        *,
        tokenizer: str | None = None,
        skip_tokenizer_init: bool = False,
        tensor_parallel_size: int = 1,
        dtype: str = "auto",
        revision: str | None = None,
        seed: int | None = None,
        gpu_memory_utilization: float = 0.9,
        enforce_eager: bool = False,
        max_model_len: int | None = None,
        enable_sleep_mode: bool = False,
        enable_lora: bool = False,
        max_lora_rank: int = 16,
        logprobs_mode: str = "raw_logprobs",
        distributed_executor_backend: str | None = None,
        weight_transfer_config: WeightTransferConfig | None = None,
    ) -> None:
        if tensor_parallel_size != 1:
            raise ValueError("stand-in: one process, tensor_parallel_size must be 1")
        if not 0 < gpu_memory_utilization <= 1:
            raise ValueError(f"gpu_memory_utilization must be in (0, 1], got {gpu_memory_utilization}")
        if logprobs_mode not in LOGPROBS_MODES:
            raise ValueError(f"logprobs_mode must be one of {LOGPROBS_MODES}, got {logprobs_mode!r}")
        torch_dtype = {"auto": torch.float32, "float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}[dtype]
        hf = AutoModelForCausalLM.from_pretrained(model, revision=revision, dtype=torch_dtype).eval().requires_grad_(False)
        self.skip_tokenizer_init = skip_tokenizer_init
        self.enable_sleep_mode = enable_sleep_mode
        self.enable_lora = enable_lora
        self.max_lora_rank = max_lora_rank
        self.logprobs_mode = logprobs_mode
        self.max_model_len = max_model_len or int(getattr(hf.config, "max_position_embeddings", 2048))
        self.seed = seed
        self.sleeping: set[str] = set()
        self.sleep_level = 0
        self.unloaded: set[str] = set()  # parameters dropped by a level-2 sleep and not loaded since
        self._backup: dict[str, torch.Tensor] = {}
        self.calls: list[tuple[Any, ...]] = []
        self.model = StandinModel(hf, self)
        self._counter = 0
        self.weight_transfer_config = weight_transfer_config
        self.transfer_ready = False
        self.updating = False
        self.weight_version: str | None = None

    def record(self, *call: Any) -> None:
        self.calls.append(call)

    # ------------------------------------------------------------------ memory
    def sleep(self, level: int = 1) -> None:
        if not self.enable_sleep_mode:
            raise StandinStateError("Sleep mode is not enabled (LLM(enable_sleep_mode=True))")
        if level not in (1, 2):
            raise ValueError(f"stand-in: sleep level {level} (1 or 2)")
        if self.updating:
            raise StandinStateError("sleep while a weight update is open: finish_weight_update first")
        self.record("sleep", level)
        self.reset_prefix_cache()
        with torch.no_grad():
            for name, p in self.model.params.items():
                if level == 1:
                    self._backup[name] = p.detach().clone()
                p.fill_(float("nan"))  # the device memory is released: what was there is gone
        if level == 2:
            self._backup = {}
        self.sleep_level = level
        self.sleeping = set(WAKE_TAGS)

    def wake_up(self, tags: list[str] | None = None) -> None:
        tags = list(WAKE_TAGS) if tags is None else list(tags)
        unknown = [t for t in tags if t not in WAKE_TAGS]
        if unknown:
            raise ValueError(f"unknown tags {unknown}; valid: {WAKE_TAGS}")
        self.record("wake_up", tuple(tags))
        if "weights" in tags and "weights" in self.sleeping:
            with torch.no_grad():
                if self.sleep_level == 1:
                    for name, p in self.model.params.items():
                        p.copy_(self._backup.pop(name))
                else:
                    self.unloaded = set(self.model.params)
        self.sleeping -= set(tags)

    def reset_prefix_cache(self, device: Any = None) -> bool:
        self.record("reset_prefix_cache")
        return True

    # ------------------------------------------------------------------ weight sync (native RL API)
    def init_weight_transfer_engine(self, request: Any) -> None:
        if self.weight_transfer_config is None:
            raise StandinStateError("no weight transfer engine: LLM(weight_transfer_config=WeightTransferConfig(backend=...))")
        if self.transfer_ready:
            raise StandinStateError("init_weight_transfer_engine called twice (once, before the training loop)")
        info = request["init_info"] if isinstance(request, dict) else request.init_info
        if self.weight_transfer_config.backend == "ipc" and info:
            raise ValueError(f"Invalid init_info for IPCWeightTransferEngine: unexpected {sorted(info)}")
        self.record("init_weight_transfer_engine", self.weight_transfer_config.backend)
        self.transfer_ready = True

    def start_weight_update(self) -> None:
        if not self.transfer_ready:
            raise StandinStateError("start_weight_update before init_weight_transfer_engine")
        if self.updating:
            raise StandinStateError("start_weight_update while an update is open: finish_weight_update first")
        if "weights" in self.sleeping:
            raise StandinStateError("weight update while the weights sleep: their memory is not mapped (wake_up(tags=['weights']) first)")
        self.record("start_weight_update")
        self.updating = True

    def update_weights(self, request: Any) -> None:
        if not self.updating:
            raise StandinStateError("update_weights outside start_weight_update ... finish_weight_update")
        info = dict(request["update_info"] if isinstance(request, dict) else request.update_info)
        info.pop("is_checkpoint_format", None)  # the base update_info's one keyword (True: Hugging Face names and layouts)
        if set(info) != IPC_UPDATE_KEYS:
            raise ValueError(f"Invalid update_info for IPCWeightTransferEngine: keys {sorted(info)}, expected {sorted(IPC_UPDATE_KEYS)}")
        names = info["names"]
        for key in ("dtype_names", "shapes", "ipc_handles"):
            if len(info[key]) != len(names):
                raise ValueError(f"`{key}` should be of the same size as `names`: got {len(info[key])} and {len(names)}")
        self.record("update_weights", len(names))
        device = next(self.model.hf.parameters()).device
        key = str(torch.cuda.get_device_properties(device).uuid) if device.type == "cuda" else "cpu"
        weights = []
        for name, dtype_name, shape, handle in zip(names, info["dtype_names"], info["shapes"], info["ipc_handles"]):
            if key not in handle:
                raise ValueError(f"IPC handle not found for device {key}. Available: {list(handle)}")
            func, args = handle[key]
            args = list(args)
            if device.type == "cuda":
                args[6] = device.index or 0  # rebuild_cuda_tensor's device argument, as vLLM's receiver sets it
            tensor = func(*args)
            if str(tensor.dtype).removeprefix("torch.") != dtype_name or list(tensor.shape) != list(shape):
                raise ValueError(f"stand-in: {name} announced {dtype_name} {list(shape)}, its handle holds {tensor.dtype} {list(tensor.shape)}")
            weights.append((name, tensor))
        self.model.load_weights(weights)

    def finish_weight_update(self, weight_version: str | None = None) -> None:
        if not self.updating:
            raise StandinStateError("finish_weight_update without start_weight_update")
        self.record("finish_weight_update", weight_version)
        self.updating = False
        if weight_version is not None:
            self.weight_version = weight_version

    # ------------------------------------------------------------------ sampling
    def generate(
        self,
        prompts: Any,
        sampling_params: SamplingParams | Sequence[SamplingParams] | None = None,
        *,
        use_tqdm: bool = True,
        lora_request: LoRARequest | list[LoRARequest] | None = None,
    ) -> list[RequestOutput]:
        if self.sleeping:
            raise StandinStateError(f"generate while {sorted(self.sleeping)} sleep: wake_up first")
        if self.updating:
            raise StandinStateError("generate while a weight update is open: finish_weight_update first")
        if self.unloaded:
            raise StandinStateError(f"generate after a level-2 sleep with {len(self.unloaded)} parameters never loaded again (e.g. {sorted(self.unloaded)[0]})")
        if isinstance(prompts, (str, dict)):
            prompts = [prompts]
        params = list(sampling_params) if isinstance(sampling_params, (list, tuple)) else [sampling_params or SamplingParams()] * len(prompts)
        if len(params) != len(prompts):
            raise ValueError("The lengths of prompts and params must be the same.")
        requests = []
        for prompt, sp in zip(prompts, params):
            if not isinstance(prompt, dict) or "prompt_token_ids" not in prompt:
                if self.skip_tokenizer_init:
                    raise ValueError("skip_tokenizer_init=True: prompts must be token ids ({'prompt_token_ids': [...]})")
                raise NotImplementedError("stand-in: text prompts are not implemented")
            ids = list(prompt["prompt_token_ids"])
            if len(ids) + (sp.max_tokens or 0) > self.max_model_len:
                raise ValueError(f"prompt ({len(ids)} tokens) + max_tokens ({sp.max_tokens}) exceeds max_model_len {self.max_model_len}")
            g = torch.Generator().manual_seed(sp.seed if sp.seed is not None else (self.seed or 0) * 7919 + self._counter)
            self._counter += 1
            requests.append(_Request(ids, sp, g))
        self.record("generate", len(requests))
        with self._adapter(lora_request):
            self._decode(requests)
        outputs = []
        for k, r in enumerate(requests):
            logprobs = [{t: Logprob(lp, None, None)} for t, lp in zip(r.out, r.logps)] if r.params.logprobs is not None else None
            done = CompletionOutput(0, "", list(r.out), float(sum(r.logps)), logprobs, r.finish)
            outputs.append(RequestOutput(str(k), None, r.ids, [done]))
        return outputs

    def _processed(self, logits: torch.Tensor, sp: SamplingParams) -> torch.Tensor:
        if sp.temperature == 0:
            return logits
        out = logits / sp.temperature
        if sp.top_k > 0:
            kth = torch.topk(out, min(sp.top_k, out.shape[-1])).values[-1]
            out = out.masked_fill(out < kth, float("-inf"))
        if sp.top_p < 1:
            probs = torch.softmax(out, dim=-1)
            sorted_p, order = torch.sort(probs, descending=True)
            drop = (sorted_p.cumsum(-1) - sorted_p) > sp.top_p  # keep the smallest set whose mass reaches top_p
            out = out.masked_fill(torch.zeros_like(drop).scatter(0, order, drop), float("-inf"))
        return out

    @torch.no_grad()
    def _decode(self, requests: list[_Request]) -> None:
        hf = self.model.hf
        device = next(hf.parameters()).device
        width = max(len(r.ids) for r in requests)
        ids = torch.zeros((len(requests), width), dtype=torch.long)
        mask = torch.zeros((len(requests), width), dtype=torch.long)
        for i, r in enumerate(requests):
            ids[i, width - len(r.ids) :] = torch.tensor(r.ids)
            mask[i, width - len(r.ids) :] = 1
        ids, mask = ids.to(device), mask.to(device)
        position = (mask.cumsum(-1) - 1).clamp(min=0)
        out = hf(input_ids=ids, attention_mask=mask, position_ids=position, use_cache=True)
        past, logits = out.past_key_values, out.logits[:, -1].float()
        last_pos = position[:, -1]
        longest = max(r.params.max_tokens or 16 for r in requests)
        for _ in range(longest):
            nxt = torch.zeros(len(requests), dtype=torch.long)
            for i, r in enumerate(requests):
                if r.finish is not None:
                    continue
                sp = r.params
                processed = self._processed(logits[i], sp)
                if sp.temperature == 0:
                    token = int(torch.argmax(processed))
                else:
                    token = int(torch.multinomial(torch.softmax(processed, -1).cpu(), 1, generator=r.generator))
                source = processed if self.logprobs_mode.startswith("processed") else logits[i]
                value = torch.log_softmax(source, -1)[token] if self.logprobs_mode.endswith("logprobs") else source[token]
                r.out.append(token)
                r.logps.append(float(value))
                nxt[i] = token
                if token in (sp.stop_token_ids or []):
                    r.finish = "stop"
                elif len(r.out) >= (sp.max_tokens or 16):
                    r.finish = "length"
            if all(r.finish is not None for r in requests):
                break
            mask = torch.cat([mask, torch.ones((len(requests), 1), dtype=torch.long, device=device)], dim=1)
            last_pos = last_pos + 1
            out = hf(input_ids=nxt[:, None].to(device), attention_mask=mask, position_ids=last_pos[:, None], past_key_values=past, use_cache=True)
            past, logits = out.past_key_values, out.logits[:, -1].float()

    def _adapter(self, lora_request: Any) -> Any:
        """A LoRA adapter folder (peft's adapter_model.safetensors + adapter_config.json) merged for one generate."""
        import contextlib

        if lora_request is None:
            return contextlib.nullcontext()
        if not self.enable_lora:
            raise ValueError("LoRA is not enabled (LLM(enable_lora=True))")
        if isinstance(lora_request, list):
            if len({r.lora_int_id for r in lora_request}) != 1:
                raise NotImplementedError("stand-in: one adapter per generate")
            lora_request = lora_request[0]
        return self._merged(Path(lora_request.lora_path))

    def _merged(self, folder: Path) -> Any:
        import contextlib

        from safetensors.torch import load_file

        config = json.loads((folder / "adapter_config.json").read_text())
        if int(config["r"]) > self.max_lora_rank:
            raise ValueError(f"LoRA rank {config['r']} is greater than max_lora_rank {self.max_lora_rank}")
        scale = float(config["lora_alpha"]) / int(config["r"])
        state = load_file(str(folder / "adapter_model.safetensors"))

        @contextlib.contextmanager
        def merged() -> Any:
            saved = {}
            with torch.no_grad():
                for key, a in state.items():
                    if ".lora_A." not in key:
                        continue
                    prefix = key.split(".lora_A.")[0].removeprefix("base_model.model.")
                    b = state[key.replace(".lora_A.", ".lora_B.")]
                    w = self.model.params[f"{prefix}.weight"]
                    saved[prefix] = w.detach().clone()
                    w.add_((b.float() @ a.float() * scale).to(w.dtype))
            try:
                yield
            finally:
                with torch.no_grad():
                    for prefix, w in saved.items():
                        self.model.params[f"{prefix}.weight"].copy_(w)

        return merged()
