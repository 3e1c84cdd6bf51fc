"""TensorBoard: scalars per metric, the RunSpec as text, the step's transcripts as a markdown table
(torch.utils.tensorboard, which needs the `tensorboard` package)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Mapping, Sequence

from .base import Tracker

_TRANSCRIPTS_PER_STEP = 32


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", "<br>")


class TensorBoardTracker(Tracker):
    kind = "tensorboard"

    def __init__(self, config: Mapping[str, Any], spec: Mapping[str, Any], work_dir: Path):
        super().__init__(config, spec, work_dir)
        from torch.utils.tensorboard import SummaryWriter  # needs tensorboard; refused by rules.py where absent

        self.writer = SummaryWriter(log_dir=str(self.folder))
        self.writer.add_text("config", "```json\n" + json.dumps(self.config_of(spec), indent=2) + "\n```", 0)
        self._written_rows = 0

    def metrics(self, step: int, values: Mapping[str, float]) -> None:
        for name, value in values.items():
            self.writer.add_scalar(name, value, step)

    def transcripts(self, rows: Sequence[Mapping[str, Any]]) -> None:
        new = rows[self._written_rows :]
        self._written_rows = len(rows)
        for step in sorted({r["step"] for r in new}):
            shown = [r for r in new if r["step"] == step][:_TRANSCRIPTS_PER_STEP]
            table = ["| group | sample | prompt | conversation | reward | advantage |", "|---|---|---|---|---|---|"]
            table += [
                f"| {r['group']} | {r['sample']} | {_cell(r['prompt'])} | {_cell(r['conversation'])} | {r['reward']:.4g} | "
                f"{'' if r['advantage'] is None else format(r['advantage'], '.4g')} |"
                for r in shown
            ]
            self.writer.add_text("transcripts", "\n".join(table), step)
        self.writer.flush()

    def close(self, state: str) -> None:
        self.writer.add_text("status", state, 0)
        self.writer.close()
