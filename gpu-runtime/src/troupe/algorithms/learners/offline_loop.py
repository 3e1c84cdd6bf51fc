"""One step of an offline learner (SFT, DPO): no rollout; each actor trains on a batch of dataset rows.

Per step each environment draws its share of `trainer.promptsPerStep` rows (environments.allocate_prompts),
tokenises them (offline_data.py) and its actor takes `iterationsPerBatch` optimizer steps on them. The
batch is split into this rank's rows and those into micro-batches whose gradients accumulate; each
micro-batch's loss is normalised by the WHOLE batch's count (SFT: completion tokens; DPO: pairs), so the
gradient is the one-process, whole-batch gradient (as update.py does for the GRPO family).
"""

from __future__ import annotations

import contextlib
import math
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator

import torch

from ...launch.distributed import RankContext
from ...envs.environments import allocate_prompts
from ...models.lora import adapters_disabled, has_lora
from ..learner_base import LearnerSetup, register_learner
from ..lr_schedule import lr_at
from ..micro_batch import ChoiceLog, metrics_of, resolve_for_training
from ...spec.runspec_types import RunSpec
from ..names import OFFLINE_FAMILY
from .dpo import dpo_loss, sequence_logps
from .offline_data import OfflineRows, SequenceBatch, check_target_columns, target_fields, tokenise_rows
from .sft import sft_loss

if TYPE_CHECKING:
    from ...actors import Actor
    from ...residency.manager import ResidencyManager


def token_logps(logits: torch.Tensor, labels: torch.Tensor) -> torch.Tensor:
    """log p(label) per position, in float32: [B, T, V], [B, T] -> [B, T]."""
    return torch.log_softmax(logits.float(), dim=-1).gather(-1, labels.unsqueeze(-1)).squeeze(-1)


def forward_logits(model: Any, batch: SequenceBatch) -> torch.Tensor:
    """Logits aligned with `batch.labels` (the last position predicts nothing)."""
    return model(input_ids=batch.input_ids, attention_mask=batch.attention_mask, use_cache=False).logits[:, :-1]


def pad_width(batch: SequenceBatch, width: int, pad_id: int) -> SequenceBatch:
    extra = width - batch.input_ids.shape[1]
    if extra <= 0:
        return batch
    pad = lambda t, v: torch.nn.functional.pad(t, (0, extra), value=v)  # noqa: E731
    return SequenceBatch(pad(batch.input_ids, pad_id), pad(batch.attention_mask, 0), pad(batch.completion_mask, 0))


def concat_batches(batches: list[SequenceBatch], pad_id: int) -> SequenceBatch:
    width = max(b.input_ids.shape[1] for b in batches)
    padded = [pad_width(b, width, pad_id) for b in batches]
    return SequenceBatch(*(torch.cat([getattr(b, k) for b in padded]) for k in ("input_ids", "attention_mask", "completion_mask")))


@dataclass
class PairBatch:
    """DPO: chosen and rejected sequences of the same pairs, padded to one width."""

    chosen: SequenceBatch
    rejected: SequenceBatch

    @property
    def pairs(self) -> int:
        return self.chosen.input_ids.shape[0]

    def rows(self, lo: int, hi: int) -> "PairBatch":
        return PairBatch(self.chosen.rows(lo, hi), self.rejected.rows(lo, hi))

    def joined(self) -> SequenceBatch:
        """[chosen; rejected] in one forward, as TRL's DPOTrainer concatenates them."""
        return SequenceBatch(*(torch.cat([getattr(self.chosen, k), getattr(self.rejected, k)]) for k in ("input_ids", "attention_mask", "completion_mask")))


def slices(rows: int, ctx: RankContext, size: int | None) -> Iterator[tuple[int, int]]:
    """This rank's micro-batches as (lo, hi) row ranges; the same count on every rank (an empty range pads)."""
    per_rank = math.ceil(rows / ctx.world_size)
    size = size or per_rank
    start, end = ctx.row_slice(rows)
    for k in range(max(1, math.ceil(per_rank / size))):
        lo = start + k * size
        yield lo, max(lo, min(lo + size, end))


class OfflineLearner:
    """SFT or DPO for the run's trainable actors, one `step` per training step (learner_base.py's interface with
    `rolls_out` False: the loop samples nothing for it; the actors' weights are its whole state)."""

    rolls_out = False

    @classmethod
    def from_setup(cls, setup: LearnerSetup) -> "OfflineLearner":
        # The same shares of promptsPerStep as the loop's plan (train.plan_prompts): eval-only environments draw none.
        sections = [setup.run.environments[env.index] for env in setup.environments]
        weights = [0.0 if section.eval_only else section.weight for section in sections]
        prompts = allocate_prompts(setup.run.trainer.prompts_per_step, weights)
        return cls(setup.run, setup.environments, setup.actors, prompts, setup.ctx, setup.residency, setup.log)

    def __init__(
        self, run: RunSpec, environments: list[Any], actors: dict[str, "Actor"], prompts_per_env: list[int], ctx: RankContext,
        residency: "ResidencyManager | None" = None, log: Callable[[str, str], Any] | None = None,
    ):
        self.run, self.environments, self.actors, self.prompts_per_env, self.ctx = run, environments, actors, prompts_per_env, ctx
        self.residency = residency
        self.micro_batch_log = ChoiceLog(log or (lambda level, message: None))  # trainer.microBatchSize "auto"
        self.algorithm: str = run.algorithm.name
        # evalOnly environments are never trained on: sampled and scored by evaluation.py like any run's.
        self.trained = [env for env in environments if not run.environments[env.index].eval_only]
        # Each environment's target columns (completionField, or chosenField and rejectedField), by its index.
        self.targets = {env.index: target_fields(run.environments[env.index], self.algorithm) for env in environments}
        for env in self.trained:
            check_target_columns(env, self.targets[env.index], self.algorithm)

    def learn(self, step: int, batch: Any = None) -> tuple[dict[str, dict[str, float]], dict[str, list[Any]]]:
        """The step's updates (no episodes: `batch` is unused, and there are no shares)."""
        return self.step(step), {}

    def save(self, folder: Path) -> None:
        pass  # nothing beyond the actors' weights and optimizers, which the training checkpoint holds

    def load(self, folder: Path) -> None:
        pass

    # ------------------------------------------------------------------ one training step
    def step(self, step: int) -> dict[str, dict[str, float]]:
        per_actor: dict[str, list[OfflineRows]] = defaultdict(list)
        for env, n in zip(self.environments, self.prompts_per_env):
            if n > 0 and env.actor in self.actors and self.actors[env.actor].trainable:
                rows = env.sampler.take(n)
                per_actor[env.actor].append(tokenise_rows(env, rows, self.actors[env.actor].loaded.tokenizer, self.targets[env.index]))
        out = {}
        for name, parts in per_actor.items():
            actor = self.actors[name]
            training = actor.section.training
            lr = lr_at(step, training.learning_rate, training.scheduler.type, training.scheduler.warmup_steps, self.run.trainer.steps)
            assert actor.backend is not None
            if self.residency is not None:
                self.residency.for_update(name, also=[f"{name}/reference"] if actor.reference is not None else [])
            actor.backend.set_lr(lr)
            out[name] = {**self.update(actor, parts), "lr": lr}
        return out

    def update(self, actor: "Actor", parts: list[OfflineRows]) -> dict[str, float]:
        backend, training = actor.backend, actor.section.training
        assert backend is not None
        pad = int(actor.loaded.tokenizer.pad_token_id)  # type: ignore[attr-defined]
        if self.algorithm == "sft":
            data: SequenceBatch | PairBatch = concat_batches([p.batches[0] for p in parts], pad).to(actor.device)
            rows, total = data.input_ids.shape[0], float(data.label_mask.sum())
        else:
            width = max(b.input_ids.shape[1] for p in parts for b in p.batches)
            data = PairBatch(
                concat_batches([pad_width(p.batches[0], width, pad) for p in parts], pad).to(actor.device),
                concat_batches([pad_width(p.batches[1], width, pad) for p in parts], pad).to(actor.device),
            )
            rows, total = data.pairs, float(data.pairs)
        # A DPO row is a pair: chosen and rejected in one forward, twice the tokens.
        length = data.input_ids.shape[1] if isinstance(data, SequenceBatch) else 2 * data.chosen.input_ids.shape[1]
        micro_size, chosen = resolve_for_training(self.run.trainer.micro_batch_size, backend.module, training, rows, length, self.ctx)
        self.micro_batch_log.report(actor.name, chosen)
        ranges = list(slices(rows, self.ctx, micro_size))
        references = [self.reference_logps(actor, data.rows(lo, hi)) for lo, hi in ranges] if isinstance(data, PairBatch) else []
        backend.module.train()
        sums: dict[str, float] = defaultdict(float)
        iterations = training.iterations_per_batch
        for _ in range(iterations):
            backend.zero_grad()
            loss_sum, stat_num, stat_den = 0.0, defaultdict(float), defaultdict(float)
            for k, (lo, hi) in enumerate(ranges):
                empty = hi <= lo
                lo_, hi_ = (lo, hi) if not empty else (0, 1)  # padding micro-batch: one row, weight 0
                with backend.accumulate(last=k == len(ranges) - 1):
                    with backend.forward_context():
                        if isinstance(data, PairBatch):
                            loss, stats, weight = self.dpo_micro(backend.module, data.rows(lo_, hi_), references[k], total)
                        else:
                            loss, stats, weight = self.sft_micro(backend.module, data.rows(lo_, hi_), total)
                    backend.backward(loss * (0.0 if empty else backend.loss_scale()))
                if not empty:
                    loss_sum += float(loss.detach())
                    for key, value in stats.items():
                        stat_num[key] += value * weight
                        stat_den[key] += weight
            grad_norm = backend.clip(training.max_grad_norm)
            backend.step()
            keys = sorted(stat_num)
            totals = self.ctx.sum_floats([loss_sum] + [stat_num[k] for k in keys] + [stat_den[k] for k in keys])
            sums["loss"] += totals[0]
            for i, key in enumerate(keys):
                sums[key] += totals[1 + i] / max(totals[1 + len(keys) + i], 1e-12)
            sums["grad_norm"] += grad_norm
        return {**{key: value / iterations for key, value in sums.items()}, **metrics_of(chosen)}

    def sft_micro(self, model: Any, batch: SequenceBatch, total_tokens: float) -> tuple[torch.Tensor, dict[str, float], float]:
        loss, stats = sft_loss(forward_logits(model, batch), batch.labels, batch.label_mask, normaliser=max(total_tokens, 1.0))
        tokens = stats.pop("tokens")
        stats["completion_len"] = tokens / max(batch.input_ids.shape[0], 1)
        return loss, stats, tokens

    def dpo_micro(self, model: Any, pairs: PairBatch, reference: tuple[torch.Tensor, torch.Tensor], total_pairs: float) -> tuple[torch.Tensor, dict[str, float], float]:
        joined = pairs.joined()
        logps = sequence_logps(token_logps(forward_logits(model, joined), joined.labels), joined.label_mask)
        chosen, rejected = logps.chunk(2)
        tokens = joined.label_mask.sum(dim=1).float()
        algorithm = self.run.algorithm
        loss, stats = dpo_loss(
            chosen, rejected, reference[0], reference[1], algorithm.beta, algorithm.dpo_loss, algorithm.label_smoothing,
            *tokens.chunk(2), normaliser=total_pairs,
        )
        return loss, stats, float(pairs.pairs)

    def reference_logps(self, actor: "Actor", pairs: PairBatch) -> tuple[torch.Tensor, torch.Tensor]:
        """Sequence log-probs of the frozen reference: the copy made at start, or for LoRA the base (adapters off)."""
        if pairs.pairs == 0:
            pairs = pairs.rows(0, 1)
        joined = pairs.joined()
        model = actor.reference if actor.reference is not None else actor.loaded.model
        with torch.no_grad(), reference_context(actor):
            logps = sequence_logps(token_logps(forward_logits(model, joined), joined.labels), joined.label_mask)
        chosen, rejected = logps.chunk(2)
        return chosen.detach(), rejected.detach()

    # ------------------------------------------------------------------ held-out rows
    def evaluate(self, batch_rows: int = 32) -> dict[str, dict[str, float]]:
        """`eval/loss` (and `eval/sft/token_accuracy` or `eval/dpo/margin`, `eval/dpo/accuracy`) over every
        held-out row, per actor; no gradients, nothing drawn from an RNG."""
        sums: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
        for env in self.trained:
            actor = self.actors.get(env.actor)
            if actor is None or not actor.trainable or not env.dataset.eval_indices:
                continue
            model, pad = actor.loaded.model, int(actor.loaded.tokenizer.pad_token_id)  # type: ignore[attr-defined]
            was_training = model.training
            model.eval()
            indices = env.dataset.eval_indices
            for lo in range(0, len(indices), batch_rows):
                part = tokenise_rows(env, indices[lo : lo + batch_rows], actor.loaded.tokenizer, self.targets[env.index])
                with torch.no_grad():
                    if self.algorithm == "sft":
                        batch = part.batches[0].to(actor.device)
                        loss, stats, weight = self.sft_micro(model, batch, float(batch.label_mask.sum()))
                    else:
                        width = max(b.input_ids.shape[1] for b in part.batches)
                        pairs = PairBatch(pad_width(part.batches[0], width, pad).to(actor.device), pad_width(part.batches[1], width, pad).to(actor.device))
                        loss, stats, weight = self.dpo_micro(model, pairs, self.reference_logps(actor, pairs), float(pairs.pairs))
                acc = sums[actor.name]
                acc["weight"] += weight
                acc["loss"] += float(loss) * weight
                for key, value in stats.items():
                    acc[key] += value * weight
            model.train(was_training)
        return {name: {f"eval/{k}": v / acc["weight"] for k, v in acc.items() if k not in ("weight", "completion_len")} for name, acc in sums.items()}


def reference_context(actor: "Actor") -> Any:
    """The base model for a LoRA actor without a reference copy; nothing otherwise."""
    if actor.reference is None and has_lora(actor.loaded.model):
        return adapters_disabled(actor.loaded.model)
    return contextlib.nullcontext()



register_learner(*OFFLINE_FAMILY)(OfflineLearner.from_setup)
