"""Weights & Biases: metrics with the run's step, the RunSpec as the config, transcripts as a `wandb.Table`.

Written against wandb's documented API (`wandb.init(project=, entity=, name=, mode=, dir=, config=)`,
`Run.log(dict, step=)`, `wandb.Table(columns=, data=)`, `Run.finish(exit_code=)`). `offline` writes the run's
files under the run folder for a later `wandb sync`; `online` streams to W&B with the WANDB_API_KEY of the
runtime's environment."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping, Sequence

from .base import TRANSCRIPT_COLUMNS, Tracker

_EXIT_CODE = {"succeeded": 0, "stopped": 0, "cancelled": 1, "failed": 1}


class WandbTracker(Tracker):
    kind = "wandb"

    def __init__(self, config: Mapping[str, Any], spec: Mapping[str, Any], work_dir: Path):
        super().__init__(config, spec, work_dir)
        import wandb  # an optional extra; refused by rules.py where absent

        self.wandb = wandb
        self.folder.mkdir(parents=True, exist_ok=True)
        self.run = wandb.init(
            project=self.config["project"],
            entity=self.config.get("entity"),
            name=self.config.get("name") or spec["name"],
            mode=self.config["mode"],
            dir=str(self.folder),
            config=self.config_of(spec),
        )
        self._last_step = -1

    def metrics(self, step: int, values: Mapping[str, float]) -> None:
        # W&B refuses a step lower than one already logged; the runtime's steps only grow, but a resumed run
        # replays nothing, so this only guards against a tracker reopened on the same W&B run.
        if step < self._last_step:
            return
        self._last_step = step
        self.run.log(dict(values), step=step)

    def transcripts(self, rows: Sequence[Mapping[str, Any]]) -> None:
        table = self.wandb.Table(columns=list(TRANSCRIPT_COLUMNS), data=[[r[c] for c in TRANSCRIPT_COLUMNS] for r in rows])
        self.run.log({"transcripts": table}, step=max(self._last_step, rows[-1]["step"] if rows else 0))

    def close(self, state: str) -> None:
        self.run.finish(exit_code=_EXIT_CODE.get(state, 1))
