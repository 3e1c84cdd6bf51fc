from pathlib import Path

import pytest
import torch
from runtime_helpers import small_spec

from troupe import run_spec
from troupe.models.loading import TINY_PRESETS, build_tiny, load_actor_model, save_checkpoint
from troupe.models.tokenizer import CHAR_TOKENIZER_FILE, CharTokenizer, load_tokenizer

TEXT = "say k: Hello, World!  ~{tabs and\nnewlines} 0123"


def test_char_tokenizer_round_trip():
    tok = CharTokenizer()
    assert tok.vocab_size == 4 + 95 + 1
    ids = tok.encode(TEXT)
    assert len(ids) == len(TEXT)  # one token per character, spaces included
    assert tok.decode(ids) == TEXT
    assert tok.decode([tok.bos_token_id, *ids, tok.eos_token_id, tok.pad_token_id]) == TEXT
    assert tok.encode("é") == [tok.unk_token_id]


def test_char_tokenizer_save_load(tmp_path: Path):
    CharTokenizer().save_pretrained(tmp_path)
    loaded = load_tokenizer(str(tmp_path))
    assert isinstance(loaded, CharTokenizer)
    assert loaded.encode(TEXT) == CharTokenizer().encode(TEXT)
    assert loaded.decode(loaded.encode(TEXT)) == TEXT
    (tmp_path / CHAR_TOKENIZER_FILE).write_text('{"type": "other"}')
    with pytest.raises(ValueError, match="not a troupe-char v1 tokenizer"):
        load_tokenizer(str(tmp_path))


@pytest.mark.parametrize("preset", sorted(TINY_PRESETS))
def test_checkpoint_reloads_identically(tmp_path: Path, preset: str):
    torch.manual_seed(0)
    original = build_tiny(preset)
    save_checkpoint(original, tmp_path / "ckpt")
    # Loaded the way a spec names it: {"source": "local", "path": ...}, relative to the work folder.
    actor = {"model": {"source": "local", "path": "ckpt"}}
    reloaded = load_actor_model(actor, 0, tmp_path)
    assert isinstance(reloaded.tokenizer, CharTokenizer)
    assert reloaded.tokenizer.encode(TEXT) == original.tokenizer.encode(TEXT)
    assert reloaded.tokenizer.decode(reloaded.tokenizer.encode(TEXT)) == TEXT
    ids = torch.tensor([original.tokenizer.encode(TEXT)])
    original.model.eval()
    reloaded.model.eval()
    with torch.no_grad():
        torch.testing.assert_close(reloaded.model(ids).logits, original.model(ids).logits, rtol=0, atol=0)


def test_run_writes_checkpoints_that_load_back(tmp_path: Path):
    spec = small_spec(steps=3, checkpointEvery=2)
    result = run_spec(spec, work_dir=tmp_path)
    assert result.state == "succeeded", result.message
    checkpoints = [e for e in result.events if e["type"] == "checkpoint"]
    assert [(e["step"], e["actor"]) for e in checkpoints] == [(2, "student"), (3, "student")]
    assert Path(checkpoints[-1]["path"]) == tmp_path / "checkpoints" / "step-3" / "student"
    reloaded = load_actor_model({"model": {"source": "local", "path": checkpoints[-1]["path"]}}, 0, tmp_path)
    assert isinstance(reloaded.tokenizer, CharTokenizer)
    assert any(e["type"] == "memory" and e["phase"] == "checkpoint" for e in result.events)


def test_missing_local_model_names_the_field(tmp_path: Path):
    spec = small_spec()
    spec["actors"][0]["model"] = {"source": "local", "path": "nowhere"}
    result = run_spec(spec, work_dir=tmp_path)
    assert result.exit_code == 2
    error = next(e for e in result.events if e["type"] == "error")
    assert error["field"] == "actors.0.model.path"
