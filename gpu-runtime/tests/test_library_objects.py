"""Troupe as a library in the Actors library's shapes: the Actors README's collaborative example written with
Troupe's objects compiles to the same RunSpec as the equivalent JSON and trains a few steps on tiny models; `+`
keeps weights and eval-only sets; the decorators fill dataset columns by name and an unknown one is refused by
name; a RunSpec reads back into objects that compile to it again."""

from __future__ import annotations

import json

import pytest
from runtime_helpers import TEST_THREADS

from troupe import (
    Actor,
    Builtin,
    CollaborativeActorConfig,
    CollaborativeEnvironment,
    SingleTurnEnvironment,
    SpecError,
    TrainCfg,
    conversation_reward_function,
    from_spec,
    reward_function,
    save_spec,
    train,
    validate_spec,
)

ROWS = [{"problem": f"what is {a}+{b}?", "answer": str(a + b)} for a, b in [(1, 2), (2, 3), (3, 4), (4, 1), (2, 2), (5, 3), (1, 1), (6, 2)]]


@conversation_reward_function(name="math_reward", weight=1.0, batched=True)
def math_reward(conversation, problem, answer, actor_name):
    return [float(a in c[-1]["content"]) for c, a in zip(conversation, answer)]


def readme_example():
    """The Actors README's collaborative example, with tiny character models so it trains on a CPU."""
    bob = Actor(name="Bob", model="tiny:tiny-char-2l", training=TrainCfg(learning_rate=3e-3), sampling={"maxNewTokens": 4})
    alice = Actor(name="Alice", model="tiny:tiny-char-2l", training=TrainCfg(learning_rate=3e-3), sampling={"maxNewTokens": 4})
    return CollaborativeEnvironment(
        actors=[CollaborativeActorConfig(actor=alice, system_prompt="You are Alice"), CollaborativeActorConfig(actor=bob, system_prompt="You are Bob")],
        reward_functions=[math_reward],
        round_spec="Bob -> Alice -> (Bob/Alice)*2",
        train_data=ROWS,
        prompt_column="problem",
        apply_chat_template=False,
        name="solve",
    )


EQUIVALENT_JSON = {
    "specVersion": 1,
    "name": "actors-readme",
    "description": "",
    "seed": 0,
    "actors": [
        {"name": "Alice", "model": {"source": "tiny", "preset": "tiny-char-2l"}, "trainable": True, "training": {"learningRate": 3e-3}, "sampling": {"maxNewTokens": 4}},
        {"name": "Bob", "model": {"source": "tiny", "preset": "tiny-char-2l"}, "trainable": True, "training": {"learningRate": 3e-3}, "sampling": {"maxNewTokens": 4}},
    ],
    "datasets": [{"name": "solve", "source": {"kind": "file", "path": "data/solve.jsonl", "format": "jsonl"}}],
    "rewards": [],  # the decorated function's entry is compared on its own below
    "environments": [
        {
            "name": "solve", "kind": "collaborative", "actors": ["Alice", "Bob"], "dataset": "solve", "weight": 1.0,
            "prompt": {"field": "problem", "applyChatTemplate": False},
            "rewards": [{"reward": "math_reward", "weight": 1.0}],
            "systemPrompts": {"Alice": "You are Alice", "Bob": "You are Bob"},
            "roundSpec": "Bob -> Alice -> (Bob/Alice)*2",
        }
    ],
    "algorithm": {"name": "grpo", "groupSize": 4},
    "trainer": {"steps": 3, "promptsPerStep": 2},
}


def test_the_actors_readme_example_compiles_to_the_same_runspec_as_its_json():
    spec = readme_example().to_spec(name="actors-readme", steps=3, group_size=4, prompts_per_step=2)
    (reward,) = spec.pop("rewards")
    assert {**spec, "rewards": []} == EQUIVALENT_JSON
    assert reward["name"] == "math_reward" and reward["scope"] == "conversation"
    assert "def math_reward(conversation, problem, answer, actor_name)" in reward["source"]["code"]
    validate_spec(spec | {"rewards": [reward]})  # a valid RunSpec as it stands


def test_the_actors_readme_example_trains_a_few_steps_on_tiny_models(tmp_path):
    result = train(readme_example(), steps=2, work_dir=tmp_path, group_size=4, prompts_per_step=2, trainer={"cpuThreads": TEST_THREADS, "device": "cpu"})
    assert result.state == "succeeded", result.message
    assert (tmp_path / "data" / "solve.jsonl").read_text().count("\n") == len(ROWS)
    trained = {e["actor"] for e in result.events if e["type"] == "metric" and "reward/mean" in e["values"]}
    assert trained == {"Alice", "Bob"}
    episode = next(e for e in result.events if e["type"] == "episode")
    assert [m["actor"] for m in episode["messages"] if m["role"] == "assistant"][:2] == ["Bob", "Alice"]


def test_plus_keeps_weights_and_eval_only_sets():
    bob = Actor(name="Bob", model="tiny:tiny-char-2l", training=TrainCfg())
    exact = Builtin("exact_match", field="answer")
    math_env = SingleTurnEnvironment(actors=[bob], reward_functions=[exact], prompt_column="problem", train_data=ROWS, eval_data={"held_out": ROWS[:2]}, weight=3.0, name="math")
    words = SingleTurnEnvironment(actors=[bob], reward_functions=["letter_match"], train_data=[{"prompt": "say a:", "letter": "a"}] * 4, weight=1.0, name="words")
    aime_eval = SingleTurnEnvironment(actors=[bob], reward_functions=[exact], prompt_column="problem", eval_data={"aime25": ROWS[-2:]}, name="aime")
    env = math_env + words + aime_eval
    spec = env.to_spec(steps=5)
    by_name = {e["name"]: e for e in spec["environments"]}
    assert list(by_name) == ["math", "math.held_out", "words", "aime.aime25"]
    assert by_name["math"]["weight"] == 3.0 and by_name["words"]["weight"] == 1.0
    assert [n for n, e in by_name.items() if e.get("evalOnly")] == ["math.held_out", "aime.aime25"]
    assert [a["name"] for a in spec["actors"]] == ["Bob"]  # one actor, however many environments
    assert {r["name"] for r in spec["rewards"]} == {"exact_match", "letter_match"}
    validate_spec(spec)


def test_two_different_actors_with_one_name_are_refused():
    a = SingleTurnEnvironment(actors=[Actor(name="Bob", model="tiny:tiny-char-2l", training=TrainCfg())], reward_functions=["letter_match"], train_data=ROWS, name="a")
    b = SingleTurnEnvironment(actors=[Actor(name="Bob", model="tiny:tiny-char-4l", training=TrainCfg())], reward_functions=["letter_match"], train_data=ROWS, name="b")
    with pytest.raises(ValueError, match='two different actors are named "Bob"'):
        (a + b).to_spec()


@reward_function(name="has_answer", weight=0.5)
def has_answer(prompt, completion, answer):
    return float(answer in completion)


@reward_function(name="uses_a_missing_column")
def uses_a_missing_column(prompt, completion, solution):
    return 0.0


def test_decorators_fill_dataset_columns_by_name_and_refuse_an_unknown_one_by_name(tmp_path):
    bob = Actor(name="Bob", model="tiny:tiny-char-2l", training=TrainCfg(), sampling={"maxNewTokens": 3})
    good = SingleTurnEnvironment(actors=[bob], reward_functions=[has_answer], prompt_column="problem", train_data=ROWS, apply_chat_template=False, name="math")
    result = train(good, steps=1, work_dir=tmp_path / "good", group_size=2, prompts_per_step=2, trainer={"cpuThreads": TEST_THREADS, "device": "cpu"})
    assert result.state == "succeeded", result.message
    episodes = [e for e in result.events if e["type"] == "episode"]
    # The reward saw each row's `answer`: its score is exactly whether that answer is in the completion.
    for e in episodes:
        completion = [m["content"] for m in e["messages"] if m["role"] == "assistant"][-1]
        row = ROWS[e["datasetRow"]]
        assert e["rewardComponents"]["has_answer"] == float(row["answer"] in completion)
    bad = SingleTurnEnvironment(actors=[bob], reward_functions=[uses_a_missing_column], prompt_column="problem", train_data=ROWS, name="math")
    result = train(bad, steps=1, work_dir=tmp_path / "bad", group_size=2, prompts_per_step=2, trainer={"cpuThreads": TEST_THREADS, "device": "cpu"})
    assert result.state == "failed" and isinstance(result.error, SpecError)
    assert "solution" in result.message and "uses_a_missing_column" in result.message, result.message


def test_a_runspec_reads_back_into_objects_that_compile_to_it_again(tmp_path):
    spec = readme_example().to_spec(name="actors-readme", steps=3, group_size=4, prompts_per_step=2)
    again = from_spec(spec).to_spec(name="actors-readme", steps=3, group_size=4, prompts_per_step=2)
    assert again["environments"] == spec["environments"] and again["actors"] == sorted(spec["actors"], key=lambda a: ["Alice", "Bob"].index(a["name"]))
    assert again["rewards"] == spec["rewards"] and again["datasets"] == spec["datasets"]
    saved = save_spec(readme_example(), tmp_path / "spec.yaml", name="actors-readme", steps=3)
    from troupe import load_spec

    assert load_spec(tmp_path / "spec.yaml")["environments"][0]["roundSpec"] == saved["environments"][0]["roundSpec"]
    assert (tmp_path / "data" / "solve.jsonl").exists()
    with_eval = SingleTurnEnvironment(actors=[Actor(name="Bob", model="tiny:tiny-char-2l")], reward_functions=["letter_match"], eval_data={"x": ROWS}, name="only_eval")
    assert from_spec(with_eval.to_spec()).to_spec()["environments"] == with_eval.to_spec()["environments"]
    assert json.dumps(spec)  # plain JSON all the way down


def test_the_recorded_code_of_a_by_name_reward_runs_in_the_sandbox_as_a_dashboard_would_run_it(tmp_path):
    """What `to_spec` stores is what a dashboard runs: Python code in the sandbox, called with every column.
    A function that names its columns is stored with an adapter that passes it only those."""
    from troupe import run_spec
    from troupe.sandbox import sandbox_status

    if not sandbox_status().usable:
        pytest.skip("needs bubblewrap (scripts/setup.sh installs it)")
    bob = Actor(name="Bob", model="tiny:tiny-char-2l", training=TrainCfg(), sampling={"maxNewTokens": 3})
    env = SingleTurnEnvironment(actors=[bob], reward_functions=[has_answer], prompt_column="problem", train_data=ROWS, apply_chat_template=False, name="math")
    spec = save_spec(env, tmp_path / "spec.json", steps=1, group_size=2, prompts_per_step=2, trainer={"cpuThreads": TEST_THREADS, "device": "cpu"})
    assert spec["rewards"][0]["source"]["entrypoint"] == "has_answer__by_name"
    result = run_spec(tmp_path / "spec.json")  # no in-process functions: the stored code runs in the sandbox
    assert result.state == "succeeded", result.message
    episodes = [e for e in result.events if e["type"] == "episode"]
    assert episodes and not any(e["type"] == "log" and e["level"] == "error" for e in result.events)
    for e in episodes:
        completion = [m["content"] for m in e["messages"] if m["role"] == "assistant"][-1]
        assert e["rewardComponents"]["has_answer"] == float(ROWS[e["datasetRow"]]["answer"] in completion)


def test_troupe_train_is_the_library_call_even_once_the_loop_module_is_imported(tmp_path):
    """`troupe.train` is also the loop's module name: importing the module must not take the call away."""
    import troupe
    import troupe.train as loop

    assert callable(troupe.train) and hasattr(loop, "run_loop")
    env = SingleTurnEnvironment(actors=[Actor(name="Bob", model="tiny:tiny-char-2l", training=TrainCfg(), sampling={"maxNewTokens": 2})],
                                reward_functions=["letter_match"], train_data=[{"prompt": "say a:", "letter": "a"}] * 4, apply_chat_template=False, name="w")
    result = troupe.train(env, steps=1, work_dir=tmp_path, group_size=2, prompts_per_step=2, trainer={"cpuThreads": TEST_THREADS, "device": "cpu"})
    assert result.state == "succeeded", result.message
