"""Environments as objects (the Actors library's shapes), compiling to a whole RunSpec.

    math_env = SingleTurnEnvironment(actors=[bob], reward_functions=[math_reward], prompt_column="problem",
                                     train_data=rows, eval_data={"gsm8k": test_rows})
    aime_eval = SingleTurnEnvironment(actors=[bob], reward_functions=[math_reward], eval_data={"aime25": aime_rows})
    env = code_env + math_env + aime_eval          # weights kept; eval-only environments stay eval-only
    spec = env.to_spec(steps=100)                  # a RunSpec dict: save it, or `troupe run` it on a dashboard
    result = troupe.train(env, steps=100)          # or run it here

Every environment becomes one RunSpec environment for its training data (weighted by `weight`) and one eval-only
environment per `eval_data` entry (`<name>.<key>`); one with no `train_data` is only those. `from_spec` reads a
RunSpec back into these objects: one model, two faces.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from ..rewards.reward_api import RewardFunction
from .actors import Actor, AnyActor, OpenAIActor, actor_from_spec
from .data import Data, as_data
from .rewards import AnyReward, PythonReward, as_reward, reward_entry, reward_name


@dataclass(frozen=True)
class CollaborativeActorConfig:
    """An actor of a collaborative environment with its own system prompt (Actors' name for it)."""

    actor: AnyActor
    system_prompt: str | None = None


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]", "_", text)[:64] or "env"


@dataclass(frozen=True, eq=False)
class TrainingEnvironment:
    """What every environment object shares; `kind` is its RunSpec kind."""

    actors: Sequence[AnyActor | CollaborativeActorConfig]
    reward_functions: Sequence[Any] = ()
    train_data: Any = None
    eval_data: Mapping[str, Any] = field(default_factory=dict)
    prompt_column: str = "prompt"
    prompt_template: str | None = None
    apply_chat_template: bool = True
    system_prompt: str | None = None
    weight: float = 1.0
    max_turns: int | None = None
    name: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)  # any other EnvironmentSpec field, camelCase

    kind = "single_turn"

    def __add__(self, other: TrainingEnvironment | CombinedEnvironment) -> CombinedEnvironment:
        return CombinedEnvironment([self]) + other

    # -- parts
    def actor_objects(self) -> list[AnyActor]:
        return [a.actor if isinstance(a, CollaborativeActorConfig) else a for a in self.actors]

    def system_prompts(self) -> dict[str, str]:
        out = {}
        for a in self.actors:
            if isinstance(a, CollaborativeActorConfig) and a.system_prompt:
                out[a.actor.name] = a.system_prompt
            elif self.system_prompt and not isinstance(a, CollaborativeActorConfig):
                out[a.name] = self.system_prompt
        return out

    def rewards(self) -> list[AnyReward]:
        return [as_reward(r) for r in self.reward_functions]

    def environment_name(self, index: int) -> str:
        return self.name or f"{self.kind}_{index}"

    def base_entry(self) -> dict[str, Any]:
        prompt: dict[str, Any] = {"field": self.prompt_column, "applyChatTemplate": self.apply_chat_template}
        if self.prompt_template:
            prompt["template"] = self.prompt_template
        out: dict[str, Any] = {
            "kind": self.kind,
            "actors": [a.name for a in self.actor_objects()],
            "prompt": prompt,
            "rewards": [{"reward": reward_name(r), "weight": r.weight} for r in self.rewards()],
        }
        if self.system_prompts():
            out["systemPrompts"] = self.system_prompts()
        if self.max_turns is not None:
            out["maxTurns"] = self.max_turns
        return {**out, **dict(self.extra)}

    def spec_parts(self, index: int) -> tuple[list[dict[str, Any]], list[tuple[dict[str, Any], Data]]]:
        """(RunSpec environments, [(dataset entry, its Data)]) of this environment."""
        name = _slug(self.environment_name(index))
        envs: list[dict[str, Any]] = []
        datasets: list[tuple[dict[str, Any], Data]] = []
        if self.train_data is not None:
            data = as_data(self.train_data, name)
            dataset = data.name or name
            datasets.append(({"name": dataset, "source": dict(data.source)}, data))
            envs.append({"name": name, **self.base_entry(), "dataset": dataset, "weight": self.weight})
        for key, rows in self.eval_data.items():
            eval_name = _slug(f"{name}.{key}") if key else name  # "": an eval-only environment read back by from_spec
            data = as_data(rows, eval_name)
            dataset = data.name or eval_name
            datasets.append(({"name": dataset, "source": dict(data.source)}, data))
            envs.append({"name": eval_name, **self.base_entry(), "dataset": dataset, "evalOnly": True})
        if not envs:
            raise ValueError(f"environment {name}: give it train_data, eval_data or both")
        return envs, datasets


class SingleTurnEnvironment(TrainingEnvironment):
    """One actor, one turn: the prompt, its completion, the rewards."""

    kind = "single_turn"


@dataclass(frozen=True, eq=False)
class CollaborativeEnvironment(TrainingEnvironment):
    """Actors take turns on one task, in the order of `round_spec` (`Bob -> Alice -> (Bob/Alice)*5`)."""

    round_spec: str = ""

    kind = "collaborative"

    def base_entry(self) -> dict[str, Any]:
        if not self.round_spec:
            raise ValueError("a CollaborativeEnvironment needs round_spec (who speaks when), e.g. 'Bob -> Alice -> (Bob/Alice)*5'")
        return {**super().base_entry(), "roundSpec": self.round_spec}


@dataclass(frozen=True, eq=False)
class AdversarialEnvironment(CollaborativeEnvironment):
    """Two actors, attacker then defender (`round_spec` optional: `<first> -> <second>` when absent)."""

    kind = "adversarial"

    def base_entry(self) -> dict[str, Any]:
        entry = TrainingEnvironment.base_entry(self)
        return {**entry, "roundSpec": self.round_spec} if self.round_spec else entry


class ParallelEnvironment(AdversarialEnvironment):
    """Every actor but the last drafts at once, the last combines (`round_spec` optional)."""

    kind = "parallel"


@dataclass(frozen=True, eq=False)
class SettingsEnvironment(TrainingEnvironment):
    """An environment kind whose own settings are one RunSpec object (`code`, `tools`, `game`, `remote`'s
    `remote`), kept as the mapping the RunSpec has: the runtime and the designer check it, field by field."""

    settings: Mapping[str, Any] | None = None

    settings_field = ""

    def base_entry(self) -> dict[str, Any]:
        entry = super().base_entry()
        return {**entry, self.settings_field: dict(self.settings)} if self.settings is not None else entry

    @classmethod
    def own_fields(cls, e: Mapping[str, Any]) -> dict[str, Any]:
        return {"settings": e.get(cls.settings_field)}


class CodeEnvironment(SettingsEnvironment):
    """The actor writes a program; `settings` (the RunSpec's `code`) say how it is tested in the sandbox."""

    kind, settings_field = "code", "code"


class ToolsEnvironment(SettingsEnvironment):
    """The actor calls tools between turns; `settings` is the RunSpec's `tools` (built-ins, MCP servers)."""

    kind, settings_field = "tools", "tools"


class GameEnvironment(SettingsEnvironment):
    """A board game (tic-tac-toe, connect four, chess); `settings` is the RunSpec's `game`
    (`{"name": "chess", "opponent": "random", "moveFormat": "index"}`)."""

    kind, settings_field = "game", "game"


@dataclass(frozen=True, eq=False)
class RemoteEnvironment(SettingsEnvironment):
    """Episodes played by a server of the reset/step protocol at `url`; `settings` is the RunSpec's `remote`."""

    url: str = ""

    kind, settings_field = "remote", "remote"

    def base_entry(self) -> dict[str, Any]:
        if not self.url:
            raise ValueError("a RemoteEnvironment needs url (http://, https:// or grpc://)")
        return {**super().base_entry(), "url": self.url}

    @classmethod
    def own_fields(cls, e: Mapping[str, Any]) -> dict[str, Any]:
        return {**super().own_fields(e), "url": e.get("url", "")}


@dataclass(frozen=True, eq=False)
class PythonEnvironment(TrainingEnvironment):
    """A `troupe.Environment` subclass (turn hooks, or `async def generate(batch)`), by class or by
    "module:Class" / "file.py:Class"; `params` reach it as `self.params`. The RunSpec names it by entrypoint,
    so a class must be importable where the run runs (in `troupe.train`, this process: any loaded module)."""

    environment: Any = None
    params: Mapping[str, Any] | None = None

    kind = "python"

    def entrypoint(self) -> str:
        env = self.environment
        if isinstance(env, str):
            return env
        if isinstance(env, type) and "<locals>" not in env.__qualname__:
            return f"{env.__module__}:{env.__qualname__}"
        raise ValueError("a PythonEnvironment needs environment=: a troupe.Environment subclass defined at module level, or \"module:Class\"")

    def base_entry(self) -> dict[str, Any]:
        entry = {**super().base_entry(), "entrypoint": self.entrypoint()}
        return {**entry, "params": dict(self.params)} if self.params is not None else entry

    @classmethod
    def own_fields(cls, e: Mapping[str, Any]) -> dict[str, Any]:
        return {"environment": e.get("entrypoint"), "params": e.get("params")}


@dataclass(frozen=True, eq=False)
class CombinedEnvironment:
    """Several environments trained (and evaluated) together: `env_a + env_b + eval_env`."""

    environments: Sequence[TrainingEnvironment]
    # The run's settings (`compile_spec`'s keywords) a RunSpec read by `from_spec` had: `to_spec()` gives it back.
    settings: Mapping[str, Any] = field(default_factory=dict)

    def __add__(self, other: TrainingEnvironment | CombinedEnvironment) -> CombinedEnvironment:
        more = list(other.environments) if isinstance(other, CombinedEnvironment) else [other]
        return CombinedEnvironment([*self.environments, *more], self.settings)

    def to_spec(self, **settings: Any) -> dict[str, Any]:
        return compile_spec(list(self.environments), **{**self.settings, **settings})

    def data(self) -> list[Data]:
        return [d for i, env in enumerate(self.environments) for _, d in env.spec_parts(i)[1]]

    def reward_functions(self) -> list[RewardFunction]:
        return [r for env in self.environments for r in env.rewards() if isinstance(r, RewardFunction)]


def _to_combined(env: TrainingEnvironment | CombinedEnvironment) -> CombinedEnvironment:
    return env if isinstance(env, CombinedEnvironment) else CombinedEnvironment([env])


def compile_spec(
    environments: Sequence[TrainingEnvironment],
    *,
    name: str = "troupe-library-run",
    steps: int = 100,
    algorithm: str | Mapping[str, Any] = "grpo",
    group_size: int | None = None,
    prompts_per_step: int | None = None,
    seed: int = 0,
    trainer: Mapping[str, Any] | None = None,
    description: str = "",
    extra: Mapping[str, Any] | None = None,
    actors_first: Sequence[AnyActor] = (),
    rewards_first: Sequence[Mapping[str, Any]] = (),
    datasets_first: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """The RunSpec of these environments with their actors, datasets and rewards (checked for clashes).
    `extra`: any other top-level RunSpec field (`sandbox`, `cluster`, `tags`, ...), as it is. `*_first`: entries
    listed first, in this order, those no environment names too (a judge actor, its reward's dataset): what
    `from_spec` keeps so that `to_spec()` gives the RunSpec back."""
    actors: dict[str, dict[str, Any]] = {a.name: a.to_spec() for a in actors_first}
    rewards: dict[str, dict[str, Any]] = {str(r["name"]): dict(r) for r in rewards_first}
    given = {str(d["name"]): dict(d) for d in datasets_first}
    datasets: list[dict[str, Any]] = list(given.values())
    envs: list[dict[str, Any]] = []
    for i, env in enumerate(environments):
        for actor in env.actor_objects():
            entry = actor.to_spec()
            if actor.name in actors and actors[actor.name] != entry:
                raise ValueError(f'two different actors are named "{actor.name}"')
            actors[actor.name] = entry
        for r in env.rewards():
            entry = reward_entry(r)
            if entry["name"] in rewards and rewards[entry["name"]] != entry:
                raise ValueError(f'two different rewards are named "{entry["name"]}"')
            rewards[entry["name"]] = entry
        env_entries, env_datasets = env.spec_parts(i)
        taken = {e["name"] for e in envs}
        clash = [e["name"] for e in env_entries if e["name"] in taken]
        if clash:
            raise ValueError(f'two environments are named "{clash[0]}": give them different name=')
        envs += env_entries
        for entry, _ in env_datasets:
            known = next((d for d in datasets if d["name"] == entry["name"]), None)
            if known is None:
                datasets.append(entry)
            elif dict(known["source"]) != entry["source"]:
                raise ValueError(f'two different datasets are named "{entry["name"]}"')
    algo = {"name": algorithm} if isinstance(algorithm, str) else dict(algorithm)
    if group_size is not None:
        algo["groupSize"] = group_size
    train: dict[str, Any] = {"steps": steps, **dict(trainer or {})}
    if steps > 0 and "evalEvery" not in train and any(e.get("evalOnly") for e in envs):
        train["evalEvery"] = max(1, steps // 10)  # eval sets are evaluated ten times over the run unless told
    if prompts_per_step is not None:
        train["promptsPerStep"] = prompts_per_step
    return {
        "specVersion": 1,
        "name": name,
        "description": description,
        "seed": seed,
        "actors": list(actors.values()),
        "datasets": datasets,
        "rewards": list(rewards.values()),
        "environments": envs,
        "algorithm": algo,
        "trainer": train,
        **dict(extra or {}),
    }


def to_spec(env: TrainingEnvironment | CombinedEnvironment, **settings: Any) -> dict[str, Any]:
    return _to_combined(env).to_spec(**settings)


TrainingEnvironment.to_spec = lambda self, **settings: to_spec(self, **settings)  # type: ignore[attr-defined]

_KINDS: dict[str, type[TrainingEnvironment]] = {
    cls.kind: cls
    for cls in (SingleTurnEnvironment, CollaborativeEnvironment, AdversarialEnvironment, ParallelEnvironment, CodeEnvironment,
                ToolsEnvironment, GameEnvironment, RemoteEnvironment, PythonEnvironment)
}
_COMMON = {"name", "kind", "actors", "prompt", "rewards", "systemPrompts", "maxTurns", "dataset", "weight", "evalOnly"}
_OWN = {"collaborative": {"roundSpec"}, "adversarial": {"roundSpec"}, "parallel": {"roundSpec"}, "code": {"code"}, "tools": {"tools"},
        "game": {"game"}, "remote": {"url", "remote"}, "python": {"entrypoint", "params"}}
_RUN_FIELDS = {"specVersion", "name", "description", "seed", "actors", "datasets", "rewards", "environments", "algorithm", "trainer"}


def _own_fields(cls: type[TrainingEnvironment], e: Mapping[str, Any]) -> dict[str, Any]:
    if hasattr(cls, "own_fields"):
        return cls.own_fields(e)  # type: ignore[attr-defined, no-any-return]
    if issubclass(cls, CollaborativeEnvironment):
        return {"round_spec": e.get("roundSpec", "")}
    return {}


def from_spec(spec: Mapping[str, Any]) -> CombinedEnvironment:
    """A RunSpec read back into objects, one class per environment kind; `.to_spec()` gives the same RunSpec
    back (its run settings, and actors, rewards and datasets no environment names, are kept on the result).
    Rows stay where the spec says (files, built-ins, hub); an eval-only environment comes back as an environment
    with that eval set only; rewards come back as their entries (`PythonReward`), unchanged."""
    actors = {a["name"]: actor_from_spec(a) for a in spec["actors"]}
    datasets = {d["name"]: Data(dict(d["source"]), name=d["name"]) for d in spec["datasets"]}
    rewards: dict[str, dict[str, Any]] = {r["name"]: r for r in spec.get("rewards", [])}
    out: list[TrainingEnvironment] = []
    for i, e in enumerate(spec["environments"]):
        kind = e.get("kind", "single_turn")
        cls = _KINDS.get(kind)
        if cls is None:
            raise ValueError(f'environments.{i}.kind: "{kind}" has no library object (known: {", ".join(_KINDS)})')
        prompts = e.get("systemPrompts") or {}
        members: list[Any] = [CollaborativeActorConfig(actors[n], prompts[n]) if n in prompts else actors[n] for n in e["actors"]]
        prompt = e.get("prompt") or {}
        known = _COMMON | _OWN.get(kind, set())
        common: dict[str, Any] = dict(
            actors=members,
            reward_functions=[PythonReward(rewards[r["reward"]], float(r.get("weight", 1.0))) for r in e.get("rewards", [])],
            prompt_column=prompt.get("field", "prompt"),
            prompt_template=prompt.get("template"),
            apply_chat_template=prompt.get("applyChatTemplate", True),
            max_turns=e.get("maxTurns"),
            name=e["name"],
            weight=float(e.get("weight", 1.0)),
            extra={k: v for k, v in e.items() if k not in known},
        )
        data = datasets[e["dataset"]]
        if e.get("evalOnly"):
            common.update(eval_data={"": data})
        else:
            common.update(train_data=data)
        out.append(cls(**common, **_own_fields(cls, e)))
    trainer = dict(spec.get("trainer") or {})
    settings: dict[str, Any] = dict(
        name=spec.get("name", "troupe-library-run"),
        description=spec.get("description", ""),
        seed=spec.get("seed", 0),
        algorithm=dict(spec.get("algorithm") or {"name": "grpo"}),
        steps=int(trainer.get("steps", 100)),
        trainer=trainer,
        extra={k: v for k, v in spec.items() if k not in _RUN_FIELDS},
        actors_first=list(actors.values()),
        rewards_first=list(rewards.values()),
        datasets_first=list(spec["datasets"]),
    )
    return CombinedEnvironment(out, settings)
