"""`trainer.advisories` in the RunSpec: the defaults are the advisories' documented constants (so a run that
does not set them behaves as before), a threshold set in the spec changes whether a detector fires, and bad
values are refused by field path before anything runs."""

from __future__ import annotations

import copy
import dataclasses

import pytest
from advisory_streams import healthy_metrics, play
from runtime_helpers import small_spec

from troupe.advisories import Advisor, AdvisorySettings
from troupe.spec import SpecError, load_spec, runspec_schema
from troupe.spec.runspec_types import RunSpec


def test_the_contracts_defaults_equal_the_documented_constants():
    filled = load_spec({**small_spec(), "trainer": {**small_spec()["trainer"], "advisories": {}}})
    assert AdvisorySettings.for_run(RunSpec.from_dict(filled)) == AdvisorySettings()
    assert AdvisorySettings.for_run(RunSpec.from_dict(small_spec())) == AdvisorySettings()  # absent: the same


def test_every_setting_of_the_contract_maps_onto_one_field_and_back():
    section = runspec_schema()["properties"]["trainer"]["properties"]["advisories"]
    names = set()
    for key, sub in section["properties"].items():
        if sub.get("type") == "object":
            names |= {f"{key}.{f}" for f in sub["properties"]}
        else:
            names.add(key)
    snake = lambda n: "".join("_" + c.lower() if c.isupper() else c for c in n).replace(".", "_")  # noqa: E731
    assert {snake(n) for n in names} == {f.name for f in dataclasses.fields(AdvisorySettings)}


def spec_with(advisories: dict) -> dict:
    spec = small_spec()
    spec["trainer"]["advisories"] = advisories
    return load_spec(spec)


def test_a_threshold_set_in_the_spec_decides_whether_kl_blowup_fires():
    kl_08 = lambda s: {**healthy_metrics(s), "kl": 0.8}  # noqa: E731
    assert [a["kind"] for a in play(12, kl_08, advisor=Advisor.for_run(RunSpec.from_dict(spec_with({}))))] == []  # default max 1.0
    fired = play(12, kl_08, advisor=Advisor.for_run(RunSpec.from_dict(spec_with({"klBlowup": {"max": 0.5}}))))
    assert [a["kind"] for a in fired] == ["kl_blowup"] and fired[0]["evidence"]["values"]["kl_max_setting"] == 0.5


def test_the_window_and_enabled_settings():
    kl_2 = lambda s: {**healthy_metrics(s), "kl": 2.0}  # noqa: E731
    assert play(12, kl_2, advisor=Advisor.for_run(RunSpec.from_dict(spec_with({}))))[0]["step"] == 5
    assert play(12, kl_2, advisor=Advisor.for_run(RunSpec.from_dict(spec_with({"window": 3}))))[0]["step"] == 3
    assert play(12, kl_2, advisor=Advisor.for_run(RunSpec.from_dict(spec_with({"enabled": False})))) == []


def test_staleness_k_from_the_section_wins_over_the_async_setting():
    spec = spec_with({"staleness": {"max": 1}})
    spec = {**spec, "algorithm": {**spec["algorithm"], "async": {"maxStaleness": 4}}}
    assert AdvisorySettings.for_run(RunSpec.from_dict(spec)).staleness_max == 1
    del spec["trainer"]["advisories"]["staleness"]["max"]
    assert AdvisorySettings.for_run(RunSpec.from_dict(spec)).staleness_max == 4


@pytest.mark.parametrize(
    "advisories, path",
    [
        ({"collapse": {"promptShare": 1.5}}, "trainer.advisories.collapse.promptShare"),
        ({"window": 1}, "trainer.advisories.window"),
        ({"klBlowup": {"max": 0}}, "trainer.advisories.klBlowup.max"),
        ({"rewardHacking": {"evals": 2.5}}, "trainer.advisories.rewardHacking.evals"),
        ({"collapse": {"minDistinct": 0.2}}, "trainer.advisories.collapse"),
        ({"nope": {}}, "trainer.advisories"),
    ],
)
def test_bad_values_are_refused_by_field(advisories: dict, path: str):
    spec = copy.deepcopy(small_spec())
    spec["trainer"]["advisories"] = advisories
    with pytest.raises(SpecError) as err:
        load_spec(spec)
    assert path in str(err.value), str(err.value)
