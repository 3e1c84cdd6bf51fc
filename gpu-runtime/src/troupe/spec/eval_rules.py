"""The contracts' eval rules (packages/contracts/src/evalRules.ts `evalIssues`), mirrored for specs that reach
the runtime without a Troupe client. tests/test_eval_rules.py runs the same cases as
packages/contracts/test/evalRules.test.ts, so the two cannot drift apart unnoticed."""

from __future__ import annotations

from typing import Any

from .issues import FieldIssue


def eval_rule_issues(spec: dict[str, Any]) -> list[FieldIssue]:
    issues: list[FieldIssue] = []
    steps, eval_every = spec["trainer"]["steps"], spec["trainer"]["evalEvery"]
    fraction = {d["name"]: d["evalFraction"] for d in spec["datasets"]}
    trained = [e for e in spec["environments"] if not e.get("evalOnly")]
    if steps > 0 and not trained:
        issues.append(FieldIssue("environments", "every environment is evalOnly, so nothing would train: set trainer.steps to 0 for an eval-only run, or train on one of them"))
    for i, env in enumerate(spec["environments"]):
        if env.get("evalOnly"):
            if steps > 0 and eval_every == 0:
                issues.append(FieldIssue(f"environments.{i}.evalOnly", "an eval-only environment is evaluated every trainer.evalEvery steps, and trainer.evalEvery is 0: set it (e.g. 10)"))
            sharing = next((t for t in trained if t["dataset"] == env["dataset"]), None)
            if sharing is not None:
                issues.append(
                    FieldIssue(
                        f"environments.{i}.dataset",
                        f'dataset "{env["dataset"]}" is trained on by environment "{sharing["name"]}"; an eval-only environment evaluates every row '
                        "of its dataset, so give it a dataset of its own",
                    )
                )
        elif steps == 0 and fraction.get(env["dataset"], 0) == 0:
            issues.append(
                FieldIssue(
                    f"environments.{i}.evalOnly",
                    f'trainer.steps is 0 (an eval-only run evaluates every environment once), and dataset "{env["dataset"]}" holds out no rows '
                    "(evalFraction 0): mark this environment evalOnly to evaluate all its rows, or give the dataset an evalFraction",
                )
            )
    return issues
