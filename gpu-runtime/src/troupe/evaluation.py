"""Evaluation: what a run reports as `eval/...` every `trainer.evalEvery` steps, and once in an eval-only run
(`trainer.steps: 0`).

Every environment kind is evaluated, one sample per row, with each actor's `evalSampling` (else `sampling`):

    rows     an `evalOnly` environment: every row of its dataset; any other: its dataset's held-out rows
             (`evalFraction`); an environment with no rows to evaluate is skipped (the spec rules make sure
             an eval-only run has none such)
    play     single_turn: the actor answers each prompt; every other kind (collaborative, parallel,
             adversarial, and the acting kinds played by an `Environment` object) plays one episode per row
             through the same seam as training (`new_episode`, `play` or `run_turns`, `score_all`), with a
             round-spec schedule drawn from a seed that depends on the environment and the row only, so
             every evaluation of a run plays the same schedules; which of the two an environment gets is
             registered by its class (`register_evaluation`, looked up along the class's bases), so a new
             environment class brings its own evaluation rather than a branch here

Metrics, per actor (the event's `actor`):

    eval/reward/mean, eval/reward/<component>, eval/completion_len, eval/samples
        over every environment the actor was evaluated in (the names single-turn eval always had)
    eval/<environment>/reward/mean, .../reward/std, .../reward/<component>, .../completion_len, .../samples
        per environment
    eval/<environment>/role/<role>/reward/mean, ...
        per role, for an actor playing named roles (`environments[].roles`: one policy as X and O)

Torch's and numpy's RNG states are restored afterwards, so a run with eval trains exactly as the same run
without it. Nothing here is trained on.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable

import numpy as np
import torch

from .envs.collaborative import CollaborativeEnvironment, run_turns, schedule_seed
from .envs.environments import SingleTurnEnvironment
from .events import EventWriter
from .engines.rollout import EnginePrompt
from .engines.rollout.colocate import engine_of
from .schedule import sample as dsl_sample

if TYPE_CHECKING:
    from .actors import Actor

# Seeds of eval schedules: environment name prefixed, step 0 (training steps start at 1).
EVAL_SEED_PREFIX = "eval:"


@dataclass(frozen=True)
class Scored:
    """One evaluated sample of one actor."""

    environment: str
    actor: str
    reward: float
    components: dict[str, float]
    completion_len: int
    role: str | None = None  # the role the actor played (`environments[].roles`), when it is not the actor's own name


# How an environment is evaluated (its rows, the run's actors, the API actors, the run's seed -> scored samples).
Evaluation = Callable[[Any, list[int], "dict[str, Actor]", dict[str, Any], int], list[Scored]]
EVALUATIONS: dict[type, Evaluation] = {}


def register_evaluation(kind: type) -> Callable[[Evaluation], Evaluation]:
    """Register how environments of class `kind` (and its subclasses: acting, game, remote and outcome
    environments are `CollaborativeEnvironment`s) are evaluated; a new environment class registers its own."""

    def add(evaluation: Evaluation) -> Evaluation:
        EVALUATIONS[kind] = evaluation
        return evaluation

    return add


def evaluation_of(env: Any) -> Evaluation:
    """The evaluation registered for the environment's class or its nearest registered base class."""
    for kind in type(env).__mro__:
        if kind in EVALUATIONS:
            return EVALUATIONS[kind]
    raise TypeError(f"environment {getattr(env, 'name', env)!r}: no evaluation is registered for {type(env).__name__} (evaluation.register_evaluation)")


def eval_rows(env: Any) -> list[int]:
    """The dataset rows an environment is evaluated on."""
    if env.spec.get("evalOnly"):
        return list(range(len(env.dataset.rows)))
    return list(env.dataset.eval_indices)


def _sampling(actor: Any) -> dict[str, Any]:
    return actor.spec.get("evalSampling") or actor.spec["sampling"]


def _single_turn_api(env: Any, rows: list[int], api: Any) -> list[Scored]:
    """An API model answering an eval set: its system prompt and the row's prompt as chat messages."""
    items = [env.dataset.rows[r] for r in rows]
    users = [env.user_text(row, r) for row, r in zip(items, rows)]
    system = env.spec["systemPrompts"].get(env.actor)
    texts = api.complete_many([([{"role": "system", "content": system}] if system else []) + [{"role": "user", "content": u}] for u in users])
    scored = env.score_batch(users, texts, items)
    # No tokenizer of the API's: the completion's length is counted in characters.
    return [Scored(env.name, env.actor, total, components, len(text)) for (total, components), text in zip(scored, texts)]


@register_evaluation(SingleTurnEnvironment)
def _single_turn(env: Any, rows: list[int], actors: dict[str, Actor], api_actors: dict[str, Any], seed: int) -> list[Scored]:
    """The actor answers each row's prompt once (the seed is unused: no schedule to draw)."""
    if env.actor not in actors and env.actor in api_actors:
        return _single_turn_api(env, rows, api_actors[env.actor])
    actor = actors[env.actor]
    tokenizer = actor.loaded.tokenizer
    prompts = [env.render(env.dataset.rows[r], r, tokenizer) for r in rows]
    # Through the actor's rollout engine, as training samples it (a vLLM actor evaluates with vLLM).
    rollout = engine_of(actor).generate([EnginePrompt(tokenizer.encode(p.text, p.add_special_tokens)) for p in prompts], _sampling(actor))
    scored = env.score_batch([p.user for p in prompts], rollout.texts, [env.dataset.rows[r] for r in rows])
    lengths = rollout.completion_mask.sum(dim=1).tolist()
    return [Scored(env.name, env.actor, total, components, int(n)) for (total, components), n in zip(scored, lengths)]


@register_evaluation(CollaborativeEnvironment)
def _episodes(env: CollaborativeEnvironment, rows: list[int], actors: dict[str, Actor], api_actors: dict[str, Any], seed: int) -> list[Scored]:
    # Episodes and schedules are keyed by role (`environments[].roles`; without them each actor is its own role), and
    # each role samples with its actor's engine, tokenizer and sampling, as in training (collaborative.py).
    roles = env.roles
    played_by = {r: env.actor_of(r) for r in roles}
    tokenizers = {r: actors[a].loaded.tokenizer if a in actors else None for r, a in played_by.items()}
    episodes = []
    for k, r in enumerate(rows):
        seed_k = schedule_seed(seed, EVAL_SEED_PREFIX + env.name, 0, k, 0)
        turns = dsl_sample(env.node, seed_k, roles, env.spec["maxTurns"]) if env.node is not None else []
        episodes.append(env.new_episode(env.dataset.rows[r], r, k, 0, turns, tokenizers))
    # A local actor samples with its rollout engine (vLLM, or transformers `generate` on its module).
    models = {r: engine_of(actors[a]) if a in actors else api_actors[a] for r, a in played_by.items()}
    samplings = {r: _sampling(actors[a]) if a in actors else api_actors[a].sampling for r, a in played_by.items()}
    play = getattr(env, "play", None) or run_turns  # acting environments speak between turns (acting.py)
    play(episodes, models, tokenizers, samplings)  # every local actor samples through its own engine, on its own device
    env.score_all(episodes)
    out = []
    for e in episodes:
        for role, a in played_by.items():
            if role not in e.rewards:
                continue
            own_tokens = sum(len(m.ids) for m in e.messages if m.actor == role and getattr(m, "role", "actor") != "environment")
            out.append(Scored(env.name, a, float(e.rewards[role]), dict(e.components.get(role, {})), own_tokens, role if role != a else None))
    return out


def evaluate_environments(
    environments: Iterable[Any], actors: dict[str, Actor], api_actors: dict[str, Any] | None = None, seed: int = 0
) -> list[Scored]:
    """Every evaluated sample of every environment (RNG states restored afterwards: CUDA's too when an actor
    samples on a GPU)."""
    api_actors = api_actors or {}
    cpu_state = torch.get_rng_state()
    cuda_state = torch.cuda.get_rng_state_all() if any(a.device.type == "cuda" for a in actors.values()) else None
    np_state = np.random.get_state()
    results: list[Scored] = []
    try:
        for env in environments:
            rows = eval_rows(env)
            if not rows:
                continue
            results.extend(evaluation_of(env)(env, rows, actors, api_actors, seed))
    finally:
        torch.set_rng_state(cpu_state)
        if cuda_state is not None:
            torch.cuda.set_rng_state_all(cuda_state)
        np.random.set_state(np_state)
    return results


def eval_metrics(results: list[Scored], prefix: str) -> dict[str, float]:
    """`<prefix>reward/mean`, `.../reward/std`, `.../reward/<component>`, `<prefix>completion_len`, `<prefix>samples`."""
    rewards = [s.reward for s in results]
    values = {f"{prefix}reward/mean": float(np.mean(rewards)), f"{prefix}completion_len": float(np.mean([s.completion_len for s in results]))}
    for name in sorted({k for s in results for k in s.components}):
        values[f"{prefix}reward/{name}"] = float(np.mean([s.components[name] for s in results if name in s.components]))
    values[f"{prefix}samples"] = float(len(results))
    return values


def evaluate(
    events: EventWriter,
    step: int,
    environments: list[Any],
    actors: dict[str, Actor],
    api_actors: dict[str, Any] | None = None,
    seed: int = 0,
) -> list[Scored]:
    """Evaluate and report one metric event per evaluated actor: its overall `eval/...` values and its
    `eval/<environment>/...` values for each environment it took part in."""
    results = evaluate_environments(environments, actors, api_actors, seed)
    by_actor: dict[str, list[Scored]] = defaultdict(list)
    for s in results:
        by_actor[s.actor].append(s)
    for name, scored in by_actor.items():
        values = eval_metrics(scored, "eval/")
        by_env: dict[str, list[Scored]] = defaultdict(list)
        for s in scored:
            by_env[s.environment].append(s)
        for env_name, env_scored in by_env.items():
            values.update(eval_metrics(env_scored, f"eval/{env_name}/"))
            values[f"eval/{env_name}/reward/std"] = float(np.std([s.reward for s in env_scored]))
            for role in sorted({s.role for s in env_scored if s.role is not None}):  # self-play: X's and O's apart
                values.update(eval_metrics([s for s in env_scored if s.role == role], f"eval/{env_name}/role/{role}/"))
        events.metric(step, values, actor=name)
    return results
