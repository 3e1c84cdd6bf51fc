"""Hugging Face datasets by id, read offline from the host's caches (hf_datasets.py), and refused by field
when they are not there. The network is cut for every test here: a load that reached for the hub would fail."""

import socket

import pytest
from hf_cache_helpers import put_in_datasets_cache, put_in_hub_cache
from runtime_helpers import check_protocol, small_spec

from troupe import EventWriter, run_spec
from troupe.envs.data import load_dataset
from troupe.envs.hf_datasets import cache_dirs
from troupe.spec import SpecError

LETTERS = {
    "train": [{"prompt": f"say {c}:", "letter": c} for c in "abcdefgh" * 4],
    "test": [{"prompt": f"say {c}:", "letter": c} for c in "hgfedcba"],
}


@pytest.fixture
def hf_home(tmp_path, monkeypatch):
    """An empty HF_HOME of the test's own, and no network."""
    home = tmp_path / "hf"
    monkeypatch.setenv("HF_HOME", str(home))
    for name in ("HF_DATASETS_CACHE", "HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        monkeypatch.delenv(name, raising=False)

    def no_network(*args, **kwargs):
        raise OSError("this test must not use the network")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    return home


def _spec(source, eval_fraction=0.0):
    return {"name": "letters", "source": {"kind": "huggingface", **source}, "evalFraction": eval_fraction}


def test_cache_dirs_follow_the_libraries_rules(tmp_path):
    assert cache_dirs({"HF_HOME": str(tmp_path)}) == cache_dirs({"HF_DATASETS_CACHE": str(tmp_path / "datasets"), "HF_HUB_CACHE": str(tmp_path / "hub")})
    assert cache_dirs({"XDG_CACHE_HOME": str(tmp_path)}).hub == tmp_path / "huggingface" / "hub"


def test_a_dataset_in_the_datasets_cache_loads_by_id_offline(hf_home, tmp_path):
    put_in_datasets_cache(hf_home / "datasets", "troupe-test/letters", "main", LETTERS)
    test = load_dataset(_spec({"id": "troupe-test/letters", "config": "main", "split": "test"}), 0, 0, tmp_path)
    assert test.rows == LETTERS["test"]  # every row, in the split's order (datasetRow indices are stable)
    train = load_dataset(_spec({"id": "troupe-test/letters", "split": "train"}, 0.25), 0, 0, tmp_path)  # config absent: the cached one
    assert train.rows == LETTERS["train"] and len(train.eval_indices) == 8


def test_a_dataset_in_the_hub_cache_loads_by_id_offline(hf_home, tmp_path):
    put_in_hub_cache(hf_home / "hub", "troupe-test/letters-hub", LETTERS)
    assert load_dataset(_spec({"id": "troupe-test/letters-hub", "split": "test"}), 0, 0, tmp_path).rows == LETTERS["test"]


def test_a_dataset_in_neither_cache_is_refused_with_where_it_looked_and_how_to_fill_it(hf_home, tmp_path):
    with pytest.raises(SpecError) as e:
        load_dataset(_spec({"id": "openai/gsm8k", "config": "main", "split": "test"}), 2, 0, tmp_path)
    assert e.value.field == "datasets.2.source.id"
    message = str(e.value)
    assert str(hf_home / "datasets") in message and str(hf_home / "hub") in message
    assert "load_dataset('openai/gsm8k', 'main', split='test')" in message and "hf download --repo-type dataset openai/gsm8k" in message


def test_an_unknown_split_or_config_is_refused_on_its_field(hf_home, tmp_path):
    put_in_datasets_cache(hf_home / "datasets", "troupe-test/letters", "main", LETTERS)
    with pytest.raises(SpecError) as e:
        load_dataset(_spec({"id": "troupe-test/letters", "config": "main", "split": "validation"}), 0, 0, tmp_path)
    assert e.value.field == "datasets.0.source.split" and "validation" in str(e.value)
    with pytest.raises(SpecError) as e:
        load_dataset(_spec({"id": "troupe-test/letters", "config": "socratic", "split": "test"}), 0, 0, tmp_path)
    assert e.value.field == "datasets.0.source.config" and "socratic" in str(e.value)


def test_a_run_trains_on_a_hugging_face_dataset_by_id(hf_home, tmp_path, events_validator):
    put_in_datasets_cache(hf_home / "datasets", "troupe-test/letters", "main", LETTERS)
    spec = small_spec(steps=2)
    spec["datasets"] = [_spec({"id": "troupe-test/letters", "config": "main", "split": "train"})]
    spec["environments"][0]["dataset"] = "letters"
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path / "run")
    assert result.state == "succeeded", result.message
    check_protocol(result.events, events_validator)
    prompts = {m["content"] for e in result.events if e["type"] == "episode" for m in e["messages"] if m["role"] == "user"}
    assert prompts and prompts <= {r["prompt"] for r in LETTERS["train"]}
    assert len(result.metrics("reward/mean")) == 2


def test_a_run_on_a_missing_dataset_fails_before_training_with_the_field(hf_home, tmp_path):
    spec = small_spec(steps=2)
    spec["datasets"] = [_spec({"id": "troupe-test/absent", "split": "train"})]
    spec["environments"][0]["dataset"] = "letters"
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path / "run")
    assert result.exit_code == 2
    error = next(e for e in result.events if e["type"] == "error")
    assert error["field"] == "datasets.0.source.id" and "hf download" in error["message"]
    assert not result.metrics("reward/mean")
