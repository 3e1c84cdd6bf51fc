"""Evaluation on held-out rows: what a run reports as `eval/...` every `trainer.evalEvery` steps."""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any

import numpy as np
import torch

from .collaborative import CollaborativeEnvironment
from .events import EventWriter
from .rollout import sample

if TYPE_CHECKING:
    from .actors import Actor


def evaluate(events: EventWriter, step: int, environments: list[Any], actors: dict[str, Actor], device: torch.device) -> None:
    """Every held-out row of each single-turn environment, one sample each, with the actor's
    `evalSampling` (else `sampling`). Torch's and numpy's RNG states are restored afterwards, so
    a run with eval trains exactly as the same run without it. Metrics `eval/...` per actor."""
    cpu_state = torch.get_rng_state()
    cuda_state = torch.cuda.get_rng_state_all() if device.type == "cuda" else None
    np_state = np.random.get_state()
    per_actor: dict[str, list[tuple[float, dict[str, float], int]]] = defaultdict(list)
    try:
        for env in environments:
            if isinstance(env, CollaborativeEnvironment) or not env.dataset.eval_indices:
                continue
            actor = actors[env.actor]
            tokenizer = actor.loaded.tokenizer
            rows = env.dataset.eval_indices
            prompts = [env.render(env.dataset.rows[r], r, tokenizer) for r in rows]
            sampling = actor.spec.get("evalSampling") or actor.spec["sampling"]
            rollout = sample(actor.loaded.model, tokenizer, [tokenizer.encode(p.text, p.add_special_tokens) for p in prompts], sampling, device)
            scored = env.score_batch([p.user for p in prompts], rollout.texts, [env.dataset.rows[r] for r in rows])
            lengths = rollout.completion_mask.sum(dim=1).tolist()
            per_actor[env.actor].extend((total, components, int(n)) for (total, components), n in zip(scored, lengths))
    finally:
        torch.set_rng_state(cpu_state)
        if cuda_state is not None:
            torch.cuda.set_rng_state_all(cuda_state)
        np.random.set_state(np_state)
    for name, results in per_actor.items():
        values = {"eval/reward/mean": float(np.mean([t for t, _, _ in results])), "eval/completion_len": float(np.mean([n for _, _, n in results]))}
        for reward_name in sorted({k for _, c, _ in results for k in c}):
            values[f"eval/reward/{reward_name}"] = float(np.mean([c[reward_name] for _, c, _ in results if reward_name in c]))
        values["eval/samples"] = float(len(results))
        events.metric(step, values, actor=name)
