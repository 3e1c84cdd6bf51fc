"""`python -m troupe run|validate spec.yaml`: the same RunSpec as JSON, with YAML errors at line and column and
field issues placed on their line in the file (MRLM users live in YAML configs; the web and REST take YAML)."""

import json
import subprocess
import sys

import pytest
import yaml
from runtime_helpers import small_spec

from troupe.spec import SpecError, load_spec
from troupe.spec.text_format import field_position, parse_spec_text


def _yaml_path(tmp_path, text: str):
    path = tmp_path / "spec.yaml"
    path.write_text(text)
    return path


def test_a_yaml_spec_loads_to_the_same_runspec_as_its_json(tmp_path):
    spec = small_spec()
    as_json = tmp_path / "spec.json"
    as_json.write_text(json.dumps(spec))
    as_yaml = _yaml_path(tmp_path, yaml.safe_dump(spec, sort_keys=False))
    assert load_spec(as_yaml) == load_spec(as_json)


def test_yaml_reads_scalars_as_yaml_1_2_does_like_the_web():
    """PyYAML's default (YAML 1.1) would turn `no`/`on` into booleans and `1_000` into 1000; the web's parser
    (YAML 1.2 core schema) keeps them strings. Both sides must read one file the same way."""
    doc = parse_spec_text("a: no\nb: on\nc: 1_000\nd: true\ne: 3e-4\nf: 0x10\ng: .inf\nh: 012\n", "x.yaml")
    assert doc == {"a": "no", "b": "on", "c": "1_000", "d": True, "e": 3e-4, "f": 16, "g": float("inf"), "h": 12}


def test_a_yaml_syntax_error_names_line_and_column(tmp_path):
    path = _yaml_path(tmp_path, "specVersion: 1\nname: demo\nactors:\n  - name: a\n   model: x\n")
    with pytest.raises(SpecError) as info:
        load_spec(path)
    assert info.value.field == "(root)"
    assert "not valid YAML" in str(info.value) and "line 5, column 4" in str(info.value), str(info.value)


def test_several_yaml_documents_are_refused(tmp_path):
    with pytest.raises(SpecError, match="2 YAML documents"):
        load_spec(_yaml_path(tmp_path, "a: 1\n---\nb: 2\n"))


def test_a_field_issue_in_a_yaml_file_says_its_line_and_column(tmp_path):
    spec = small_spec()
    spec["trainer"]["steps"] = -1
    text = yaml.safe_dump(spec, sort_keys=False)
    line = next(i for i, row in enumerate(text.splitlines(), 1) if row.strip().startswith("steps:"))
    with pytest.raises(SpecError) as info:
        load_spec(_yaml_path(tmp_path, text))
    issue = info.value.issues[0]
    assert issue.path == "trainer.steps"
    assert f"(line {line}, column " in issue.message, issue.message


def test_field_position_finds_nested_and_list_fields_in_json_too():
    text = '{\n  "actors": [\n    {"name": "a"},\n    {"name": "b", "model": "x"}\n  ]\n}'
    assert field_position(text, "actors.1.model") == (4, 28)
    assert field_position(text, "actors.1.missing") == (4, 5)  # nearest existing parent


def test_cli_validate_and_run_take_yaml(tmp_path):
    path = _yaml_path(tmp_path, yaml.safe_dump(small_spec(steps=1), sort_keys=False))
    out = subprocess.run([sys.executable, "-m", "troupe", "validate", str(path)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["trainer"]["steps"] == 1
    events = tmp_path / "events.jsonl"
    run = subprocess.run([sys.executable, "-m", "troupe", "run", str(path), "--events", str(events)], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    kinds = [json.loads(line)["type"] for line in events.read_text().splitlines()]
    assert "metric" in kinds and kinds[-1] == "status"


def test_cli_validate_reports_a_yaml_error_at_line_and_column(tmp_path):
    path = _yaml_path(tmp_path, "specVersion: 1\nname: [unclosed\n")
    out = subprocess.run([sys.executable, "-m", "troupe", "validate", str(path)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 2
    assert "not valid YAML" in out.stderr and "line 3, column 1" in out.stderr, out.stderr
