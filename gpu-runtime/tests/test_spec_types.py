"""The typed RunSpec (spec/runspec_types.py) is generated from the JSON Schema by spec/gen_types.py: the committed file
must be what the generator writes now (drift), and a validated spec read into it must keep every value."""

import dataclasses
import json

import pytest
from runtime_helpers import FIXTURES

from troupe.spec import load_spec
from troupe.spec.gen_types import OUT, render, schema_text
from troupe.spec.runspec_types import ActorModelTiny, RunSpec, Trainer


def test_the_committed_types_are_the_schema_generated_now():
    assert OUT.read_text(encoding="utf-8") == render(json.loads(schema_text())), "stale: run python -m troupe.spec.gen_types"


def _same(typed, document, path="spec"):
    """Every attribute equals its field of the document (absent fields are None), all the way down."""
    for attr, name in type(typed).JSON_NAMES.items():
        value, raw = getattr(typed, attr), document.get(name)
        if dataclasses.is_dataclass(value):
            _same(value, raw, f"{path}.{name}")
        elif isinstance(value, tuple) and value and dataclasses.is_dataclass(value[0]):
            assert len(value) == len(raw), f"{path}.{name}"
            for i, (v, r) in enumerate(zip(value, raw)):
                _same(v, r, f"{path}.{name}.{i}")
        elif isinstance(value, tuple):
            assert list(value) == raw, f"{path}.{name}"
        else:
            assert _plain(value) == raw, (f"{path}.{name}", value, raw)


def _plain(value):
    """Tuples (the types' arrays) as lists, inside mappings too: what the JSON document holds."""
    if isinstance(value, tuple):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


@pytest.mark.parametrize("fixture", ["demo.input.json", "template.debate.json", "template.majority_vote.json"])
def test_a_validated_spec_reads_into_the_types_without_losing_a_value(fixture):
    document = load_spec(json.loads((FIXTURES / fixture).read_text()))
    typed = RunSpec.from_dict(document)
    _same(typed, document)


def test_the_types_are_frozen_and_unions_pick_their_class():
    typed = RunSpec.from_dict(load_spec(json.loads((FIXTURES / "demo.input.json").read_text())))
    assert isinstance(typed.trainer, Trainer) and isinstance(typed.actors[0].model, ActorModelTiny)
    with pytest.raises(dataclasses.FrozenInstanceError):
        typed.trainer.steps = 3  # type: ignore[misc]


def test_union_variants_sharing_their_constant_are_told_apart_by_their_own_field():
    """Both MCP server forms say `kind: "mcp"`; the generator once named both classes alike, so a command server
    was read as the url class (KeyError 'url'). Each now reads into its own class."""
    from troupe.spec.runspec_types import EnvironmentTools, EnvironmentToolsMcpMcpCommand, EnvironmentToolsMcpMcpUrl

    tools = EnvironmentTools.from_dict({"mcp": [{"kind": "mcp", "command": ["srv", "--stdio"]}, {"kind": "mcp", "url": "http://h:1/mcp", "timeoutSeconds": 5}]})
    command, url = tools.mcp
    assert isinstance(command, EnvironmentToolsMcpMcpCommand) and command.command == ("srv", "--stdio") and command.timeout_seconds == 30
    assert isinstance(url, EnvironmentToolsMcpMcpUrl) and url.url == "http://h:1/mcp" and url.timeout_seconds == 5


@pytest.mark.parametrize("fixture", ["demo.input.json", "template.debate.json", "template.majority_vote.json"])
def test_to_dict_gives_the_validated_document_back(fixture):
    """Parts that still read a dict get one from the typed section, equal to the validated document's."""
    from troupe.spec.runspec_types import to_dict

    document = load_spec(json.loads((FIXTURES / fixture).read_text()))
    typed = RunSpec.from_dict(document)
    assert to_dict(typed) == document
    assert to_dict(typed.actors[0].training) == document["actors"][0]["training"]
