"""Actors that start from another run's checkpoint (`model: {source: "run", runId, step}`, run_source.py).

Runs live side by side under one runs root, as the runner lays them out (`<root>/<run id>/`): a finished run's
checkpoint is loaded by the next run in the pipeline, full weights as they are, a LoRA adapter merged into the
base it was trained on (its logits must equal the unmerged adapter's to 1e-5)."""

import json

import torch
from runtime_helpers import small_spec

from troupe import EventWriter, run_spec
from troupe.models.loading import build_tiny, load_actor_model


def _origin(root, name="origin", lora=False, steps=2):
    spec = small_spec(steps=steps, checkpointEvery=steps)
    if lora:
        base = root.parent / "tiny-base"
        if not base.exists():
            torch.manual_seed(3)
            loaded = build_tiny("tiny-char-2l")
            loaded.model.save_pretrained(base)
            loaded.tokenizer.save_pretrained(base)
        spec["actors"][0]["model"] = {"source": "local", "path": str(base)}
        spec["actors"][0]["training"]["lora"] = {"rank": 4, "alpha": 8}
        spec["actors"][0]["training"]["learningRate"] = 0.05  # so the adapter moves visibly in two steps
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=root / name)
    assert result.state == "succeeded", result.message
    return spec


def _from_run(run_id="origin", step=2, **extra):
    spec = small_spec(steps=1)
    spec["actors"][0]["model"] = {"source": "run", "runId": run_id, "step": step, **extra}
    return spec


def test_a_run_starts_from_another_runs_full_weights(tmp_path):
    from safetensors.torch import load_file

    root = tmp_path / "runs"
    _origin(root)
    spec = _from_run()
    loaded = load_actor_model(spec["actors"][0], 0, root / "next")
    saved = load_file(str(root / "origin" / "checkpoints" / "step-2" / "student" / "model.safetensors"))
    params = dict(loaded.model.named_parameters())
    assert saved and all(torch.equal(params[k], v) for k, v in saved.items() if k in params)
    assert loaded.description == "run origin step 2 (student), full weights"

    result = run_spec(spec, events=EventWriter(keep=True), work_dir=root / "next")
    assert result.state == "succeeded", result.message
    assert any("run origin step 2 (student), full weights" in e["message"] for e in result.events if e["type"] == "log")


def test_a_lora_adapter_is_merged_into_the_base_it_was_trained_on(tmp_path):
    from troupe.checkpointing import _load_adapter
    from troupe.models.lora import apply_lora

    root = tmp_path / "runs"
    origin = _origin(root, lora=True)
    merged = load_actor_model(_from_run()["actors"][0], 0, root / "next")
    assert "LoRA adapter merged" in merged.description
    assert not any("lora_" in n for n, _ in merged.model.named_parameters())

    part = root / "origin" / "checkpoints" / "step-2" / "student"
    actor = json.loads((part / "troupe_actor.json").read_text())  # the origin's actor spec, defaults filled
    assert actor["model"] == origin["actors"][0]["model"]
    unmerged = load_actor_model(actor, 0, root / "origin")
    base_logits_model = load_actor_model(actor, 0, root / "origin").model
    apply_lora(unmerged.model, actor["training"]["lora"], 0)
    _load_adapter(unmerged.model, part, torch.device("cpu"))
    ids = torch.tensor([merged.tokenizer.encode("say a: aaa")])
    with torch.no_grad():
        ours, theirs, base = (m.eval()(input_ids=ids).logits for m in (merged.model, unmerged.model, base_logits_model))
    torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-5)
    assert (ours - base).abs().max() > 1e-3  # the adapter moved the model: the comparison is not vacuous


def test_a_missing_run_step_or_actor_is_refused_by_field(tmp_path):
    root = tmp_path / "runs"
    _origin(root)

    def failure(spec):
        result = run_spec(spec, events=EventWriter(keep=True), work_dir=root / "next")
        assert result.state == "failed"
        return result.message

    assert failure(_from_run(run_id="nope")).startswith('actors.0.model.runId: no run "nope" on this host')
    assert failure(_from_run(step=7)) == 'actors.0.model.step: run "origin" has no checkpoint at step 7 (it has steps 2)'
    assert failure(_from_run(actor="teacher")).startswith('actors.0.model.actor: checkpoint step-2 of run "origin" holds no actor "teacher" (it holds student)')
