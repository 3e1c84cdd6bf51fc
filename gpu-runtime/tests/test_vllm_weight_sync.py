"""vLLM's native weight sync through the engine, against the stand-in (tests/vllm_standin.py; vLLM is on no
machine here): a push lands the trainer's weights exactly; the calls come in the documented order; calls out
of order, and update_info that does not match the model, are refused by the stand-in as vLLM refuses them."""

from __future__ import annotations

import pytest
import torch
import vllm_standin
from test_rollout_engines_standin import SAMPLING, tiny_folder

from troupe.engines.rollout import EnginePrompt, vllm_engine
from troupe.engines.rollout.sync import push
from troupe.engines.rollout.vllm_engine import VllmEngine, VllmSettings, chunks, ipc_update_info
from troupe.models.loading import load_actor_model

StateError = vllm_standin.StandinStateError


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tiny_folder(tmp_path_factory.mktemp("tiny-vllm-sync"))


def _engine(folder, level: int = 1):
    loaded = load_actor_model({"model": {"source": "local", "path": str(folder)}}, 0, folder)
    return VllmEngine(str(folder), loaded.tokenizer, VllmSettings(sleep_level=level), seed=3, dtype="float32", vllm=vllm_standin), loaded


def _changed(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """A different policy than the engine holds, so a push that did nothing would show."""
    g = torch.Generator().manual_seed(11)
    return {n: p.detach() + 0.01 * torch.randn(p.shape, generator=g) for n, p in model.named_parameters()}


@pytest.mark.parametrize("level", [1, 2])
def test_weights_equal_after_a_push(folder, level):
    engine, loaded = _engine(folder, level)
    llm = engine.llm
    new = _changed(loaded.model)
    assert any(not torch.equal(llm.model.params[n], t) for n, t in new.items())
    engine.sleep(level)
    del llm.calls[:]
    report = push(engine, iter(new.items()))
    assert report.tensors == len(new)
    for name, t in new.items():
        assert torch.equal(llm.model.params[name], t), name
    names = [c[0] for c in llm.calls]
    start, finish = names.index("start_weight_update"), names.index("finish_weight_update")
    assert names[0] == "wake_up" and start < names.index("update_weights") < finish < names.index("reset_prefix_cache")
    assert llm.calls[finish] == ("finish_weight_update", "1") and llm.weight_version == "1"
    engine.generate([EnginePrompt(loaded.tokenizer.encode("say a:", False))], SAMPLING)


def test_a_push_is_chunked_one_update_per_chunk(folder, monkeypatch):
    engine, loaded = _engine(folder)
    llm = engine.llm
    monkeypatch.setattr(vllm_engine, "PUSH_BUCKET_BYTES", 1)  # every parameter its own chunk
    new = _changed(loaded.model)
    del llm.calls[:]
    assert engine.push_weights(iter(new.items())) == len(new)
    updates = [c for c in llm.calls if c[0] == "update_weights"]
    assert len(updates) == len(new) and all(c[1] == 1 for c in updates)
    assert [c[0] for c in llm.calls].count("start_weight_update") == 1
    for name, t in new.items():
        assert torch.equal(llm.model.params[name], t), name


def test_chunks_cover_every_parameter_once_in_order():
    weights = [(f"w{i}", torch.zeros(i + 1)) for i in range(7)]
    got = list(chunks(iter(weights), 4 * 4))  # float32: 16 bytes per chunk at most before it closes
    assert [n for c in got for n, _ in c] == [n for n, _ in weights]
    assert len(got) > 1


def test_order_violations_raise(folder):
    engine, loaded = _engine(folder)
    llm = engine.llm
    one = [next(iter(_changed(loaded.model).items()))]
    request = {"update_info": ipc_update_info(one)}
    with pytest.raises(StateError, match="outside"):
        llm.update_weights(request=request)
    with pytest.raises(StateError, match="without start"):
        llm.finish_weight_update()
    with pytest.raises(StateError, match="twice"):
        llm.init_weight_transfer_engine(request={"init_info": {}})
    llm.start_weight_update()
    with pytest.raises(StateError, match="open"):
        llm.start_weight_update()
    with pytest.raises(StateError, match="open"):
        llm.generate([{"prompt_token_ids": [1, 2]}], vllm_standin.SamplingParams(max_tokens=2))
    with pytest.raises(StateError, match="open"):
        llm.sleep(level=1)
    llm.update_weights(request=request)
    llm.finish_weight_update()
    engine.sleep(1)
    with pytest.raises(StateError, match="sleep"):
        llm.start_weight_update()


def test_an_update_before_init_or_without_a_transfer_config_raises(folder):
    llm = vllm_standin.LLM(str(folder), dtype="float32", weight_transfer_config=vllm_standin.WeightTransferConfig(backend="ipc"))
    with pytest.raises(StateError, match="before init"):
        llm.start_weight_update()
    bare = vllm_standin.LLM(str(folder), dtype="float32")
    with pytest.raises(StateError, match="weight_transfer_config"):
        bare.init_weight_transfer_engine(request={"init_info": {}})


def test_update_info_that_does_not_match_the_model_is_refused(folder):
    engine, loaded = _engine(folder)
    llm = engine.llm
    name, tensor = next(iter(_changed(loaded.model).items()))
    llm.start_weight_update()
    info = ipc_update_info([(name, tensor)])
    with pytest.raises(ValueError, match="announced"):
        llm.update_weights(request={"update_info": {**info, "shapes": [[1, 2, 3]]}})
    with pytest.raises(ValueError, match="announced"):
        llm.update_weights(request={"update_info": {**info, "dtype_names": ["bfloat16"]}})
    with pytest.raises(ValueError, match="same size"):
        llm.update_weights(request={"update_info": {**info, "names": [name, name]}})
    with pytest.raises(ValueError, match="keys"):
        llm.update_weights(request={"update_info": {**info, "weights": [tensor]}})
    with pytest.raises(KeyError, match="no parameter"):
        llm.update_weights(request={"update_info": ipc_update_info([("model.nope.weight", tensor)])})
    with pytest.raises(ValueError, match="has shape"):
        llm.update_weights(request={"update_info": ipc_update_info([(name, tensor.flatten())])})
    with pytest.raises(ValueError, match="handle not found"):
        llm.update_weights(request={"update_info": {**info, "ipc_handles": [{"GPU-0000": h} for h in (d["cpu"] for d in info["ipc_handles"])]}})
