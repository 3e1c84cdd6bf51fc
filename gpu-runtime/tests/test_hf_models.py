"""Any Hugging Face causal LM folder: its own tokenizer, chat template and generation config.

No weights exist offline, so the model here is a 1-layer Llama with a byte-level BPE tokenizer
(no merges) and a ChatML template, saved the way a Hub checkpoint is.
"""

import json
from pathlib import Path

import pytest
from runtime_helpers import check_protocol, small_spec

from troupe import EventWriter, run_spec
from troupe.models.tokenizer import HFTokenizer

CHATML = (
    "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


@pytest.fixture(scope="module")
def hf_folder(tmp_path_factory) -> Path:
    import torch
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast

    folder = tmp_path_factory.mktemp("hf-model")
    vocab = {ch: i for i, ch in enumerate(sorted(pre_tokenizers.ByteLevel.alphabet()))}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[]))
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    fast = PreTrainedTokenizerFast(
        tokenizer_object=tok, eos_token="<|im_end|>", pad_token="<|endoftext|>",
        additional_special_tokens=["<|im_start|>"], chat_template=CHATML,
    )
    fast.save_pretrained(folder)
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(fast), hidden_size=32, intermediate_size=64, num_hidden_layers=1, num_attention_heads=2,
        num_key_value_heads=2, eos_token_id=fast.eos_token_id, pad_token_id=fast.pad_token_id,
    )
    LlamaForCausalLM(config).save_pretrained(folder)
    # Sampling defaults like many Hub checkpoints ship: the runtime must not apply them behind the spec's back.
    gen = json.loads((folder / "generation_config.json").read_text())
    gen.update(repetition_penalty=1.5, top_k=3, temperature=0.3, do_sample=True)
    (folder / "generation_config.json").write_text(json.dumps(gen))
    return folder


def test_local_hf_model_with_chat_template(hf_folder: Path, tmp_path: Path, events_validator):
    spec = small_spec(steps=2)
    spec["actors"][0]["model"] = {"source": "local", "path": str(hf_folder)}
    spec["environments"][0]["prompt"]["applyChatTemplate"] = True
    spec["environments"][0]["systemPrompts"] = {"student": "Answer with letters."}
    result = run_spec(spec, events=EventWriter(keep=True), work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    check_protocol(result.events, events_validator)
    # Same distribution in sampler and trainer: the checkpoint's repetition_penalty/top_k were not applied.
    assert max(result.metrics("logprob_gap")) < 1e-4
    episode = next(e for e in result.events if e["type"] == "episode")
    assert [m["role"] for m in episode["messages"]] == ["system", "user", "assistant"]
    assert episode["messages"][1]["content"].startswith("say ")  # the dataset's prompt, not the templated text
    assert any("local model" in e.get("message", "") for e in result.events if e["type"] == "log")


def test_chat_template_is_applied_to_what_the_model_reads(hf_folder: Path):
    from transformers import AutoTokenizer

    from troupe.envs.environments import SingleTurnEnvironment

    tok = HFTokenizer(AutoTokenizer.from_pretrained(str(hf_folder)))
    env_spec = {"name": "e", "prompt": {"field": "prompt", "applyChatTemplate": True}, "systemPrompts": {"a": "sys"}}
    env = SingleTurnEnvironment(0, env_spec, None, "a", [], None)  # type: ignore[arg-type]
    rendered = env.render({"prompt": "say k:"}, 0, tok)
    assert rendered.text == "<|im_start|>system\nsys<|im_end|>\n<|im_start|>user\nsay k:<|im_end|>\n<|im_start|>assistant\n"
    assert rendered.add_special_tokens is False and rendered.user == "say k:"
    # The environment reads its section once, when built (issue #26: typed sections); the same one without the template:
    env_spec["prompt"]["applyChatTemplate"] = False
    env = SingleTurnEnvironment(0, env_spec, None, "a", [], None)  # type: ignore[arg-type]
    assert env.render({"prompt": "say k:"}, 0, tok).text == "sys\nsay k:"
    assert tok.eos_token_ids == [tok.inner.convert_tokens_to_ids("<|im_end|>")]


def test_uncached_hub_model_fails_clearly_offline(tmp_path: Path, events_validator):
    spec = small_spec()
    spec["actors"][0]["model"] = {"source": "huggingface", "id": "troupe-tests/does-not-exist"}
    result = run_spec(spec, work_dir=tmp_path)
    assert result.exit_code == 1
    check_protocol(result.events, events_validator)
    error = next(e for e in result.events if e["type"] == "error")
    assert "troupe-tests/does-not-exist" in error["message"]
