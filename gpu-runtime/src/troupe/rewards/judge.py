"""`rewards[].source.kind: "judge"`: a reward that asks a frozen actor of the run to judge.

    {"name": "helpful", "scope": "conversation",
     "source": {"kind": "judge", "actor": "Judge", "parser": {"kind": "number", "min": 0, "max": 10},
                "prompt": "Rate 0-10 how well this answers {{ question }}:\\n{{ transcript }}\\nScore:"}}

The prompt is a Jinja template (sandboxed: a spec's template cannot reach Python objects) over `prompt` and
`completion` (completion scope) or `conversation`, `transcript` (the conversation as `speaker: text` lines) and
`actor_name` (conversation scope), plus the row's dataset columns. The judge is any frozen actor of the run: a
local model (through its rollout engine) or an OpenAI-compatible API. Prompts go out `batchSize` at a time, each
distinct prompt once, and answers are cached by rendered prompt for the run (`cache`). A reply the parser cannot
read scores the reward's failureScore with a log line quoting it (the failure rules of every Python reward apply:
`maxFailuresInARow` failures in a row fail the run).

It is an in-process reward (rewards/reward_api.py's InProcessReward): the run hands it its frozen actors like a decorated
judge function, and its failures are counted and reported the same way.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass, field
from typing import Any, Mapping

from jinja2 import StrictUndefined, TemplateError
from jinja2.sandbox import SandboxedEnvironment

from .reward_api import InProcessReward
from ..spec import SpecError
from ..spec.runspec_types import Reward, RewardSourceJudge, RewardSourceJudgeParserRegex, to_dict

_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?")
_YES_NO = re.compile(r"\b(yes|no)\b", re.IGNORECASE)
MAX_CACHED = 100_000


class JudgeParseError(ValueError):
    pass


def parse_judgement(reply: str, parser: Mapping[str, Any]) -> float:
    """The score in a judge's reply, or JudgeParseError saying why not."""
    kind = parser["kind"]
    if kind == "number":
        match = _NUMBER.search(reply)
        if match is None:
            raise JudgeParseError("no number in the judge's reply")
        value = float(match.group(0))
        low, high = parser.get("min"), parser.get("max")
        if (low is not None and value < low) or (high is not None and value > high):
            raise JudgeParseError(f"the judge's number {value:g} is outside [{low if low is not None else '-inf'}, {high if high is not None else 'inf'}]")
        return value
    if kind == "yes_no":
        match = _YES_NO.search(reply)
        if match is None:
            raise JudgeParseError("neither yes nor no in the judge's reply")
        return 1.0 if match.group(1).lower() == "yes" else 0.0
    if kind == "regex":
        match = re.search(parser["pattern"], reply)
        if match is None:
            raise JudgeParseError(f"the judge's reply does not match {parser['pattern']!r}")
        group = match.group("score") if "score" in match.re.groupindex else match.group(1) if match.re.groups else match.group(0)
        try:
            return float(group)
        except (TypeError, ValueError) as e:
            raise JudgeParseError(f"the matched text {group!r} is not a number") from e
    raise JudgeParseError(f"unknown parser {kind!r}")


def transcript(conversation: Any) -> str:
    if not isinstance(conversation, list):
        return str(conversation)
    return "\n".join(f"{m.get('actor') or m.get('role', '?')}: {m.get('content', '')}" for m in conversation if isinstance(m, Mapping))


@dataclass
class JudgeReward(InProcessReward):
    source: Mapping[str, Any] = field(default_factory=dict)
    template: Any = field(default=None, repr=False)
    cache: dict[str, str] = field(default_factory=dict, repr=False)
    judge_calls: int = 0  # prompts actually sent to the judge (not answered from the cache)

    def _run(self, calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
        started = time.perf_counter()
        judge = self.actors.get(self.source["actor"])
        if judge is None:
            return [{"error": f'the judge "{self.source["actor"]}" is not a frozen actor of this run', "seconds": 0.0} for _ in calls]
        prompts: list[str | None] = []
        results: list[dict[str, Any] | None] = []
        for call in calls:
            try:
                variables = {**call, **({"transcript": transcript(call["conversation"])} if "conversation" in call else {})}
                prompts.append(self.template.render(**variables))
                results.append(None)
            except TemplateError as e:
                prompts.append(None)
                results.append({"error": f"the judge prompt does not render for this row: {type(e).__name__}: {e}", "seconds": 0.0})
        wanted = list(dict.fromkeys(p for p in prompts if p is not None and p not in self.cache))
        batch = int(self.source.get("batchSize", 16))
        replies: dict[str, str] = {}
        for i in range(0, len(wanted), batch):
            chunk = wanted[i : i + batch]
            try:
                answers = judge.generate(chunk)
            except Exception as e:  # noqa: BLE001 - the judge's failure is this reward's, scored and reported
                for p in chunk:
                    replies[p] = f"\0{type(e).__name__}: {e}"
                continue
            self.judge_calls += len(chunk)
            replies.update(zip(chunk, answers))
        if self.source.get("cache", True):
            for p, reply in replies.items():
                if not reply.startswith("\0") and len(self.cache) < MAX_CACHED:
                    self.cache[p] = reply
        share = (time.perf_counter() - started) / max(len(calls), 1)
        out = []
        for prompt, result in zip(prompts, results):
            if result is not None:
                out.append(result)
                continue
            assert prompt is not None
            reply = self.cache.get(prompt, replies.get(prompt, "\0no reply"))
            if reply.startswith("\0"):
                out.append({"error": f"the judge failed: {reply[1:]}", "seconds": share})
                continue
            try:
                out.append({"score": parse_judgement(reply, self.source["parser"]), "seconds": share})
            except JudgeParseError as e:
                out.append({"error": f"{e}: {reply[:500]!r}", "seconds": share})
        return out


def bind_judge_reward(reward: Reward, index: int | None = None) -> JudgeReward:
    source = reward.source
    assert isinstance(source, RewardSourceJudge), f'reward "{reward.name}" is not a judge'
    where = f"rewards.{index}.source.prompt" if index is not None else "source.prompt"
    try:
        template = SandboxedEnvironment(undefined=StrictUndefined, autoescape=False).from_string(source.prompt)
    except TemplateError as e:
        raise SpecError.at(where, f"the judge prompt is not a valid template: {e}") from e
    if isinstance(source.parser, RewardSourceJudgeParserRegex):
        try:
            re.compile(source.parser.pattern)
        except re.error as e:
            raise SpecError.at(where.replace("prompt", "parser.pattern"), f"not a valid regular expression: {e}") from e
    return JudgeReward(
        reward.name,
        "",
        "judge",
        reward.scope,
        float(reward.timeout_seconds),
        int(reward.memory_mb),
        failure_score=float(reward.failure_score),
        max_failures_in_a_row=int(reward.max_failures_in_arow),
        source=to_dict(source),  # JudgeReward reads its source as the document (actor, parser, batchSize, cache)
        template=template,
    )
