"""Builtin rewards: pure functions of (prompt, completion, dataset row, params) -> float.

Each reward is scored on its own and logged as `reward/<name>`; an environment combines them
with its weights (`combine_rewards`). Parameters come from the spec
(`rewards.N.source.params`) and are checked before the run starts (`param_issues`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from .spec.issues import FieldIssue

Row = Mapping[str, Any]
Params = Mapping[str, Any]


@dataclass(frozen=True)
class Param:
    kind: type  # str, float, int or bool
    default: Any
    help: str
    minimum: float | None = None


@dataclass(frozen=True)
class BuiltinReward:
    name: str
    fn: Callable[[str, str, Row, Params], float]
    params: dict[str, Param] = field(default_factory=dict)
    # Dataset columns the reward reads, given its params (checked against the data at start-up).
    fields: Callable[[Params], list[str]] = lambda _p: []
    doc: str = ""


def letter_match(prompt: str, completion: str, row: Row, params: Params) -> float:
    """Fraction of the completion's characters equal to the row's letter (0 for an empty completion)."""
    letter = str(row[params["field"]])
    if not completion:
        return 0.0
    return sum(1 for ch in completion if ch == letter) / len(completion)


def exact_match(prompt: str, completion: str, row: Row, params: Params) -> float:
    """1 if the stripped completion equals the row's answer (stripped), else 0."""
    answer = str(row[params["field"]]).strip()
    got = completion.strip()
    if not params["caseSensitive"]:
        answer, got = answer.lower(), got.lower()
    return 1.0 if got == answer else 0.0


def length_penalty(prompt: str, completion: str, row: Row, params: Params) -> float:
    """-scale per character beyond `target` characters (0 when the completion is short enough)."""
    return -float(params["scale"]) * max(0, len(completion) - int(params["target"]))


BUILTIN_REWARDS: dict[str, BuiltinReward] = {
    "letter_match": BuiltinReward(
        "letter_match",
        letter_match,
        {"field": Param(str, "letter", "dataset column holding the letter to repeat")},
        fields=lambda p: [p["field"]],
        doc=letter_match.__doc__ or "",
    ),
    "exact_match": BuiltinReward(
        "exact_match",
        exact_match,
        {
            "field": Param(str, "answer", "dataset column holding the expected answer"),
            "caseSensitive": Param(bool, True, "compare case-sensitively"),
        },
        fields=lambda p: [p["field"]],
        doc=exact_match.__doc__ or "",
    ),
    "length_penalty": BuiltinReward(
        "length_penalty",
        length_penalty,
        {
            "target": Param(int, 0, "characters allowed before the penalty starts", minimum=0),
            "scale": Param(float, 0.01, "penalty per character beyond the target", minimum=0),
        },
        doc=length_penalty.__doc__ or "",
    ),
}


def _type_ok(value: Any, kind: type) -> bool:
    if kind is bool:
        return isinstance(value, bool)
    if kind is int:
        return (isinstance(value, int) and not isinstance(value, bool)) or (isinstance(value, float) and value.is_integer())
    if kind is float:
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, kind)


_TYPE_WORDS = {str: "a string", int: "an integer", float: "a number", bool: "a boolean"}


def param_issues(reward_name: str, params: Params, path: str) -> list[FieldIssue]:
    """Unknown or ill-typed params of a builtin reward, each naming `path.<param>`."""
    reward = BUILTIN_REWARDS[reward_name]
    issues = []
    for key, value in params.items():
        spec = reward.params.get(key)
        if spec is None:
            known = ", ".join(reward.params) or "none"
            issues.append(FieldIssue(f"{path}.{key}", f"unknown parameter of {reward_name} (known: {known})"))
        elif not _type_ok(value, spec.kind):
            issues.append(FieldIssue(f"{path}.{key}", f"must be {_TYPE_WORDS[spec.kind]}"))
        elif spec.minimum is not None and value < spec.minimum:
            issues.append(FieldIssue(f"{path}.{key}", f"must be >= {spec.minimum:g}"))
    return issues


def resolve_params(reward_name: str, params: Params) -> dict[str, Any]:
    """The reward's params with defaults filled (assumes `param_issues` found nothing)."""
    reward = BUILTIN_REWARDS[reward_name]
    out = {k: p.default for k, p in reward.params.items()}
    out.update(params)
    return out


@dataclass(frozen=True)
class BoundReward:
    """A spec reward ready to score: name (as the spec calls it), function and resolved params."""

    name: str
    builtin: BuiltinReward
    params: dict[str, Any]
    scope: str = "completion"

    def __call__(self, prompt: str, completion: str, row: Row) -> float:
        return float(self.builtin.fn(prompt, completion, row, self.params))

    def score_conversation(self, conversation: list[dict[str, str]], actor_name: str, row: Row) -> float:
        """A builtin reward at conversation scope scores the conversation's last message as the
        completion (the first message, the user prompt, as the prompt): one shared value for every actor."""
        prompt = conversation[0]["content"] if conversation else ""
        last = conversation[-1]["content"] if len(conversation) > 1 else ""
        return self(prompt, last, row)

    def score_many(self, calls: list[dict[str, Any]], rows: list[Row]) -> list[float]:
        """The batch interface every reward has (see python_rewards): one score per call's kwargs."""
        out = []
        for call, row in zip(calls, rows):
            if "conversation" in call:
                out.append(self.score_conversation(call["conversation"], call["actor_name"], row))
            else:
                out.append(self(call["prompt"], call["completion"], row))
        return out

    @property
    def fields(self) -> list[str]:
        return self.builtin.fields(self.params)


def bind_reward(reward_spec: Mapping[str, Any]) -> BoundReward:
    source = reward_spec["source"]
    return BoundReward(
        reward_spec["name"], BUILTIN_REWARDS[source["name"]], resolve_params(source["name"], source["params"]), reward_spec.get("scope", "completion")
    )


def combine_rewards(components: Mapping[str, float], weights: Mapping[str, float]) -> float:
    """Weighted sum of an environment's reward components."""
    return float(sum(weights[name] * value for name, value in components.items()))
