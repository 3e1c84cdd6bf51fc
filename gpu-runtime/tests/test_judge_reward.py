"""Judge rewards (`rewards[].source.kind: "judge"`): a frozen actor of the run scores completions. Against a real
local OpenAI-compatible HTTP server the test starts (the edge; nothing of ours is faked): rewards parsed from its
replies, cached by rendered prompt, and a reply that does not parse scored as failureScore with a log line. Also:
an API model evaluated on a single-turn eval set."""

from __future__ import annotations

import json
import re

import pytest
from chat_server_helpers import ChatServer, Request, last_message
from runtime_helpers import TEST_THREADS

from troupe.spec.runspec_types import Reward
from troupe import EventWriter, SpecError, run_spec, validate_spec
from troupe.rewards.judge import JudgeParseError, bind_judge_reward, parse_judgement


def judge_reply(request: Request, index: int) -> tuple[int, str]:
    """A judge that answers `7` for a question it can rate and `no idea` for the question `bad` (read from the
    rendered prompt), and `echo <prompt>` for anything else (an answering model)."""
    last = last_message(request)
    question = re.search(r"Question: (\S+)", last)
    return 200, (("no idea" if question.group(1) == "bad" else "Score: 7") if question else f"echo {last}")


@pytest.fixture
def judge_server():
    with ChatServer(judge_reply) as server:
        yield server


def judge_spec(tmp_path, url: str, rows: list[dict], **source) -> dict:
    (tmp_path / "rows.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return {
        "specVersion": 1, "name": "judged", "seed": 2,
        "actors": [
            {"name": "student", "model": {"source": "tiny", "preset": "tiny-char-2l"}, "training": {"learningRate": 1e-3}, "sampling": {"maxNewTokens": 4}},
            {"name": "Judge", "model": {"source": "tiny"}, "backend": "openai", "trainable": False, "api": {"baseUrl": url, "model": "judge-model", "timeoutSeconds": 5, "maxRetries": 0}},
        ],
        "datasets": [{"name": "rows", "source": {"kind": "file", "path": "rows.jsonl", "format": "jsonl"}}],
        "rewards": [{"name": "judged", "failureScore": -1, "maxFailuresInARow": 1000, "source": {
            "kind": "judge", "actor": "Judge", "prompt": "Question: {{ question }}\nAnswer: {{ completion }}\nRate 0-10.", "parser": {"kind": "number", "min": 0, "max": 10}, **source}}],
        "environments": [{"name": "qa", "dataset": "rows", "actors": ["student"], "prompt": {"field": "question", "applyChatTemplate": False}, "rewards": [{"reward": "judged"}]}],
        "algorithm": {"name": "grpo", "groupSize": 4},
        "trainer": {"steps": 2, "promptsPerStep": 2, "episodesPerStep": 8, "cpuThreads": TEST_THREADS, "device": "cpu"},
    }


def test_a_judge_behind_an_api_scores_the_run_and_a_bad_answer_is_the_failure_value_with_a_log_line(tmp_path, judge_server):
    rows = [{"question": "q1"}, {"question": "bad"}]
    result = run_spec(judge_spec(tmp_path, judge_server.url, rows), events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    episodes = [e for e in result.events if e["type"] == "episode"]
    assert episodes
    for e in episodes:
        asked = rows[e["datasetRow"]]["question"]
        assert e["rewardComponents"]["judged"] == (-1.0 if asked == "bad" else 7.0)
    errors = [e["message"] for e in result.events if e["type"] == "log" and e["level"] == "error"]
    assert any('reward "judged" failed' in m and "no number in the judge's reply: 'no idea'" in m for m in errors), errors
    sent = [r.body["messages"][-1]["content"] for r in judge_server.requests]
    assert all(s.startswith("Question: ") and "\nAnswer: " in s for s in sent)
    assert len(sent) == len(set(sent)), "a rendered prompt was sent twice: the cache did not answer it"
    assert {r.body["model"] for r in judge_server.requests} == {"judge-model"}


class CountingJudge:
    def __init__(self, reply):
        self.reply, self.prompts = reply, []

    def generate(self, prompts):
        self.prompts.append(list(prompts))
        return [self.reply(p) for p in prompts]


def test_each_distinct_prompt_goes_out_once_in_batches_and_later_calls_hit_the_cache():
    spec = {"name": "j", "scope": "completion", "source": {"kind": "judge", "actor": "J", "prompt": "{{ completion }}", "parser": {"kind": "yes_no"}, "batchSize": 2, "cache": True}}
    reward = bind_judge_reward(Reward.from_dict(spec))
    judge = CountingJudge(lambda p: "Yes." if "good" in p else "no")
    reward.actors = {"J": judge}
    calls = [{"prompt": "p", "completion": c} for c in ["good 1", "bad", "good 1", "good 2", "bad"]]
    assert reward.score_many(calls, [{}] * 5) == [1.0, 0.0, 1.0, 1.0, 0.0]
    assert judge.prompts == [["good 1", "bad"], ["good 2"]]  # 3 distinct prompts, 2 per batch
    assert reward.score_many(calls[:2], [{}] * 2) == [1.0, 0.0] and len(judge.prompts) == 2  # all from the cache
    reward.source = {**reward.source, "cache": False}
    reward.cache.clear()
    reward.score_many(calls[:1], [{}])
    assert len(judge.prompts) == 3


def test_conversation_scope_gets_a_transcript_and_dataset_columns():
    spec = {"name": "j", "scope": "conversation", "source": {"kind": "judge", "actor": "J", "prompt": "{{ topic }}|{{ actor_name }}|{{ transcript }}", "parser": {"kind": "regex", "pattern": r"score=(?P<score>\d+)"}, "batchSize": 8, "cache": True}}
    reward = bind_judge_reward(Reward.from_dict(spec))
    judge = CountingJudge(lambda p: "score=3")
    reward.actors = {"J": judge}
    conversation = [{"actor": "Bob", "content": "hi"}, {"actor": "Alice", "content": "hello"}]
    assert reward.score_many([{"topic": "greetings", "conversation": conversation, "actor_name": "Alice"}], [{}]) == [3.0]
    assert judge.prompts == [["greetings|Alice|Bob: hi\nAlice: hello"]]


def test_parsers():
    assert parse_judgement("I'd say 8.5/10", {"kind": "number"}) == 8.5
    assert parse_judgement("-2", {"kind": "number"}) == -2.0
    with pytest.raises(JudgeParseError, match="outside"):
        parse_judgement("11", {"kind": "number", "min": 0, "max": 10})
    with pytest.raises(JudgeParseError, match="no number"):
        parse_judgement("great", {"kind": "number"})
    assert parse_judgement("YES, it is right", {"kind": "yes_no"}) == 1.0
    assert parse_judgement("Well, no.", {"kind": "yes_no"}) == 0.0
    with pytest.raises(JudgeParseError):
        parse_judgement("nope", {"kind": "yes_no"})
    assert parse_judgement("verdict: 4 points", {"kind": "regex", "pattern": r"verdict: (\d+)"}) == 4.0


def test_bad_judge_settings_are_refused_by_field(tmp_path):
    spec = judge_spec(tmp_path, "http://127.0.0.1:9/v1", [{"question": "q"}])
    spec["rewards"][0]["source"]["actor"] = "student"  # trainable: not a judge
    with pytest.raises(SpecError) as info:
        validate_spec(spec)
    assert info.value.field == "rewards.0.source.actor"
    spec["rewards"][0]["source"]["actor"] = "Nobody"
    with pytest.raises(SpecError, match='unknown actor "Nobody"'):
        validate_spec(spec)
    spec = judge_spec(tmp_path, "http://127.0.0.1:9/v1", [{"question": "q"}], prompt="{{ unclosed")
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.exit_code == 2 and result.error.field == "rewards.0.source.prompt"


def test_an_api_model_is_evaluated_on_a_single_turn_eval_set(tmp_path, judge_server):
    rows = [{"question": "what is 2+2", "answer": "echo what is 2+2"}, {"question": "hello", "answer": "something else"}]
    (tmp_path / "eval.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    spec = {
        "specVersion": 1, "name": "eval an API model", "seed": 1,
        "actors": [{"name": "api", "model": {"source": "tiny"}, "backend": "openai", "trainable": False, "api": {"baseUrl": judge_server.url, "model": "m", "maxRetries": 0}}],
        "datasets": [{"name": "eval", "source": {"kind": "file", "path": "eval.jsonl", "format": "jsonl"}}],
        "rewards": [{"name": "exact", "source": {"kind": "builtin", "name": "exact_match", "params": {"field": "answer"}}}],
        "environments": [{"name": "qa", "dataset": "eval", "actors": ["api"], "evalOnly": True, "prompt": {"field": "question", "applyChatTemplate": False}, "rewards": [{"reward": "exact"}]}],
        "trainer": {"steps": 0, "cpuThreads": TEST_THREADS, "device": "cpu"},
    }
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    values = {k: v for e in result.events if e["type"] == "metric" for k, v in e["values"].items()}
    assert values["eval/qa/reward/mean"] == pytest.approx(0.5), values  # one of the two answers matches exactly
    assert len(judge_server.requests) == 2
