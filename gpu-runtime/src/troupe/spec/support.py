"""What this runtime (the CPU / plain-torch path) runs today, and a field-named refusal for the rest.

The RunSpec already describes everything Troupe will do; this module is the one place that says
which of it the runtime implements, so a spec is refused up front (exit 2) instead of failing
half-way through a run.
"""

from __future__ import annotations

from typing import Any

import jinja2

from ..envs.collaborative import MULTI_ACTOR_KINDS, round_spec_issues
from ..models.lora import peft_available
from ..algorithms.grpo import SUPPORTED_LOSS_TYPES, loss_type_issue
from ..algorithms.learners import SUPPORTED_ALGORITHMS
from ..rewards.builtin import BUILTIN_REWARDS, param_issues
from .issues import FieldIssue, SpecError
from .game_remote_rules import game_remote_issues
from ..envs.games.board import pettingzoo_available
from ..envs.remote.protocol import grpc_available
from ..engines.train.deepspeed_config import deepspeed_actor_issues
from ..host.gpu_ids import granted_gpus_text, host_gpu_ids, ungranted_gpus
from ..envs.games.chess import chess_available
from .run_rules import run_rule_issues
from .rollout_rules import rollout_issues
from .learner_rules import learner_rule_issues
from .ppo_rules import ppo_rule_issues
from .team_rules import team_rule_issues
from .role_rules import role_rule_issues
from .cory_rules import cory_rule_issues
from .hierarchical_rules import hierarchical_rule_issues
from ..trackers.rules import tracker_issues
from ..envs.mcp_tools import mcp_server_issues
from ..rewards.judge import bind_judge_reward
from .runspec_types import Reward
from . import vllm_rules
from .vllm_rules import vllm_actor_issues

GPU_EXTRA = "pip install troupe[gpu]"
# `reward/mean` and `reward/std` describe the combined reward; a component may not shadow them.
RESERVED_REWARD_NAMES = ("mean", "std")


def deepspeed_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("deepspeed") is not None


def effective_offload_between_phases(spec: dict[str, Any], cuda_available: bool) -> bool:
    """`trainer.offloadBetweenPhases`, or its default (residency.offload_between_phases): on when two or more
    local models share a GPU. Without placements every local model of a rank shares that rank's GPU."""
    chosen = spec["trainer"].get("offloadBetweenPhases")
    if chosen is not None:
        return bool(chosen)
    if not cuda_available:
        return False
    local = [a for a in spec["actors"] if a["backend"] != "openai"]
    seen: dict[int | None, int] = {}
    for a in local:
        gpus = a["placement"]["gpus"]
        key = gpus[0] if gpus else None
        seen[key] = seen.get(key, 0) + 1
    return any(count > 1 for count in seen.values())


def datasets_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("datasets") is not None


def ray_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("ray") is not None


def support_issues(spec: dict[str, Any], cuda_available: bool, gpu_count: int | None = None, bf16_supported: bool = True) -> list[FieldIssue]:
    issues: list[FieldIssue] = []
    if gpu_count is None:
        gpu_count = 1 if cuda_available else 0

    def no(path: str, message: str) -> None:
        issues.append(FieldIssue(path, message))

    issues.extend(run_rule_issues(spec))
    issues.extend(rollout_issues(spec, cuda_available))
    issues.extend(tracker_issues(spec))
    for i, env in enumerate(spec["environments"]):
        servers = (env.get("tools") or {}).get("mcp") or []
        issues.extend(FieldIssue(path, message) for path, message in mcp_server_issues(servers, f"environments.{i}.tools.mcp"))
    issues.extend(learner_rule_issues(spec))
    issues.extend(ppo_rule_issues(spec))
    issues.extend(team_rule_issues(spec))
    issues.extend(role_rule_issues(spec))
    issues.extend(cory_rule_issues(spec))
    issues.extend(hierarchical_rule_issues(spec))
    if spec.get("cluster", {}).get("kind") == "ray" and not ray_available():
        no("cluster.kind", '"ray" needs Ray on this host (pip install ray); it is not installed here: use kind "local"')

    for i, actor in enumerate(spec["actors"]):
        p = f"actors.{i}"
        backend = actor["backend"]
        issues.extend(vllm_actor_issues(actor, p))
        if backend == "vllm" and (reason := vllm_rules.vllm_host_issue(cuda_available)):
            no(f"{p}.backend", reason)
        elif backend == "openai" and any(actor["name"] in e["actors"] and e["kind"] == "single_turn" and not e.get("evalOnly") for e in spec["environments"]):
            # In no environment is fine: a judge (rewards of kind "judge", or library rewards). An eval-only
            # single-turn environment evaluates it.
            no(f"{p}.backend", '"openai" actors take part in collaborative, parallel and adversarial environments only, or judge, or answer an eval-only environment (evalOnly: true): they are frozen, so a training single_turn environment would train nothing')
        training = actor["training"]
        if "lora" in training and not peft_available():
            no(f"{p}.training.lora", "LoRA needs peft (pip install peft), which is not installed here")
        if training["backend"] == "deepspeed" and not deepspeed_available():
            no(f"{p}.training.backend", f'"deepspeed" needs DeepSpeed on this host ({GPU_EXTRA}, or pip install deepspeed); it is not installed here: use "fsdp2" for ZeRO-3 sharding with torch alone')
        elif training["backend"] == "deepspeed" and not cuda_available:
            no(f"{p}.training.backend", '"deepspeed" trains on CUDA GPUs only; on this host use "fsdp2" (also with CPU processes)')
        elif training["backend"] == "deepspeed":
            between = effective_offload_between_phases(spec, cuda_available)
            for path, message in deepspeed_actor_issues(training, deepspeed_installed=True, cuda_available=True, offload_between_phases=between):
                no(f"{p}.{path}", message)
        if actor["placement"]["gpus"] and not cuda_available:
            no(f"{p}.placement.gpus", f"asks for GPUs {actor['placement']['gpus']}, but this host has no CUDA device; use placement.processes for CPU ranks")
        elif actor["placement"]["gpus"] and (missing := ungranted_gpus(actor["placement"]["gpus"])):
            no(f"{p}.placement.gpus", f"asks for GPU {', '.join(map(str, missing))}, but the runner granted this run GPU(s) {granted_gpus_text()} (indices are the runner's own)")
        elif actor["placement"]["gpus"] and host_gpu_ids() is None and max(actor["placement"]["gpus"]) >= gpu_count and spec.get("cluster", {}).get("kind") != "ray":
            # Under Ray the indices only count the ranks: each rank gets one GPU of some node (a bundle), so this
            # host's count says nothing (a node with one GPU checks a 2-rank spec too); Ray refuses what it cannot place.
            no(f"{p}.placement.gpus", f"asks for GPU {max(actor['placement']['gpus'])}, but this host has {gpu_count} (indices 0-{gpu_count - 1})")
        if training["precision"] == "bf16" and cuda_available and not bf16_supported:
            no(f"{p}.training.precision", "bf16 needs a GPU with bf16 support (Ampere or newer); this one has none: use fp32")
        if training["lossType"] not in SUPPORTED_LOSS_TYPES:
            no(f"{p}.training.lossType", f'"{training["lossType"]}" is not supported yet (supported: {", ".join(SUPPORTED_LOSS_TYPES)})')
        else:
            clash = loss_type_issue(spec["algorithm"]["name"], training["lossType"])
            if clash:
                no(f"{p}.training.lossType", clash)

    for i, dataset in enumerate(spec["datasets"]):
        source = dataset["source"]
        p = f"datasets.{i}.source"
        if source["kind"] == "huggingface" and not datasets_available():
            no(f"{p}.kind", '"huggingface" datasets are read with the datasets package, which is not installed here: pip install datasets')
        elif source["kind"] == "stored":
            # The runner writes a stored upload into the run folder and rewrites it to kind "file".
            no(f"{p}.kind", '"stored" datasets are read by the runner, not the runtime: run this spec through Troupe, '
               'or download the dataset and use kind "file"')

    for i, reward in enumerate(spec["rewards"]):
        source = reward["source"]
        p = f"rewards.{i}"
        if reward["name"] in RESERVED_REWARD_NAMES:
            no(f"{p}.name", f'"{reward["name"]}" is reserved: reward/{reward["name"]} is a metric of the combined reward')
        if source["kind"] == "python":
            try:
                compile(source["code"], "<reward code>", "exec")
            except SyntaxError as e:
                no(f"{p}.source.code", f"syntax error on line {e.lineno}, column {e.offset}: {e.msg}")
        elif source["kind"] == "judge":
            try:
                bind_judge_reward(Reward.from_dict(reward), i)  # the template and the parser's pattern, checked before anything runs
            except SpecError as e:
                issues.extend(e.issues)
        else:
            issues.extend(param_issues(source["name"], source["params"], f"{p}.source.params"))
            if BUILTIN_REWARDS[source["name"]].conversation_fn is not None and reward["scope"] != "conversation":
                no(f"{p}.scope", f'{source["name"]} scores a whole conversation per actor: give it scope "conversation"')

    for i, env in enumerate(spec["environments"]):
        p = f"environments.{i}"
        issues.extend(game_remote_issues(env, i, pettingzoo_available(), grpc_available(), chess_available()))
        if env["kind"] == "parallel" and len(env["actors"]) < 2:
            no(f"{p}.actors", "a parallel environment has one or more drafting actors, then the combiner (at least 2 actors)")
        if env["kind"] == "adversarial":
            frozen = {a["name"] for a in spec["actors"] if not a["trainable"]}
            if len(env["actors"]) != 2 or env["actors"][0] in frozen or env["actors"][1] not in frozen:
                no(f"{p}.actors", "an adversarial environment has two actors: a trainable attacker, then a frozen defender")
        if env["kind"] in MULTI_ACTOR_KINDS:
            for path, message in round_spec_issues(env, i):
                no(path, message)
        for viewer, speakers in (env.get("visibility") or {}).items():
            if viewer not in env["actors"]:
                no(f"{p}.visibility.{viewer}", f'"{viewer}" is not an actor of this environment')
            for j, speaker in enumerate(speakers):
                if speaker not in env["actors"]:
                    no(f"{p}.visibility.{viewer}.{j}", f'"{speaker}" is not an actor of this environment')
        trainable = {a["name"] for a in spec["actors"] if a["trainable"]}
        # An eval-only environment, or any in an eval-only run (trainer.steps 0), trains nothing by design.
        if not env.get("evalOnly") and spec["trainer"]["steps"] > 0 and not any(a in trainable for a in env["actors"]):
            no(f"{p}.actors", "no actor of this environment is trainable: it would sample and train nothing")
        template = env["prompt"].get("template")
        if template is not None:
            try:
                jinja2.Environment(undefined=jinja2.StrictUndefined).parse(template)
            except jinja2.TemplateSyntaxError as e:
                no(f"{p}.prompt.template", f"template syntax error on line {e.lineno}: {e.message}")

    algorithm = spec["algorithm"]["name"]
    if algorithm not in SUPPORTED_ALGORITHMS:
        no("algorithm.name", f'"{algorithm}" is not supported yet (supported: {", ".join(SUPPORTED_ALGORITHMS)})')

    trainer = spec["trainer"]
    if trainer["device"] == "cuda" and not cuda_available:
        no("trainer.device", '"cuda" asked for, but CUDA is not available here (torch.cuda.is_available() is false)')
    if trainer["evalEvery"] > 0:
        fractions = {d["name"]: d["evalFraction"] for d in spec["datasets"]}
        if not any(e.get("evalOnly") or fractions.get(e["dataset"], 0) > 0 for e in spec["environments"]):
            no("trainer.evalEvery", "no environment has rows to evaluate: mark one evalOnly, or give its dataset an evalFraction > 0")
    return issues
