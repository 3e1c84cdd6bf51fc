"""Cross-field rules the JSON Schema cannot express: the contracts' `superRefine`, mirrored.

Paths and messages match packages/contracts/src/runSpec.ts so a spec rejected by the web is
rejected here with the same words (and the runtime stays safe when a human skips the web).
"""

from __future__ import annotations

from typing import Any

from .acting_rules import acting_environment_issues
from .eval_rules import eval_rule_issues
from .issues import FieldIssue
from .outcome_rules import outcome_rule_issues


def reference_issues(spec: dict[str, Any]) -> list[FieldIssue]:
    issues: list[FieldIssue] = []

    def unique(key: str) -> set[str]:
        seen: set[str] = set()
        for i, item in enumerate(spec.get(key, [])):
            name = item.get("name")
            if name in seen:
                issues.append(FieldIssue(f"{key}.{i}.name", f'duplicate name "{name}"'))
            seen.add(name)
        return seen

    for i, actor in enumerate(spec.get("actors", [])):
        if actor.get("backend") == "openai" and "api" not in actor:
            issues.append(FieldIssue(f"actors.{i}.api", "an openai-backend actor needs `api` (baseUrl, model)"))
        if actor.get("backend") == "openai" and actor.get("trainable"):
            issues.append(
                FieldIssue(f"actors.{i}.trainable", "an actor behind an API cannot be trained: set trainable to false")
            )

    actors = unique("actors")
    datasets = unique("datasets")
    rewards = unique("rewards")
    unique("environments")
    by_name = {a.get("name"): a for a in spec.get("actors", [])}
    for i, reward in enumerate(spec.get("rewards", [])):
        source = reward.get("source", {})
        if source.get("kind") != "judge":
            continue
        judge = by_name.get(source.get("actor"))
        if judge is None:
            issues.append(FieldIssue(f"rewards.{i}.source.actor", f'unknown actor "{source.get("actor")}"'))
        elif judge.get("trainable"):
            issues.append(FieldIssue(f"rewards.{i}.source.actor", f'a judge is a frozen actor: "{judge["name"]}" is trainable (set its trainable to false, or judge with another actor)'))
    for i, env in enumerate(spec.get("environments", [])):
        if env.get("dataset") not in datasets:
            issues.append(FieldIssue(f"environments.{i}.dataset", f'unknown dataset "{env.get("dataset")}"'))
        for j, name in enumerate(env.get("actors", [])):
            if name not in actors:
                issues.append(FieldIssue(f"environments.{i}.actors.{j}", f'unknown actor "{name}"'))
        for j, ref in enumerate(env.get("rewards", [])):
            if ref.get("reward") not in rewards:
                issues.append(FieldIssue(f"environments.{i}.rewards.{j}.reward", f'unknown reward "{ref.get("reward")}"'))
        if env.get("kind") == "single_turn" and len(env.get("actors", [])) != 1:
            issues.append(FieldIssue(f"environments.{i}.actors", "a single_turn environment has exactly one actor"))
        issues.extend(acting_environment_issues(env, i, spec.get("algorithm", {}).get("name", "grpo")))
        if env.get("kind") == "collaborative" and not env.get("roundSpec"):
            issues.append(FieldIssue(f"environments.{i}.roundSpec", "a collaborative environment needs a roundSpec"))
    issues.extend(eval_rule_issues(spec))
    issues.extend(outcome_rule_issues(spec))
    # An eval-only run (trainer.steps 0) may evaluate frozen actors only.
    if not any(a.get("trainable") for a in spec.get("actors", [])) and spec.get("trainer", {}).get("steps", 1) > 0:
        issues.append(FieldIssue("actors", "at least one actor must be trainable"))
    return issues
