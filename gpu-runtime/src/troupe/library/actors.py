"""Actors as objects, the way the Actors library writes them, compiling to RunSpec `actors[]` entries.

    bob = Actor(name="Bob", model="Qwen/Qwen2.5-0.5B-Instruct", training=TrainCfg(learning_rate=1e-6, beta=0.01))
    judge = OpenAIActor(name="Judge", model="gpt-4o-mini", base_url="https://api.openai.com/v1", api_key_env="OPENAI_API_KEY")

`model` is a Hugging Face id, a local folder (a path starting with `/`, `./` or `~`), `tiny:<preset>` (the
built-in character models) or a RunSpec model source dict. An actor with a `training` config is trainable;
without one it is frozen (the Actors convention), unless `trainable=` says otherwise.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping


@dataclass(frozen=True)
class TrainCfg:
    """An actor's training settings (RunSpec `actors[].training`), snake_case as in Actors' ActorTrainCfg.
    `beta` is the KL coefficient; `lora` a RunSpec LoRA dict ({"rank": 16}) or True for the defaults."""

    learning_rate: float = 1e-3
    beta: float = 0.0
    lora: Mapping[str, Any] | bool | None = None
    offload_optimizer: bool = False
    offload_model: bool = False
    loss_type: str | None = None
    backend: str | None = None
    precision: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)  # any other TrainingSpec field, camelCase

    def to_spec(self) -> dict[str, Any]:
        out: dict[str, Any] = {"learningRate": self.learning_rate}
        if self.beta:
            out["klBeta"] = self.beta
        if self.lora:
            out["lora"] = {} if self.lora is True else dict(self.lora)
        if self.offload_optimizer or self.offload_model:
            out["offload"] = {"params": self.offload_model, "optimizer": self.offload_optimizer}
        for key, value in (("lossType", self.loss_type), ("backend", self.backend), ("precision", self.precision)):
            if value is not None:
                out[key] = value
        return {**out, **dict(self.extra)}

    @classmethod
    def from_spec(cls, training: Mapping[str, Any]) -> TrainCfg:
        known = {"learningRate", "klBeta", "lora", "offload", "lossType", "backend", "precision"}
        offload = training.get("offload") or {}
        return cls(
            learning_rate=float(training.get("learningRate", 1e-3)),
            beta=float(training.get("klBeta", 0.0)),
            lora=training.get("lora"),
            offload_optimizer=bool(offload.get("optimizer", False)),
            offload_model=bool(offload.get("params", False)),
            loss_type=training.get("lossType"),
            backend=training.get("backend"),
            precision=training.get("precision"),
            extra={k: v for k, v in training.items() if k not in known},
        )


def model_source(model: str | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(model, Mapping):
        return dict(model)
    if model.startswith("tiny:"):
        return {"source": "tiny", "preset": model.removeprefix("tiny:")}
    if model.startswith(("/", "./", "../", "~")):
        return {"source": "local", "path": model}
    return {"source": "huggingface", "id": model}


def model_text(source: Mapping[str, Any]) -> str | dict[str, Any]:
    """The short form `model_source` reads back, or the dict when there is none."""
    kind = source.get("source")
    if kind == "tiny" and set(source) <= {"source", "preset"}:
        return f"tiny:{source.get('preset', 'tiny-char-2l')}"
    if kind == "local" and set(source) == {"source", "path"} and str(source["path"]).startswith(("/", "./", "../", "~")):
        return str(source["path"])
    if kind == "huggingface" and set(source) == {"source", "id"}:
        return str(source["id"])
    return dict(source)


@dataclass(frozen=True)
class Actor:
    """A local model (Hugging Face engine by default; `backend="vllm"` for vLLM)."""

    name: str
    model: str | Mapping[str, Any]
    training: TrainCfg | None = None
    sampling: Mapping[str, Any] | None = None  # RunSpec SamplingSpec fields (temperature, maxNewTokens, ...)
    trainable: bool | None = None
    backend: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)  # any other ActorSpec field, camelCase

    @property
    def is_trainable(self) -> bool:
        return self.training is not None if self.trainable is None else self.trainable

    def to_spec(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "model": model_source(self.model), "trainable": self.is_trainable}
        if self.backend is not None:
            out["backend"] = self.backend
        if self.training is not None:
            out["training"] = self.training.to_spec()
        if self.sampling:
            out["sampling"] = dict(self.sampling)
        return {**out, **dict(self.extra)}


@dataclass(frozen=True)
class OpenAIActor:
    """An actor behind an OpenAI-compatible API: frozen, for judging and orchestration (and as a partner in
    multi-actor environments). The key is read from the runtime's environment variable `api_key_env`."""

    name: str
    model: str
    base_url: str
    api_key_env: str | None = None
    sampling: Mapping[str, Any] | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)

    @property
    def is_trainable(self) -> bool:
        return False

    def to_spec(self) -> dict[str, Any]:
        api: dict[str, Any] = {"baseUrl": self.base_url, "model": self.model}
        if self.api_key_env:
            api["apiKeyEnv"] = self.api_key_env
        out: dict[str, Any] = {"name": self.name, "model": {"source": "huggingface", "id": self.model}, "backend": "openai", "api": api, "trainable": False}
        if self.sampling:
            out["sampling"] = dict(self.sampling)
        return {**out, **dict(self.extra)}


AnyActor = Actor | OpenAIActor


def actor_from_spec(entry: Mapping[str, Any]) -> AnyActor:
    entry = dict(entry)
    if entry.get("backend") == "openai":
        api = entry.get("api") or {}
        rest = {k: v for k, v in entry.items() if k not in {"name", "model", "backend", "api", "trainable", "sampling"}}
        return OpenAIActor(entry["name"], api["model"], api["baseUrl"], api.get("apiKeyEnv"), entry.get("sampling"), rest)
    training = entry.get("training")
    trainable = bool(entry.get("trainable", True))
    cfg = TrainCfg.from_spec(training) if training is not None else None
    rest = {k: v for k, v in entry.items() if k not in {"name", "model", "training", "sampling", "trainable", "backend"}}
    return Actor(
        name=entry["name"],
        model=model_text(entry["model"]),
        training=cfg,
        sampling=entry.get("sampling"),
        trainable=None if trainable == (cfg is not None) else trainable,
        backend=entry.get("backend"),
        extra=rest,
    )
