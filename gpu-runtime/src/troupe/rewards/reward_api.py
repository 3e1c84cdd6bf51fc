"""Rewards as decorated Python functions, for library use:

    from troupe import reward, run_spec

    @reward(scope="completion", weight=0.5)
    def short(prompt, completion, **row):
        return 1.0 if len(completion) < 20 else 0.0

    @reward(scope="conversation", batched=True)
    def agreed(conversation, actor_name, **row):   # batched: lists in, a list out
        return [1.0 if c[-1]["content"] == r else 0.0 for c, r in zip(conversation, row["answer"])]

    run_spec(spec, rewards=[short, agreed])

The contract is the one of `source.kind: "python"` code written in the UI (python_rewards.py):
same arguments, same `batched` convention, and the same failure rules: a call that raises, times
out (`timeout_seconds`, enforced with SIGALRM when the run is on the main thread) or returns a
non-number is logged with its row and scores `failure_score`; `max_failures_in_a_row` failures in
a row fail the run. The difference: a decorated function runs in the trainer's process, so it can
use anything it closes over, and it can call the run's actors.

Judges: a function with a parameter named `actors` receives a mapping from the name of every
frozen actor of the run (HF or OpenAI-compatible API) to a handle with
`generate(prompt_or_prompts, max_new_tokens=None) -> str | list[str]`, sampled with that actor's
`sampling` settings (raw text in, no chat template).

`run_spec(spec, rewards=[...])` adds each function to the spec's `rewards` (its source recorded as
the python code, so the stored spec says what ran) unless the spec already has a reward of that
name, and fills any environment that lists no rewards with every function of a matching scope
(completion for single_turn, conversation otherwise) at the decorator's `weight`.
"""

from __future__ import annotations

import ast
import copy
import inspect
import math
import signal
import textwrap
import threading
import time
import traceback
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from .python_rewards import FAILED_SCORE, MAX_FAILURES_IN_A_ROW, PythonReward

SCOPES = ("completion", "conversation")


@dataclass(frozen=True)
class RewardFunction:
    """A function with its reward settings; still callable as the plain function."""

    fn: Callable[..., Any]
    name: str
    scope: str = "completion"
    batched: bool = False
    weight: float = 1.0
    timeout_seconds: float = 10.0
    failure_score: float = FAILED_SCORE
    max_failures_in_a_row: int = MAX_FAILURES_IN_A_ROW

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.fn(*args, **kwargs)

    @property
    def wants_actors(self) -> bool:
        return "actors" in inspect.signature(self.fn).parameters

    @property
    def takes_every_column(self) -> bool:
        """`**row`: the function gets every column; otherwise only the parameters it names."""
        return any(p.kind is inspect.Parameter.VAR_KEYWORD for p in inspect.signature(self.fn).parameters.values())

    @property
    def columns(self) -> list[str]:
        """The dataset columns it names (beyond the fixed arguments): each must be in every row."""
        return [n for n, p in inspect.signature(self.fn).parameters.items() if n not in FIXED_ARGUMENTS and p.kind not in _VARIADIC]

    def select(self, call: Mapping[str, Any]) -> dict[str, Any]:
        """A call's arguments as the function takes them: by name (Actors' convention), or all with `**row`."""
        if self.takes_every_column:
            return dict(call)
        named = inspect.signature(self.fn).parameters
        return {k: v for k, v in call.items() if k in named}

    @property
    def entrypoint(self) -> str:
        return self.fn.__name__ if self.takes_every_column else self.fn.__name__ + BY_NAME_SUFFIX

    def recorded_code(self) -> str:
        """The function's source for the stored spec; one that names its columns gets an adapter (the
        entrypoint), because Python rewards of the spec are called with every column of the row."""
        if self.takes_every_column:
            return function_source(self.fn, self.batched)
        names = tuple(inspect.signature(self.fn).parameters)
        adapter = (
            f"\n\n{'@batched' + chr(10) if self.batched else ''}def {self.entrypoint}(**call):\n"
            f'    """Fills {self.fn.__name__}\'s parameters by name: the row\'s other columns are not passed."""\n'
            f"    return {self.fn.__name__}(**{{k: v for k, v in call.items() if k in {names!r}}})\n"
        )
        return function_source(self.fn, False) + adapter

    def spec_entry(self) -> dict[str, Any]:
        """The RewardSpec this function stands for (what the stored spec records)."""
        return {
            "name": self.name,
            "scope": self.scope,
            "source": {"kind": "python", "code": self.recorded_code(), "entrypoint": self.entrypoint},
            "timeoutSeconds": self.timeout_seconds,
            "failureScore": self.failure_score,
            "maxFailuresInARow": self.max_failures_in_a_row,
        }


FIXED_ARGUMENTS = ("prompt", "completion", "conversation", "actor_name", "actors")
_VARIADIC = (inspect.Parameter.VAR_KEYWORD, inspect.Parameter.VAR_POSITIONAL)
BY_NAME_SUFFIX = "__by_name"


def reward(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    scope: str = "completion",
    batched: bool = False,
    weight: float = 1.0,
    timeout_seconds: float = 10.0,
    failure_score: float = FAILED_SCORE,
    max_failures_in_a_row: int = MAX_FAILURES_IN_A_ROW,
) -> Any:
    """Decorator (`@reward` or `@reward(...)`) marking a function as a Troupe reward."""
    if scope not in SCOPES:
        raise ValueError(f"scope must be one of {', '.join(SCOPES)}, got {scope!r}")
    if timeout_seconds <= 0 or max_failures_in_a_row < 1 or not math.isfinite(weight):
        raise ValueError("timeout_seconds must be > 0, max_failures_in_a_row >= 1 and weight finite")

    def wrap(f: Callable[..., Any]) -> RewardFunction:
        return RewardFunction(f, name or f.__name__, scope, batched, float(weight), float(timeout_seconds), float(failure_score), int(max_failures_in_a_row))

    return wrap(fn) if fn is not None else wrap


def function_source(fn: Callable[..., Any], batched: bool) -> str:
    """The function's own source without its decorators (plus `@batched` when batched), so the
    recorded code runs as UI code too when it needs nothing from its module."""
    try:
        source = textwrap.dedent(inspect.getsource(fn))
        node = ast.parse(source).body[0]
        body = "\n".join(source.splitlines()[node.lineno - 1 :]) + "\n"  # lineno is the `def` line
    except (OSError, TypeError, SyntaxError, IndexError):
        body = f"# {fn.__module__}.{fn.__qualname__}: source unavailable (defined interactively)\ndef {fn.__name__}(**kwargs):\n    raise RuntimeError('in-process reward')\n"
    return ("@batched\n" if batched else "") + body


def merge_rewards(spec: Mapping[str, Any], functions: Sequence[RewardFunction]) -> dict[str, Any]:
    """A copy of the (raw, not yet validated) spec with the functions added as described above."""
    out = copy.deepcopy(dict(spec))
    names = {r.get("name") for r in out.setdefault("rewards", [])}
    for f in functions:
        if not isinstance(f, RewardFunction):
            raise TypeError(f"rewards= takes functions decorated with @troupe.reward, got {f!r}")
        if f.name not in names:
            out["rewards"].append(f.spec_entry())
            names.add(f.name)
    for env in out.get("environments", []):
        if env.get("rewards"):
            continue
        wanted = "completion" if env.get("kind", "single_turn") == "single_turn" else "conversation"
        env["rewards"] = [{"reward": f.name, "weight": f.weight} for f in functions if f.scope == wanted]
    return out


class EngineActorHandle:
    """`generate` on a local actor of the run through its rollout engine (vLLM, or transformers `generate` on its
    module), with its sampling settings. Called while the engines are awake: during rollouts and scoring."""

    def __init__(self, name: str, engine: Any, tokenizer: Any, sampling: Mapping[str, Any]):
        self.name, self.engine, self.tokenizer, self.sampling = name, engine, tokenizer, dict(sampling)

    def generate(self, prompts: str | Sequence[str], max_new_tokens: int | None = None) -> str | list[str]:
        from ..engines.rollout import EnginePrompt  # `import troupe` stays torch-free (the engines import torch)

        items = [prompts] if isinstance(prompts, str) else list(prompts)
        sampling = {**self.sampling, **({"maxNewTokens": int(max_new_tokens)} if max_new_tokens else {})}
        rollout = self.engine.generate([EnginePrompt(self.tokenizer.encode(p, True)) for p in items], sampling)
        return rollout.texts[0] if isinstance(prompts, str) else rollout.texts


class ApiActorHandle:
    """`generate` on an OpenAI-compatible actor: each prompt is one user message."""

    def __init__(self, name: str, api: Any):
        self.name, self.api = name, api

    def generate(self, prompts: str | Sequence[str], max_new_tokens: int | None = None) -> str | list[str]:  # noqa: ARG002 - the API actor's own limit applies
        items = [prompts] if isinstance(prompts, str) else list(prompts)
        texts = self.api.complete_many([[{"role": "user", "content": p}] for p in items])
        return texts[0] if isinstance(prompts, str) else texts


class _CallTimeout(Exception):
    pass


def _with_time_limit(call: Callable[[], Any], seconds: float) -> Any:
    """Runs `call` under SIGALRM when possible (main thread, Unix); else without a limit."""
    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGALRM"):
        return call()

    def alarm(signum: int, frame: Any) -> None:  # noqa: ARG001
        raise _CallTimeout(f"the reward call exceeded its time limit of {seconds:g}s")

    previous = signal.signal(signal.SIGALRM, alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        return call()
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _score(value: Any) -> float:
    score = float(value)
    if not math.isfinite(score):
        raise ValueError(f"the reward returned {value!r}, which is not a finite number")
    return score


@dataclass
class InProcessReward(PythonReward):
    """A decorated function scored in this process; failure counting and reporting are PythonReward's."""

    function: RewardFunction | None = None
    actors: Mapping[str, Any] = field(default_factory=dict)

    def _run(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        assert self.function is not None
        fn, extra = self.function.fn, ({"actors": self.actors} if self.function.wants_actors else {})
        if self.function.batched:
            keys = sorted({k for c in calls for k in c})
            started = time.perf_counter()
            try:
                columns = self.function.select({k: [c.get(k) for c in calls] for k in keys})
                scores = list(_with_time_limit(lambda: fn(**columns, **extra), self.timeout_seconds))
                if len(scores) != len(calls):
                    raise ValueError(f"a batched reward returned {len(scores)} scores for {len(calls)} calls")
                share = (time.perf_counter() - started) / len(calls)
                return [{"score": _score(s), "seconds": share} for s in scores]
            except Exception:  # noqa: BLE001 - user code: every failure is scored and reported
                return [{"error": traceback.format_exc(), "seconds": 0.0} for _ in calls]
        results = []
        for call in calls:
            started = time.perf_counter()
            try:
                value = _with_time_limit(lambda: fn(**self.function.select(call), **extra), self.timeout_seconds)
                results.append({"score": _score(value), "seconds": time.perf_counter() - started})
            except Exception:  # noqa: BLE001
                results.append({"error": traceback.format_exc(), "seconds": time.perf_counter() - started})
        return results


def bind_in_process(function: RewardFunction, reward_spec: Mapping[str, Any]) -> InProcessReward:
    """The function under the validated spec entry's settings (the spec is what the run records)."""
    return InProcessReward(
        reward_spec["name"],
        "",
        function.fn.__name__,
        reward_spec["scope"],
        float(reward_spec["timeoutSeconds"]),
        int(reward_spec["memoryMb"]),
        failure_score=float(reward_spec.get("failureScore", function.failure_score)),
        max_failures_in_a_row=int(reward_spec.get("maxFailuresInARow", function.max_failures_in_a_row)),
        fields=function.columns,
        function=function,
    )
