"""The template cases the web preview is tested against (packages/contracts/fixtures/template-cases.json)
render, with the runtime's own jinja2 set-up, to exactly the text the fixture holds; so a preview that
passes apps/web/test/designer.templatePreview.test.ts prints what the run will print."""

from __future__ import annotations

import json
from pathlib import Path

import jinja2
import pytest

from troupe.envs.environments import _JINJA

CASES = json.loads((Path(__file__).resolve().parents[2] / "packages/contracts/fixtures/template-cases.json").read_text())


@pytest.mark.parametrize("case", CASES["render"], ids=lambda c: c["name"])
def test_runtime_renders_the_fixture_text(case: dict) -> None:
    assert _JINJA.from_string(case["template"]).render(**CASES["row"]) == case["text"]


@pytest.mark.parametrize("case", CASES["fail"], ids=lambda c: c["name"])
def test_runtime_refuses_with_the_fixture_message(case: dict) -> None:
    with pytest.raises((jinja2.TemplateError, TypeError)) as e:
        _JINJA.from_string(case["template"]).render(**CASES["row"])
    assert str(e.value) == case["message"]
