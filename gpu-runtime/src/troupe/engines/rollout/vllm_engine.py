"""`backend: "vllm"`: a colocated vLLM engine per actor, with sleep mode and in-memory weight sync.

Written against vLLM's documented offline API, release line 0.22-0.33 (VLLM_VERSION_RANGE, the `gpu` extra
in pyproject): `LLM(model, enable_sleep_mode=True, weight_transfer_config=WeightTransferConfig(backend="ipc"),
tensor_parallel_size, gpu_memory_utilization, max_model_len, enforce_eager, ...)`, `LLM.generate` on token-id
prompts, `LLM.sleep(level)`, `LLM.wake_up(tags)`, `LLM.reset_prefix_cache()`, and vLLM's native weight sync
(the "Native RL APIs in vLLM" post, 2026-05-28): `init_weight_transfer_engine` once, then per push
`start_weight_update` -> `update_weights` (one call per chunk) -> `finish_weight_update`. The parameter
names of every call are listed in VLLM_CALLS and checked against the installed package (or the test stand-in,
tests/vllm_standin.py) by tests/test_vllm_standin_contract.py. This has run only against the stand-in here.

Choices, and why:
- Only the native API, no `collective_rpc` fallback: every release in the pin has the four calls on `LLM`
  (start/finish arrived in 0.22.0; TRL's native sync asks for vllm>=0.22.0, trl PR #5892), so nothing in
  the range needs the older path, and an engine with two paths would test one of them.
- Transport "ipc" (CUDA IPC handles): the engine sits on the trainer's own GPU, in the trainer's process
  (VLLM_ENABLE_V1_MULTIPROCESSING=0), so a handle to the trainer's tensor is all that crosses; nothing is
  copied to the host or written to disk. NCCL is vLLM's choice for engines on other GPUs, not ours.
- No `pause_generation`: that is AsyncLLM's call, for requests in flight during a push. The offline
  `LLM.generate` returns only when every request is done, so no request is in flight when we push; the
  stand-in refuses a `generate` between start and finish all the same. With asynchronous rollouts
  (rollout/async_rollout.py) one producer thread makes both calls, one after the other, and the engine stays
  awake (`sleepLevel: 0`).
- LoRA: merged on the way (sync.py), as before. vLLM's adapter-only sync in memory is still an open RFC
  (vllm#48297, not in a release we could verify), and TRL's adapter-only sync (trl PR #7017) reloads the
  adapter through the server's runtime LoRA endpoint, i.e. from a folder; `set_adapter` below serves an
  adapter folder the same way when a caller has one.

Sources read (2026-11-28): vllm-project/vllm vllm/entrypoints/rl/offline.py @1847427e (LLM's four calls),
vllm/distributed/weight_transfer/ipc_engine.py @406784bd and @02837425 (IPC update_info: names,
dtype_names, shapes, ipc_handles keyed by the GPU's UUID; the receiver rebuilds each handle on its device),
vllm/distributed/weight_transfer/base.py @aa1cd966; docs.vllm.ai training/weight_transfer and
training/async_rl (latest); PyPI: vllm 0.33.0 is the newest release (2026-11).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Iterable, Iterator, Sequence

import torch
from torch.multiprocessing.reductions import reduce_tensor

from .sampling import Rollout, SamplingSettings, left_pad, sampling_settings
from ...spec.runspec_types import ActorVllm
from .base import EnginePrompt, EngineStateError, RolloutEngine, check_level, check_tags

VLLM_VERSION_RANGE = ">=0.22,<0.34"
# Parameters we pass to each vLLM call (the signature contract checks every name exists there).
VLLM_CALLS: dict[str, tuple[str, ...]] = {
    "LLM": (
        "model", "tensor_parallel_size", "dtype", "seed", "gpu_memory_utilization", "enforce_eager",
        "max_model_len", "enable_sleep_mode", "enable_lora", "max_lora_rank", "skip_tokenizer_init",
        "logprobs_mode", "distributed_executor_backend", "weight_transfer_config",
    ),
    "LLM.generate": ("prompts", "sampling_params", "use_tqdm", "lora_request"),
    "LLM.sleep": ("level",),
    "LLM.wake_up": ("tags",),
    "LLM.reset_prefix_cache": (),
    "LLM.init_weight_transfer_engine": ("request",),
    "LLM.start_weight_update": (),
    "LLM.update_weights": ("request",),
    "LLM.finish_weight_update": ("weight_version",),
    "config.WeightTransferConfig": ("backend",),
    "SamplingParams": ("n", "temperature", "top_p", "top_k", "max_tokens", "logprobs", "seed", "stop_token_ids", "detokenize"),
    "LoRARequest": ("lora_name", "lora_int_id", "lora_path"),
}
# Keys of the IPC backend's update_info (vllm/distributed/weight_transfer/ipc_engine.py, IPCWeightTransferUpdateInfo).
IPC_UPDATE_KEYS = ("names", "dtype_names", "shapes", "ipc_handles")
# Bytes of parameters handed over per update_weights call: each is still gathered one at a time from the trainer,
# and a chunk's tensors are held only until its call returns.
PUSH_BUCKET_BYTES = 256 * 2**20


@dataclass(frozen=True)
class VllmSettings:
    """`actors[].vllm` (defaults filled)."""

    gpu_memory_utilization: float = 0.5
    tensor_parallel: int = 1
    sleep_level: int = 1
    max_model_len: int | None = None
    enforce_eager: bool = False

    @classmethod
    def from_section(cls, vllm: ActorVllm | None) -> "VllmSettings":
        """From the actor's typed `vllm` section; None (no section): the schema's defaults, which are these."""
        if vllm is None:
            return cls()
        return cls(float(vllm.gpu_memory_utilization), int(vllm.tensor_parallel), int(vllm.sleep_level), vllm.max_model_len, bool(vllm.enforce_eager))

    @classmethod
    def from_spec(cls, actor_spec: Mapping[str, Any]) -> "VllmSettings":
        """From an actor's JSON document (its `vllm` section read into the typed one, defaults filled)."""
        section = actor_spec.get("vllm")
        return cls.from_section(ActorVllm.from_dict(section) if section else None)


def import_vllm() -> Any:
    """The vLLM package. Tests replace this function to hand the engine the stand-in instead."""
    # In-process engine core: the workers run in this process, so the IPC handles we send open the trainer's own
    # tensors (torch keeps a process-local cache of shared storages), with no copy through a socket.
    os.environ.setdefault("VLLM_ENABLE_V1_MULTIPROCESSING", "0")
    import vllm
    import vllm.config  # noqa: F401  (WeightTransferConfig lives there)

    return vllm


def device_key(tensor: torch.Tensor) -> str:
    """The key vLLM's IPC receiver looks a handle up by: the physical GPU's UUID. CPU tensors (the stand-in's
    tests; vLLM itself runs on GPUs only) are keyed "cpu"."""
    if tensor.is_cuda:
        return str(torch.cuda.get_device_properties(tensor.device).uuid)
    return "cpu"


def ipc_update_info(chunk: Sequence[tuple[str, torch.Tensor]]) -> dict[str, Any]:
    """One update_weights request's update_info for the IPC backend: names, dtypes, shapes, and a handle per
    tensor. The tensors in `chunk` must stay alive until the call returns (the caller holds them)."""
    return {
        "names": [name for name, _ in chunk],
        "dtype_names": [str(t.dtype).removeprefix("torch.") for _, t in chunk],
        "shapes": [list(t.shape) for _, t in chunk],
        "ipc_handles": [{device_key(t): reduce_tensor(t)} for _, t in chunk],
    }


def chunks(weights: Iterable[tuple[str, torch.Tensor]], limit: int) -> Iterator[list[tuple[str, torch.Tensor]]]:
    """Consecutive runs of parameters of at most `limit` bytes (a larger one alone), made contiguous and detached."""
    chunk, size = [], 0
    for name, tensor in weights:
        tensor = tensor.detach().contiguous()
        chunk.append((name, tensor))
        size += tensor.numel() * tensor.element_size()
        if size >= limit:
            yield chunk
            chunk, size = [], 0
    if chunk:
        yield chunk


class VllmEngine(RolloutEngine):
    name = "vllm"
    holds_own_weights = True

    def __init__(
        self,
        model_path: str,
        tokenizer: Any,
        settings: VllmSettings,
        seed: int,
        dtype: str = "auto",
        lora_rank: int | None = None,
        distributed: bool = False,
        vllm: Any = None,
    ):
        self.vllm = vllm if vllm is not None else import_vllm()
        self.tokenizer = tokenizer
        self.settings = settings
        self.seed = seed
        self.calls = 0
        self.asleep: set[str] = set()
        self.lora_request: Any = None
        self._lora_ids: dict[str, int] = {}
        self.pushes = 0
        kwargs: dict[str, Any] = dict(
            model=model_path,
            tensor_parallel_size=settings.tensor_parallel,
            dtype=dtype,
            seed=seed,
            gpu_memory_utilization=settings.gpu_memory_utilization,
            enforce_eager=settings.enforce_eager,
            enable_sleep_mode=True,
            # Our tokenizer encodes and decodes (prompts go in as token ids): vLLM needs none.
            skip_tokenizer_init=True,
            # Log-probs after temperature (and top-k/top-p), i.e. of the distribution actually sampled.
            logprobs_mode="processed_logprobs",
            # vLLM's native weight sync over CUDA IPC: the engine shares the trainer's GPU and process.
            weight_transfer_config=self.vllm.config.WeightTransferConfig(backend="ipc"),
        )
        if settings.max_model_len is not None:
            kwargs["max_model_len"] = settings.max_model_len
        if lora_rank is not None:
            kwargs.update(enable_lora=True, max_lora_rank=lora_rank)
        if distributed:
            # The run's own torch ranks are vLLM's workers (TRL colocates the same way): each rank's engine sits on
            # its own GPU, holding one tensor-parallel shard, or a whole replica when tensorParallel is 1.
            kwargs["distributed_executor_backend"] = "external_launcher"
        self.llm = self.vllm.LLM(**kwargs)
        self.llm.init_weight_transfer_engine(request={"init_info": {}})  # the IPC backend needs no init info

    # ------------------------------------------------------------------ sampling
    def sampling_params(self, sampling: SamplingSettings | Mapping[str, Any], seed: int) -> Any:
        settings = sampling_settings(sampling)
        top_k = int(settings.top_k)
        return self.vllm.SamplingParams(
            n=1,
            temperature=float(settings.temperature),
            top_p=float(settings.top_p),
            top_k=top_k if top_k > 0 else -1,
            max_tokens=int(settings.max_new_tokens),
            logprobs=0,  # the sampled token's own log-prob
            seed=seed,
            stop_token_ids=list(self.tokenizer.eos_token_ids),
            detokenize=False,
        )

    def generate(self, prompts: Sequence[EnginePrompt], sampling: SamplingSettings | Mapping[str, Any]) -> Rollout:
        if self.asleep:
            raise EngineStateError(f"vLLM engine asked to generate while {sorted(self.asleep)} sleep: wake it first")
        self.calls += 1
        # One seed per request, drawn from torch's global generator: the run's seed fixes it, a checkpoint saves
        # and restores it, so a resumed run samples what the uninterrupted one did (as HF `generate` does).
        base = int(torch.randint(0, 2**31 - 1, (1,)).item())
        params = [self.sampling_params(sampling, (base + i) % (2**31)) for i in range(len(prompts))]
        requests = [{"prompt_token_ids": list(p.token_ids)} for p in prompts]
        outputs = self.llm.generate(requests, sampling_params=params, use_tqdm=False, lora_request=self.lora_request)
        return self._rollout(prompts, outputs)

    def _rollout(self, prompts: Sequence[EnginePrompt], outputs: Sequence[Any]) -> Rollout:
        tok = self.tokenizer
        eos = set(tok.eos_token_ids)
        seqs: list[list[int]] = []
        logps: list[list[float]] = []
        ended: list[bool] = []
        for out in outputs:
            done = out.outputs[0]
            ids = list(done.token_ids)
            if done.logprobs is None or len(done.logprobs) != len(ids):
                raise RuntimeError(f"vLLM returned {0 if done.logprobs is None else len(done.logprobs)} log-probs for {len(ids)} tokens")
            seqs.append(ids)
            logps.append([float(step[t].logprob) for t, step in zip(ids, done.logprobs)])
            ended.append(bool(ids) and ids[-1] in eos)
        prompt_ids, prompt_mask = left_pad([p.token_ids for p in prompts], tok.pad_token_id)
        width = max(max((len(s) for s in seqs), default=0), 1)
        b = len(seqs)
        completion_ids = torch.full((b, width), tok.pad_token_id, dtype=torch.long)
        mask = torch.zeros((b, width), dtype=torch.long)
        logprobs = torch.zeros((b, width), dtype=torch.float32)
        texts = []
        for i, (ids, lp) in enumerate(zip(seqs, logps)):
            if ids:
                completion_ids[i, : len(ids)] = torch.tensor(ids)
                mask[i, : len(ids)] = 1
                logprobs[i, : len(ids)] = torch.tensor(lp, dtype=torch.float32)
            texts.append(tok.decode([t for t in ids if t not in eos]))
        return Rollout(prompt_ids, prompt_mask, completion_ids, mask, logprobs, texts, torch.tensor(ended, dtype=torch.bool))

    # ------------------------------------------------------------------ weights and memory
    def push_weights(self, weights: Iterable[tuple[str, torch.Tensor]]) -> int:
        """start_weight_update -> update_weights per chunk -> finish_weight_update. A failure part-way leaves
        the update open (vLLM has no rollback): the engine must not sample after it, and the run stops."""
        if "weights" in self.asleep:
            raise EngineStateError("vLLM engine: weights pushed while they sleep; wake(['weights']) first")
        self.llm.start_weight_update()
        sent = 0
        for chunk in chunks(weights, PUSH_BUCKET_BYTES):
            self.llm.update_weights(request={"update_info": ipc_update_info(chunk)})
            sent += len(chunk)
        self.pushes += 1
        self.llm.finish_weight_update(weight_version=str(self.pushes))
        return sent

    def set_adapter(self, name: str | None, path: str | None = None) -> None:
        """A LoRA adapter saved at `path` (vLLM loads adapters from folders): a new LoRARequest each
        call, so a changed adapter is reloaded rather than served from vLLM's adapter cache."""
        if name is None:
            self.lora_request = None
            return
        if path is None:
            raise ValueError("the vLLM engine loads a LoRA adapter from a folder: give its path")
        self._lora_ids[name] = max(self._lora_ids.values(), default=0) + 1
        self.lora_request = self.vllm.LoRARequest(lora_name=f"{name}-{self._lora_ids[name]}", lora_int_id=self._lora_ids[name], lora_path=path)

    def sleep(self, level: int) -> None:
        self.llm.sleep(level=check_level(level))
        self.asleep = {"weights", "kv_cache"}

    def wake(self, tags: Sequence[str]) -> None:
        tags = [t for t in check_tags(tags) if t in self.asleep]
        if tags:
            self.llm.wake_up(tags=tags)
            self.asleep -= set(tags)

    def reset_prefix_cache(self) -> None:
        self.llm.reset_prefix_cache()

    def close(self) -> None:
        """Drops the engine so its device memory can be released (a library caller may start another run)."""
        import gc

        self.llm = None
        gc.collect()
        if torch.cuda.is_available():
            torch.cuda.empty_cache()
