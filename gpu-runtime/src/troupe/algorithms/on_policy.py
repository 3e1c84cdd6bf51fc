"""The on-policy learner: the GRPO family and the PPO family, on a step's scored episodes.

prepare: each trainable actor's share of the batch (training_shares.py);
advantages: group-normalised rewards (GRPO family, grpo.py), or GAE over a critic's values (PPO family: the
critics live here, learners/ppo.py; mappo's is centralised);
update: `iterationsPerBatch` clipped policy-gradient steps (update.py), then the critics fit the returns;
state: the critics' weights and optimizers, saved with and loaded from a checkpoint.

Each phase is a method a subclass overrides (learner_base.py's interface; learners/value_decomposition.py: vdn and
qmix mix per-agent values in `prepare` and fit the mixed value in `fit`; learners/happo.py: a seeded `order`
and the earlier agents' ratios in `update`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from pathlib import Path
from typing import Any

import torch

from ..engines.rollout.sampling import Rollout, _pad_to, concat_rollouts
from ..engines.train.policy import completion_logprobs
from ..models.lora import adapters_disabled
from .advantage_estimators import build_estimator
from .learner_base import LearnerSetup, Updates, register_learner
from .learners import family, ppo
from .names import GRPO_FAMILY, ROLE_EXCHANGE_ALGORITHMS
from .lr_schedule import lr_at
from .training_shares import Share, actor_shares, share_seats
from .micro_batch import ChoiceLog, metrics_of, resolve_for_training
from .update import update_actor
from .update_loss import LossOptions, entropy_coef_of, tis_cap_of

def reference_name(actor: str) -> str:
    return f"{actor}/reference"


def reference_logprobs(actor: Any) -> Any:
    """The KL reference's log-probs of a micro-batch (None without KL): the frozen copy, or for LoRA the
    same model with its adapters off."""
    if actor.section.training.kl_beta <= 0:
        return lambda batch: None

    def compute(batch: Rollout) -> torch.Tensor:
        if actor.reference is not None:
            return completion_logprobs(actor.reference, batch, actor.temperature)[0]
        model = actor.loaded.model
        was_training = model.training
        model.eval()
        with adapters_disabled(model):
            logp = completion_logprobs(model, batch, actor.temperature)[0]
        model.train(was_training)
        return logp

    return compute


def store_advantages(shares: list[Share], per_row: list[float]) -> None:
    """Each share's rows' advantages, kept with its episodes (transcripts show them)."""
    offset = 0
    for sh in shares:
        sh.set_advantages(per_row[offset : offset + len(sh.rewards)])
        offset += len(sh.rewards)


def to_device(batch: Rollout, device: torch.device) -> Rollout:
    if batch.completion_ids.device == device:
        return batch
    return Rollout(
        batch.prompt_ids.to(device), batch.prompt_mask.to(device), batch.completion_ids.to(device), batch.completion_mask.to(device),
        batch.sampler_logprobs.to(device), batch.texts, batch.ended.to(device) if batch.ended is not None else None,
    )


def seats(name: str, single: list[Any], conversations: list[Any]) -> list[str]:
    """"environment/actor" of each of the actor's shares, in training_shares.actor_shares' order ("environment/role"
    for each role an actor plays in an environment with `roles`)."""
    return share_seats(name, single, conversations)


# The role-exchange learners (cory) are GRPO's with a schedule of their own: learners/cory.py registers them.
@register_learner(*(n for n in GRPO_FAMILY if n not in ROLE_EXCHANGE_ALGORITHMS), "ppo", "ippo", "mappo")
class OnPolicyLearner:
    """GRPO family and PPO family behind one `learn(step, batch)`; PPO's critics and the advantage estimator's
    baselines are this learner's state."""

    rolls_out = True

    def __init__(self, setup: LearnerSetup) -> None:
        spec, actors, residency, ctx, device = setup.spec, setup.actors, setup.residency, setup.ctx, setup.device
        self.spec, self.actors, self.residency, self.ctx, self.device = spec, actors, residency, ctx, device
        self.algorithm, self.trainer = setup.run.algorithm, setup.run.trainer  # the typed sections it reads
        self.log, self.report_memory, self.liger_cls = setup.log, setup.report_memory, setup.liger_cls
        self.micro_batch_log = ChoiceLog(setup.log)  # trainer.microBatchSize "auto": each actor's choice
        # The GRPO family's advantages (advantage_estimators.py: group-normalised, or rae's per-seat baselines).
        self.estimator = build_estimator(self.algorithm)
        # The PPO family's critics (learners/ppo.py): one per actor (ppo, ippo) or per environment (mappo).
        self.critics = self.build_critics(setup)
        if self.critics is not None:
            ppo.register(self.critics, residency)

    def build_critics(self, setup: LearnerSetup) -> ppo.Critics | None:
        if family(setup.run.algorithm.name) != "ppo":
            return None
        return ppo.build_critics(setup.run, setup.actors, setup.environments, setup.ctx, setup.work_dir, setup.log)

    # ------------------------------------------------------------------ state
    def save(self, folder: Path) -> None:
        if self.critics is not None:
            ppo.save_critics(folder, self.critics, self.ctx)
        state = self.state_dict()
        if state and self.ctx.is_main:
            torch.save(state, folder / "learner.pt")

    def load(self, folder: Path) -> None:
        if self.critics is not None:
            ppo.load_critics(folder, self.critics)
        if self.state_dict():  # this learner keeps state of its own: the checkpoint must hold it
            path = folder / "learner.pt"
            if not path.exists():
                raise FileNotFoundError(f"{folder}: no learner.pt (was the checkpoint written by a {self.algorithm.name} run with these settings?)")
            self.load_state_dict(torch.load(path, map_location="cpu", weights_only=False))

    def state_dict(self) -> dict[str, Any]:
        """What this learner keeps across steps besides the critics ({} when nothing)."""
        estimator = self.estimator.state_dict()
        return {"advantage_estimator": estimator} if estimator else {}

    def load_state_dict(self, state: dict[str, Any]) -> None:
        if "advantage_estimator" in state:
            self.estimator.load_state_dict(state["advantage_estimator"])

    # ------------------------------------------------------------------ phases
    def prepare(self, step: int, batch: Any) -> None:
        """What the whole step needs before any actor's advantages: the estimator's look at the step (hierarchical:
        the proposer's reward), mappo's centralised values."""
        self.estimator.prepare(batch)
        critics = self.critics
        if critics is not None and critics.settings.centralised:
            self.residency.for_rollout(c.name for c in critics.all())
            ppo.prepare_central(critics, batch.conversations, lambda episode, actor: episode.rewards[actor])
            critics.central = self.ctx.broadcast_object(critics.central)  # every rank fits and trains on rank 0's

    def order(self, step: int) -> list[str]:
        """The trainable actors in the order they are updated."""
        return [name for name, actor in self.actors.items() if actor.trainable]

    def group_advantages(self, name: str, shares: list[Share], batch: Any) -> torch.Tensor:
        """Critic-free advantages of the actor's rows (the GRPO family's estimator)."""
        seat_names = seats(name, batch.parts[name], batch.conversations)
        return self.estimator.advantages(seat_names, [sh.rewards for sh in shares], self.algorithm.group_size, self.actors[name].section.training)

    def targets(self, name: str, rows: Rollout, mask: torch.Tensor, rewards: list[float], batch: Any) -> ppo.Targets:
        """A critic's per-token advantages of the actor's rows (the PPO family)."""
        assert self.critics is not None
        return ppo.targets(self.critics, name, rows, mask, rewards, batch.conversations)

    def fit(self, fits: dict[str, list[ppo.CriticBatch]]) -> dict[str, dict[str, float]]:
        """The critics fit the step's returns once every actor has used their values (metrics per actor)."""
        assert self.critics is not None
        return ppo.fit_critics(self.critics, fits, self.residency, self.trainer, self.actors, self.ctx, self.micro_batch_log)

    def learn(self, step: int, batch: Any) -> tuple[Updates, dict[str, list[Share]]]:
        """Per actor: advantages, then iterationsPerBatch clipped PG steps; the metrics and shares of each trained actor."""
        actors, residency, ctx, critics = self.actors, self.residency, self.ctx, self.critics
        overlong = self.algorithm.overlong
        parts, conversations = batch.parts, batch.conversations
        updates: Updates = {}
        shares_of: dict[str, list[Share]] = {}
        fits: dict[str, list[ppo.CriticBatch]] = defaultdict(list)  # what each critic fits after the actors' updates
        self.prepare(step, batch)
        for name in self.order(step):
            actor = actors[name]
            shares = actor_shares(name, actor, parts[name], conversations, overlong.mode)
            if not shares:
                continue
            rewards_t = torch.tensor([r for sh in shares for r in sh.rewards], dtype=torch.float32)
            if critics is None:
                advantages = self.group_advantages(name, shares, batch)
                store_advantages(shares, advantages.tolist())
            # An actor with no token to train on this step (a round spec may skip it) is not updated.
            if sum(int(sh.loss_mask.sum()) for sh in shares) == 0:
                truncated = sum(sh.truncation[0] for sh in shares)
                if overlong.mode == "filter" and truncated:
                    # Every completion was cut off and filtered: report it rather than go silent.
                    self.log("warning", f'step {step}: every completion of "{name}" hit maxNewTokens and was filtered (algorithm.overlong.mode "filter"); not updated')
                    shares_of[name] = shares
                    updates[name] = {"truncation_rate": truncated / max(sum(sh.truncation[1] for sh in shares), 1), **batch.resampling.get(name, {})}
                continue
            shares_of[name] = shares
            pad = actor.loaded.tokenizer.pad_token_id
            rows = concat_rollouts([sh.rollout for sh in shares], pad)
            width = rows.completion_ids.shape[1]
            mask = torch.cat([_pad_to(sh.loss_mask, width, 0, left=False) for sh in shares])
            if critics is not None:
                advantages = rewards_t  # PPO family: replaced below by per-token advantages of rank 0's batch
            # Every rank trains on rank 0's batch, whatever its own sampling kernels drew.
            rows, mask, advantages = ctx.broadcast_object((rows, mask, advantages))
            rows, mask, advantages = to_device(rows, actor.device), mask.to(actor.device), advantages.to(actor.device)
            if critics is not None:
                # PPO family: per-token advantages from GAE over the critic's values (learners/ppo.py); every
                # rank runs the critic on the same batch (a sharded critic's forward is collective).
                residency.for_update(name, also=ppo.critic_of(critics, name, conversations))
                targets = self.targets(name, rows, mask, advantages.tolist(), batch)
                advantages = targets.advantages
                store_advantages(shares, targets.row_advantages)
                if targets.critic_batch is not None:
                    fits[critics.by_actor[name].name].append(targets.critic_batch)
                updates[name] = {"returns/mean": targets.returns_mean}
                if math.isfinite(targets.explained_variance):  # undefined while every return is equal
                    updates[name]["value/explained_variance"] = targets.explained_variance
            residency.for_update(name, also=[reference_name(name)] if actor.reference is not None else [])
            updates[name] = {**updates.get(name, {}), **self.update(step, name, actor, shares, rows, mask, advantages, batch)}
            self.report_memory(step, "update", actor=name)

        if critics is not None:
            # The critics fit the returns once every actor has used their values (value/loss per actor).
            for name, stats in self.fit(fits).items():
                if name in updates:
                    updates[name].update(stats)
        return updates, shares_of

    def update(self, step: int, name: str, actor: Any, shares: list[Share], rows: Rollout, mask: torch.Tensor, advantages: torch.Tensor, batch: Any) -> dict[str, float]:
        """`iterationsPerBatch` clipped policy-gradient steps of one actor on its rows (update.py); its metrics."""
        training = actor.section.training
        lr = lr_at(step, training.learning_rate, training.scheduler.type, training.scheduler.warmup_steps, self.trainer.steps)
        assert actor.backend is not None
        actor.backend.set_lr(lr)
        loss_options = LossOptions(
            loss_type=actor.loss_type,
            clip_eps_low=training.clip_eps_low,
            clip_eps_high=training.clip_eps_high,
            max_completion_len=max(sh.max_len for sh in shares),
            kl_beta=training.kl_beta,
            temperature=actor.temperature,
            tis_cap=tis_cap_of(self.algorithm),
            entropy_coef=entropy_coef_of(self.algorithm),
        )
        # Per micro-batch of this rank's rows: optimizer steps whose gradients are the whole batch's (update.py).
        micro_size, chosen = resolve_for_training(
            self.trainer.micro_batch_size, actor.backend.module, training, rows.completion_ids.shape[0],
            rows.prompt_ids.shape[1] + rows.completion_ids.shape[1], self.ctx,
        )
        self.micro_batch_log.report(name, chosen)
        result = update_actor(
            actor.backend, rows, mask, advantages, loss_options, training.iterations_per_batch, training.max_grad_norm, self.ctx,
            micro_size, reference_logprobs(actor), self.liger_cls,
            # The KL reference's own peak, before the update's (both were booked as "reference" before).
            after_reference=(lambda: self.report_memory(step, "reference", actor=name)) if training.kl_beta > 0 else None,
        )
        self.residency.observe("update")
        generated_tokens = float(mask.sum())
        lengths = mask.sum(dim=1).float()
        truncated, completions = (sum(sh.truncation[i] for sh in shares) for i in (0, 1))
        trained_advantages = advantages[mask > 0] if advantages.dim() == 2 else advantages  # PPO: per token
        return {
            **result,
            **metrics_of(chosen),
            "lr": lr,
            "completion_len": generated_tokens / mask.shape[0],
            "completion_len/min": float(lengths.min()),
            "completion_len/max": float(lengths.max()),
            "truncation_rate": truncated / max(completions, 1),
            "advantage/mean": float(trained_advantages.mean()),
            "advantage/std": float(trained_advantages.std(correction=0)),
            "advantage/min": float(trained_advantages.min()),
            "advantage/max": float(trained_advantages.max()),
            "tokens_per_s": generated_tokens / max(batch.rollout_seconds[name], 1e-9),
            **batch.resampling.get(name, {}),
            **batch.staleness(),
        }
