"""`trainer.trackers`: a run mirrored to TensorBoard (real, read back with TensorBoard's own reader) and W&B
(against a stand-in of wandb's documented API: wandb cannot be installed on this host, its dependency
opentelemetry-semantic-conventions is not in the local index). Nothing else about the run changes."""

from __future__ import annotations

import importlib.machinery
import sys
import types
from typing import Any

import pytest
from runtime_helpers import small_spec

from troupe import run_spec
from troupe.spec import SpecError, validate_spec
from troupe.trackers import tracker_issues
from troupe.trackers.base import TRANSCRIPT_COLUMNS


def _metrics_by_key(events: list[dict[str, Any]]) -> dict[str, dict[int, float]]:
    out: dict[str, dict[int, float]] = {}
    for e in events:
        if e["type"] == "metric":
            for name, value in e["values"].items():
                key = f"{e['actor']}/{name}" if e.get("actor") else name
                out.setdefault(key, {})[e["step"]] = value
    return out


def test_tensorboard_event_files_hold_every_metric_of_the_run(tmp_path):

    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    spec = small_spec(steps=3)
    spec["trainer"]["trackers"] = [{"kind": "tensorboard", "dir": "tb"}]
    result = run_spec(spec, work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    expected = _metrics_by_key(result.events)
    assert expected, "the run reported no metrics"

    acc = EventAccumulator(str(tmp_path / "tb"), size_guidance={"scalars": 0, "tensors": 0})
    acc.Reload()
    tags = set(acc.Tags()["scalars"])
    assert tags == set(expected), f"missing in TensorBoard: {sorted(set(expected) - tags)}; extra: {sorted(tags - set(expected))}"
    for key, by_step in expected.items():
        got = {s.step: s.value for s in acc.Scalars(key)}
        assert got.keys() == by_step.keys()
        for step, value in by_step.items():
            assert got[step] == pytest.approx(value, rel=1e-6), (key, step)
    text_tags = set(acc.Tags()["tensors"])
    assert {"config/text_summary", "transcripts/text_summary"} <= text_tags, text_tags


class WandbStandIn(types.ModuleType):
    """Stand-in for the `wandb` package, enforcing the documented signatures the tracker relies on: init's
    keyword arguments and modes, log(dict, step=int) with steps that never go back, Table(columns=, data=) with
    rows as long as the columns, finish(exit_code=)."""

    def __init__(self) -> None:
        super().__init__("wandb")
        self.__spec__ = importlib.machinery.ModuleSpec("wandb", None)
        self.runs: list[Any] = []
        stand_in = self

        class Table:
            def __init__(self, columns: list[str], data: list[list[Any]]):
                assert all(len(row) == len(columns) for row in data), "a Table row has another length than its columns"
                self.columns, self.data = columns, data

        class Run:
            def __init__(self, **kwargs: Any):
                allowed = {"project", "entity", "name", "mode", "dir", "config"}
                assert set(kwargs) <= allowed, f"wandb.init got {set(kwargs) - allowed}"
                assert kwargs["mode"] in ("online", "offline", "disabled")
                self.kwargs, self.history, self.finished = kwargs, [], None

            def log(self, data: dict[str, Any], step: int | None = None, commit: bool | None = None) -> None:
                assert isinstance(data, dict) and isinstance(step, int)
                assert not self.history or step >= self.history[-1][0], "W&B drops a step lower than one already logged"
                self.history.append((step, data))

            def finish(self, exit_code: int | None = None) -> None:
                assert self.finished is None, "finish called twice"
                self.finished = exit_code

        def init(**kwargs: Any) -> Run:
            run = Run(**kwargs)
            stand_in.runs.append(run)
            return run

        self.Table, self.init = Table, init


def test_wandb_gets_every_metric_the_config_and_transcripts_against_a_stand_in(tmp_path, monkeypatch):
    stand_in = WandbStandIn()
    monkeypatch.setitem(sys.modules, "wandb", stand_in)
    spec = small_spec(steps=3)
    spec["trainer"]["episodesPerStep"] = 2
    spec["trainer"]["trackers"] = [{"kind": "wandb", "project": "troupe-tests", "mode": "offline"}]
    result = run_spec(spec, work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    (run,) = stand_in.runs
    assert run.kwargs["project"] == "troupe-tests" and run.kwargs["name"] == spec["name"]
    assert run.kwargs["dir"] == str(tmp_path / "wandb") and (tmp_path / "wandb").is_dir()
    assert run.kwargs["config"]["trainer"]["steps"] == 3  # the whole RunSpec, defaults filled
    assert run.finished == 0

    logged: dict[str, dict[int, float]] = {}
    tables = []
    for step, data in run.history:
        for key, value in data.items():
            if key == "transcripts":
                tables.append((step, value))
            else:
                logged.setdefault(key, {})[step] = value
    assert logged == _metrics_by_key(result.events)
    episodes = [e for e in result.events if e["type"] == "episode"]
    assert episodes and tables
    last = tables[-1][1]
    assert last.columns == list(TRANSCRIPT_COLUMNS) and len(last.data) == len(episodes)
    assert [row[0] for row in last.data] == [e["step"] for e in episodes]
    assert [row[6] for row in last.data] == [e["reward"] for e in episodes]


def test_a_tracker_that_raises_is_dropped_with_a_warning_and_the_run_goes_on(tmp_path, monkeypatch):
    stand_in = WandbStandIn()

    def broken_log(self: Any, data: dict[str, Any], step: int | None = None) -> None:
        raise ConnectionError("W&B is unreachable")

    monkeypatch.setitem(sys.modules, "wandb", stand_in)
    spec = small_spec(steps=2)
    spec["trainer"]["trackers"] = [{"kind": "wandb", "project": "p"}]
    real_init = stand_in.init

    def init(**kwargs: Any) -> Any:
        run = real_init(**kwargs)
        run.log = types.MethodType(broken_log, run)
        return run

    stand_in.init = init
    result = run_spec(spec, work_dir=tmp_path)
    assert result.state == "succeeded"
    warnings = [e["message"] for e in result.events if e["type"] == "log" and e["level"] == "warning"]
    assert sum("tracker wandb stopped mirroring this run: ConnectionError" in w for w in warnings) == 1, warnings


def test_tracker_folders_stay_inside_the_run_folder():
    for bad in ("/etc", "../up", "a/../../b", ".."):
        doc = small_spec()
        doc["trainer"]["trackers"] = [{"kind": "tensorboard", "dir": bad}]
        with pytest.raises(SpecError) as info:
            validate_spec(doc)
        assert info.value.field == "trainer.trackers.0.dir", (bad, info.value.issues)
    doc = small_spec()
    doc["trainer"]["trackers"] = [{"kind": "tensorboard", "dir": "logs/tb.v1"}]
    assert validate_spec(doc)["trainer"]["trackers"][0]["dir"] == "logs/tb.v1"


def test_a_tracker_whose_package_is_absent_is_refused_by_field(monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a, **k: None if name == "wandb" else real(name, *a, **k))
    doc = small_spec()
    doc["trainer"]["trackers"] = [{"kind": "tensorboard"}, {"kind": "wandb", "project": "p"}]
    issues = tracker_issues(validate_spec(doc))
    assert [i.path for i in issues] == ["trainer.trackers.1.kind"]
    assert "pip install wandb" in issues[0].message
