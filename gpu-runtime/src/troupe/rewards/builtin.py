"""Builtin rewards: pure functions of (prompt, completion, dataset row, params) -> float.

Each reward is scored on its own and logged as `reward/<name>`; an environment combines them
with its weights (`combine_rewards`). Parameters come from the spec
(`rewards.N.source.params`) and are checked before the run starts (`param_issues`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from .outcomes import EXTRACTORS, VOTE_MODES, debate_rewards, majority_vote_rewards
from .math_answer import math_answer
from ..spec.issues import FieldIssue
from ..spec.runspec_types import Reward, RewardSourceBuiltin

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
    # Rewards of a whole conversation per actor (outcomes.py: debate, majority vote): used instead of
    # `fn` at conversation scope; such rewards are refused at completion scope (spec/support.py).
    conversation_fn: Callable[[Sequence[Mapping[str, str]], str, Row, Params], float] | None = None
    # A check across params (None: fine), reported on the params' path.
    check: Callable[[Params], str | None] = lambda _p: None


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


def _conversation_only(prompt: str, completion: str, row: Row, params: Params) -> float:
    raise ValueError("this reward scores a whole conversation: give it scope \"conversation\"")


def _one_of(name: str, value: Any, known: tuple[str, ...]) -> str | None:
    return None if value in known else f'{name} must be one of {", ".join(known)} (got "{value}")'


_ANSWER_FIELD = Param(str, "", "dataset column holding the right answer (empty: none)")
_EXTRACT = Param(str, "text", "how an answer is read from a message: text, last_number or letter")

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
    "math_answer": BuiltinReward(
        "math_answer",
        math_answer,
        {"field": Param(str, "answer", "dataset column holding the answer (a number, an expression, or a solution ending in #### n)")},
        fields=lambda p: [p["field"]],
        doc=math_answer.__doc__ or "",
    ),
    "majority_vote": BuiltinReward(
        "majority_vote",
        _conversation_only,
        {"field": _ANSWER_FIELD, "extract": _EXTRACT, "mode": Param(str, "agree", "agree: 1 for voting with the majority; team: 1 for all when the majority is right (needs field)")},
        fields=lambda p: [p["field"]] if p["field"] else [],
        doc=majority_vote_rewards.__doc__ or "",
        conversation_fn=lambda c, actor, row, p: majority_vote_rewards(c, row, p["field"], p["extract"], p["mode"]).get(actor, 0.0),
        check=lambda p: _one_of("extract", p["extract"], EXTRACTORS)
        or _one_of("mode", p["mode"], VOTE_MODES)
        or ('mode "team" needs field: the dataset column holding the right answer' if p["mode"] == "team" and not p["field"] else None),
    ),
    "debate_verdict": BuiltinReward(
        "debate_verdict",
        _conversation_only,
        {"judge": Param(str, "Judge", "the actor whose last message names the winning debater"), "field": _ANSWER_FIELD, "extract": _EXTRACT},
        fields=lambda p: [p["field"]] if p["field"] else [],
        doc=debate_rewards.__doc__ or "",
        conversation_fn=lambda c, actor, row, p: debate_rewards(c, row, p["judge"], p["field"], p["extract"]).get(actor, 0.0),
        check=lambda p: _one_of("extract", p["extract"], EXTRACTORS),
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
    if not issues:
        problem = reward.check(resolve_params(reward_name, params))
        if problem:
            issues.append(FieldIssue(path, problem))
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
        if self.builtin.conversation_fn is not None:
            return float(self.builtin.conversation_fn(conversation, actor_name, row, self.params))
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


def bind_reward(reward: Reward) -> BoundReward:
    """A builtin reward (`reward.source` is a `RewardSourceBuiltin`) with its params resolved."""
    source = reward.source
    assert isinstance(source, RewardSourceBuiltin), f'reward "{reward.name}" is not a builtin'
    return BoundReward(reward.name, BUILTIN_REWARDS[source.name], resolve_params(source.name, dict(source.params)), reward.scope)


def combine_rewards(components: Mapping[str, float], weights: Mapping[str, float]) -> float:
    """Weighted sum of an environment's reward components."""
    return float(sum(weights[name] * value for name, value in components.items()))
