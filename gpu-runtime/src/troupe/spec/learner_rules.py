"""The offline learners' rules (packages/contracts/src/learnerRules.ts `learnerIssues`), mirrored for specs
that reach the runtime without a Troupe client. tests/test_learner_rules.py runs the cases of
tests/fixtures/learner_rules.cases.json, which the contracts' test runs too."""

from __future__ import annotations

from typing import Any

from ..algorithms.learners import OFFLINE_NAMES
from .issues import FieldIssue

# Columns of the builtin toy datasets (data.py generates them): a missing target is refused before queueing.
BUILTIN_DATASET_COLUMNS: dict[str, tuple[str, ...]] = {
    "echo_letter": ("prompt", "letter"),
    "reverse_word": ("prompt", "word", "answer"),
}


def learner_rule_issues(spec: dict[str, Any]) -> list[FieldIssue]:
    issues: list[FieldIssue] = []

    def add(path: str, message: str) -> None:
        issues.append(FieldIssue(path, message))

    algorithm = spec["algorithm"]
    name = algorithm["name"]
    offline = name in OFFLINE_NAMES
    for i, env in enumerate(spec["environments"]):
        p = f"environments.{i}"
        if env.get("completionField") is not None and name != "sft":
            add(f"{p}.completionField", f'read only when algorithm.name is "sft" (it is "{name}")')
        for field in ("chosenField", "rejectedField"):
            if env.get(field) is not None and name != "dpo":
                add(f"{p}.{field}", f'read only when algorithm.name is "dpo" (it is "{name}")')
        if not offline:
            continue
        if env["kind"] != "single_turn":
            add(f"{p}.kind", f"{name} trains on dataset rows, one actor per row: only single_turn environments (a {env['kind']} environment samples episodes)")
            continue
        actor = next((a for a in spec["actors"] if a["name"] == env["actors"][0]), None)
        if actor is not None and actor["backend"] == "openai":
            add(
                f"{p}.actors.0",
                f'{name} updates the environment\'s actor, and "{actor["name"]}" is an API actor (behind an OpenAI-compatible endpoint, its weights are not on the runner)',
            )
        if env.get("evalOnly"):
            continue  # evaluated (sampled and scored), never trained on: no target column needed
        dataset = next((d for d in spec["datasets"] if d["name"] == env["dataset"]), None)
        source = dataset["source"] if dataset is not None else {}
        columns = BUILTIN_DATASET_COLUMNS.get(source.get("name", "")) if source.get("kind") == "builtin" else None
        if columns is None:
            continue  # files and uploads: the columns are checked when the rows load (learners/offline_data.py)
        if name == "sft":
            targets = [("completionField", env.get("completionField") or "completion")]
        else:
            targets = [("chosenField", env.get("chosenField") or "chosen"), ("rejectedField", env.get("rejectedField") or "rejected")]
        missing = [column for _, column in targets if column not in columns]
        if name == "dpo" and missing:
            add(
                f"{p}.dataset",
                f'dpo trains on preference pairs (columns "{targets[0][1]}" and "{targets[1][1]}"), and builtin dataset "{source["name"]}" '
                f"is not a preference dataset (columns: {', '.join(columns)})",
            )
        elif missing:
            add(f"{p}.completionField", f'builtin dataset "{source["name"]}" has no column "{missing[0]}" (columns: {", ".join(columns)})')
    if algorithm["labelSmoothing"] > 0 and not (name == "dpo" and algorithm["dpoLoss"] == "robust"):
        add("algorithm.labelSmoothing", 'read only by dpoLoss "robust" (algorithm.name "dpo")')
    if not offline:
        return issues
    sampling = f"{name} trains on dataset rows and samples nothing"
    if algorithm["dynamicSampling"]["enabled"]:
        add("algorithm.dynamicSampling.enabled", f"{sampling}: dynamic sampling has no groups to resample")
    if algorithm.get("async") is not None:
        add("algorithm.async", f"{sampling}: there are no rollouts to run ahead")
    if algorithm.get("importanceCorrection") is not None:
        add("algorithm.importanceCorrection", f"{sampling}: there is no sampler to correct for")
    if algorithm.get("entropyCoef") is not None:
        add("algorithm.entropyCoef", f"{sampling}: the entropy bonus keeps a sampling policy exploring, and {name}'s loss has none")
    for i, actor in enumerate(spec["actors"]):
        if actor["training"]["klBeta"] > 0:
            message = "sft has no KL term: set klBeta to 0" if name == "sft" else "dpo's distance to its reference is algorithm.beta: set klBeta to 0"
            add(f"actors.{i}.training.klBeta", message)
    return issues
