"""The `code` and `tools` environments: programs and tool calls run in the sandbox; abuse is
contained, scored as failure, logged, and the next episode runs; whole runs through both."""

import json
import textwrap

import pytest
from runtime_helpers import TEST_THREADS
from sandbox_helpers import listener, marker, run_folders, wait_until_gone

from troupe.spec.runspec_types import Reward
from troupe import EventWriter, run_spec
from troupe.envs.code_env import CodeEnvironment, extract_program, parse_tests
from troupe.envs.collaborative import Episode, Message
from troupe.sandbox import Limits, Sandbox, sandbox_status
from troupe.envs.tools_env import CalculatorError, ToolsEnvironment, calculate, format_tool_call, parse_tool_calls

needs_sandbox = pytest.mark.skipif(not sandbox_status().usable, reason="needs bubblewrap (scripts/setup.sh installs it)")
# The settings: no network, 512 MB, a fork loop bounded at 200 processes, 1 MB of output.
LIMITS = Limits(memory_mb=512, cpu_seconds=5, processes=200, output_bytes=1_000_000, wall_seconds=8)


def episode(row: dict, actor: str = "coder") -> Episode:
    return Episode(0, 0, 0, [], "", {}, {}, row=row)


def code_env(run_dir, logs: list) -> CodeEnvironment:
    env = CodeEnvironment({"testsField": "tests", "maxTries": 2})
    env.name, env.actors, env.sandbox = "code", ["coder"], Sandbox(LIMITS, run_dir=run_dir)
    env.log_sink = lambda level, message: logs.append((level, message))
    return env


def test_program_extraction_and_tests_parsing():
    assert extract_program("here:\n```python\nprint(1)\n```\nand\n```python\nprint(2)\n```") == "print(2)\n"
    assert extract_program("print(3)") == "print(3)"
    assert parse_tests('[{"input": "1", "output": "2"}]') == [{"input": "1", "output": "2"}]
    assert parse_tests([{"input": "1"}]) is None and parse_tests("nope") is None


def test_calculator_evaluates_arithmetic_and_nothing_else():
    assert calculate("(3+4)*12") == 84 and calculate("7/2") == 3.5 and calculate("-2**3") == -8
    for bad in ("__import__('os').system('id')", "2**100000", "1/0", "abs(-1)", "x+1"):
        with pytest.raises(CalculatorError):
            calculate(bad)


def test_tool_calls_parse_in_the_chat_template_format():
    text = 'let me <tool_call>{"name": "calculator", "arguments": {"expression": "2+2"}}</tool_call> and ' \
           '<tool_call>{"name": "python", "arguments": "{\\"code\\": \\"print(1)\\"}"}</tool_call> <tool_call>{oops}</tool_call>'
    calls = parse_tool_calls(text)
    assert calls[0] == ("calculator", {"expression": "2+2"}) and calls[1] == ("python", {"code": "print(1)"})
    assert isinstance(calls[2], str) and calls[2].startswith("invalid tool call")
    assert parse_tool_calls("the answer is 4") == []


@needs_sandbox
def test_code_environment_feeds_back_failures_then_scores_the_pass_rate():
    with run_folders() as (_, run, _other):
        logs: list = []
        env = code_env(run, logs)
        e = episode({"tests": [{"input": "3 4\n", "output": "7"}, {"input": "10 5\n", "output": "15"}]})
        env.reset(e)
        assert env.next_speaker(e, 0) == "coder"
        feedback = env.step(e, Message("coder", "```python\na, b = map(int, input().split())\nprint(a - b)\n```", [], []))
        assert "0/2 tests passed" in feedback and "expected '7', got '-1'" in feedback and not e.done
        assert env.step(e, Message("coder", "a, b = map(int, input().split())\nprint(a + b)", [], [])) == "All 2 tests passed."
        assert e.done and env.score(e) == {"coder": {"pass_rate": 1.0}}
        assert len(logs) == 2  # each failing test of the first try


ABUSE = {
    "reading files outside": ("print(open('{secret}').read())", "FileNotFoundError"),
    "writing outside": ("open('{run}/written.txt', 'w').write('x')", "OSError"),
    "a network connect": ("import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=2)\nprint('connected')", "exit code 1"),
    "a fork loop bounded at 200": (
        "import os\nfor _ in range(400):\n    if os.fork() == 0:\n        os.setsid()\n        os.execv('/usr/bin/sleep', ['sleep', '{tag}'])\nprint('forked')",
        "BlockingIOError",
    ),
    "1 GB allocation": ("x = bytearray(1024 ** 3)\nprint('allocated')", "MemoryError"),
    "an infinite loop": ("while True: pass", "limit"),
    "100 MB of output": ("import sys\nfor _ in range(100):\n    sys.stdout.write('x' * 1_000_000)", "output limit reached"),
}


@needs_sandbox
@pytest.mark.parametrize("case", list(ABUSE))
def test_abuse_through_the_code_environment_is_contained_scored_as_failure_logged_and_the_next_episode_runs(case):
    program, expected = ABUSE[case]
    tag = marker()
    with run_folders() as (_, run, other), listener() as port:
        logs: list = []
        env = code_env(run, logs)
        tests = [{"input": "", "output": "ok"}]
        bad = episode({"tests": tests})
        env.reset(bad)
        env.step(bad, Message("coder", program.format(secret=other / "secret.txt", run=run, port=port, tag=tag), [], []))
        env.step(bad, Message("coder", program.format(secret=other / "secret.txt", run=run, port=port, tag=tag), [], []))
        assert bad.done and env.score(bad) == {"coder": {"pass_rate": 0.0}}
        assert logs and all(level == "warning" for level, _ in logs)
        assert any(expected in message for _, message in logs), logs
        assert not (run / "written.txt").exists()
        # The run goes on: the next episode's honest program passes.
        good = episode({"tests": tests})
        env.reset(good)
        assert env.step(good, Message("coder", "print('ok')", [], [])) == "All 1 tests passed."
    assert wait_until_gone(tag) == []


USER_TOOLS = '''
def weather(city):
    """Today's weather in a city."""
    return {"city": city, "sky": "clear"}
'''


@needs_sandbox
def test_tools_environment_runs_builtin_and_user_tools_in_the_sandbox():
    with run_folders() as (_, run, other):
        logs: list = []
        env = ToolsEnvironment({"builtin": ["calculator", "python"], "code": USER_TOOLS, "maxCalls": 3})
        env.name, env.actors, env.sandbox = "tools", ["agent"], Sandbox(LIMITS, run_dir=run)
        env.log_sink = lambda level, message: logs.append((level, message))
        e = episode({})
        env.reset(e)
        assert "weather(city): Today's weather in a city." in e.systems["agent"] and "calculator(expression: str)" in e.systems["agent"]
        call = lambda name, args: f'<tool_call>{json.dumps({"name": name, "arguments": args})}</tool_call>'  # noqa: E731
        reply = env.step(e, Message("agent", call("calculator", {"expression": "6*7"}) + call("weather", {"city": "Oslo"}), [], []))
        assert [json.loads(r.removeprefix("<tool_response>").removesuffix("</tool_response>")) for r in reply.split("\n")] == [
            {"name": "calculator", "content": "42"}, {"name": "weather", "content": '{"city": "Oslo", "sky": "clear"}'},
        ]
        reply = env.step(e, Message("agent", call("python", {"code": f"print(open('{other / 'secret.txt'}').read())"}), [], []))
        assert "FileNotFoundError" in reply and logs and not e.done
        assert env.step(e, Message("agent", "The answer is 42.", [], [])) is None and e.done


def tiny_actor(name: str, tokens: int) -> dict:
    return {"name": name, "model": {"source": "tiny", "preset": "tiny-char-2l"}, "trainable": True,
            "training": {"learningRate": 1e-3}, "sampling": {"temperature": 1.0, "maxNewTokens": tokens}}


@needs_sandbox
def test_a_run_with_a_code_environment_and_a_tools_environment(tmp_path, events_validator):
    from runtime_helpers import check_protocol

    tests = json.dumps([{"input": "", "output": "1"}])
    (tmp_path / "code.jsonl").write_text("".join(json.dumps({"prompt": "print 1", "tests": tests, "answer": "1"}) + "\n" for _ in range(4)))
    spec = {
        "specVersion": 1, "name": "acting", "seed": 1,
        "actors": [tiny_actor("coder", 6)],
        "datasets": [{"name": "code", "source": {"kind": "file", "path": "code.jsonl", "format": "jsonl"}}],
        "rewards": [{"name": "m", "source": {"kind": "builtin", "name": "math_answer", "params": {"field": "answer"}}}],
        "environments": [
            {"name": "prog", "kind": "code", "dataset": "code", "actors": ["coder"], "code": {"maxTries": 2}},
            {"name": "calc", "kind": "tools", "dataset": "code", "actors": ["coder"], "tools": {"builtin": ["calculator"], "maxCalls": 2},
             "rewards": [{"reward": "m"}], "maxTurns": 3},
        ],
        "sandbox": {"memoryMb": 512, "cpuSeconds": 5, "processes": 64, "outputBytes": 100000},
        "algorithm": {"name": "grpo", "groupSize": 2},
        "trainer": {"steps": 2, "promptsPerStep": 2, "episodesPerStep": 4, "cpuThreads": TEST_THREADS},
    }
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    check_protocol(result.events, events_validator)
    episodes = [e for e in result.events if e["type"] == "episode"]
    prog = [e for e in episodes if e["environment"] == "prog"]
    assert prog and all("pass_rate" in e["rewardComponents"] for e in prog)
    # A random tiny model's programs fail: the tests' feedback is the environment's, never trained on.
    feedback = [m for e in prog for m in e["messages"] if m["role"] == "environment"]
    assert feedback and all(m["actor"] == "tests" and not m["trained"] for m in feedback)
    assert any(e["type"] == "log" and "test 1" in e["message"] for e in result.events)
    assert all(e["values"]["reward/pass_rate"] == 0.0 for e in result.events if e["type"] == "metric" and "reward/pass_rate" in e["values"])


THREADS_REWARD = '''
import threading, time
def reward(prompt, completion, **row):
    threads = [threading.Thread(target=time.sleep, args=(0.2,)) for _ in range(12)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return 1.0
'''


@needs_sandbox
def test_python_rewards_run_under_the_runs_sandbox_settings():
    from troupe.rewards.python_rewards import bind_python_reward

    spec = {"name": "r", "scope": "completion", "source": {"kind": "python", "code": THREADS_REWARD, "entrypoint": "reward"},
            "timeoutSeconds": 10, "memoryMb": 1024, "failureScore": -1.0}
    roomy = bind_python_reward(Reward.from_dict(spec), None, {"processes": 64, "outputBytes": 5000})
    tight = bind_python_reward(Reward.from_dict(spec), None, {"processes": 8})
    try:
        assert (roomy.processes, roomy.output_bytes) == (64, 5000)
        assert roomy("p", "c", {}) == 1.0
        assert tight("p", "c", {}) == -1.0  # 12 threads do not fit in 8 tasks
    finally:
        roomy.close()
        tight.close()


# --- tools environment: defects fixed with the tool-use learning check (test_tools_learning.py) ---


def test_a_tool_call_left_open_at_the_end_of_a_message_is_still_a_call():
    """Cut off at maxNewTokens or never closed: a call (vLLM's Hermes parser reads it so too), not a final
    answer; a broken one gets an error back rather than ending the episode as the answer."""
    opened = '<tool_call>{"name": "calculator", "arguments": {"expression": "2+2"}}'
    assert parse_tool_calls(opened) == [("calculator", {"expression": "2+2"})]
    both = format_tool_call("calculator", {"expression": "1+1"}) + " then " + opened
    assert parse_tool_calls(both) == [("calculator", {"expression": "1+1"}), ("calculator", {"expression": "2+2"})]
    cut = parse_tool_calls('<tool_call>{"name": "calcul')
    assert len(cut) == 1 and isinstance(cut[0], str) and cut[0].startswith("invalid tool call")


def _spoken(env: ToolsEnvironment, e: Episode, text: str):
    """As acting.py plays a turn: the message joins the episode, then the environment answers."""
    m = Message("agent", text, [], [])
    e.messages.append(m)
    reply = env.step(e, m)
    if reply is not None:
        e.messages.append(Message(env.speaker, reply, [], [], role="environment"))
    return reply


def test_a_tool_call_the_actor_could_never_read_the_result_of_is_not_run_and_no_result_passes_for_its_answer():
    """Before: a call on the actor's last turn (maxTurns) was run and its result was the conversation's last
    message, which a conversation-scope reward scores as the final answer: math_answer gave 1.0 for
    `<tool_response>... "84"` without the actor ever answering. Now the call is not run and the environment
    closes the episode with a note that holds no answer. The same after the maxCalls budget is spent."""
    from troupe.rewards.math_answer import math_answer
    from troupe.envs.tools_env import NO_ANSWER, format_tool_response

    params, row = {"field": "answer"}, {"answer": "84"}
    assert math_answer("", format_tool_response("calculator", "84"), row, params) == 1.0  # the old last message
    call = format_tool_call("calculator", {"expression": "12*7"})
    for max_turns, max_calls in ((1, 4), (3, 1)):
        env = ToolsEnvironment({"builtin": ["calculator"], "maxCalls": max_calls})
        env.name, env.actors, env.max_turns = "tools", ["agent"], max_turns
        e = episode(row)
        env.reset(e)
        replies = [_spoken(env, e, call) for _ in range(min(max_turns, 2))]
        assert e.done and replies[-1] == NO_ANSWER, (max_turns, max_calls, replies)
        assert len(e.state["results"]) == min(max_turns - 1, max_calls)  # only calls whose result the actor reads run
        assert math_answer("", e.conversation()[-1]["content"], row, params) == 0.0
        assert env.metrics([e])["tools/answer_rate"] == 0.0


def test_tools_metrics_count_calls_errors_successes_and_answers():
    env = ToolsEnvironment({"builtin": ["calculator"], "maxCalls": 2})
    env.name, env.actors, env.max_turns = "tools", ["agent"], 3
    env.log_sink = lambda level, message: None
    script = [
        [format_tool_call("calculator", {"expression": "6*7"}), "42"],  # a successful call, then the answer
        [format_tool_call("calculator", {"expression": "x"}), format_tool_call("calculator", {"expression": "6*7"}), "42"],  # an error, a success
        ["41"],  # answers directly
        [format_tool_call("calculator", {"expression": "1/0"}), "0"],  # a failed call only
    ]
    episodes = []
    for texts in script:
        e = episode({})
        env.reset(e)
        for text in texts:
            _spoken(env, e, text)
        assert e.done
        episodes.append(e)
    assert env.metrics(episodes) == {"tools/calls": 4 / 4, "tools/errors": 2 / 4, "tools/success_rate": 2 / 4, "tools/answer_rate": 1.0}
