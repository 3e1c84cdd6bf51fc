"""A frozen defender that can be attacked, and the adversarial spec around it.

What the defender really reads: the runtime conditions it on
    "?\\nAlice:" + <attacker text> + "\\nBob:"
(user prompt, separator, the attacker's header and message, separator, the defender's own header;
tiny char tokenizers have no chat template). Its last input token is therefore always ":", so a
bigram defender (blocks zeroed, next token = f(last token)) would answer the same whatever the
attacker says. The defender is instead a one-layer Qwen2 with hand-set weights that reads the
whole context as a bag of characters:
  * every embedding has 1 in dimension 0; the trigger character(s) also have 1 in dimension 2;
  * q and k are zero, so attention is uniform over the causal context (RoPE rotates zero vectors
    to zero, so positions play no part), and v reads dimension 2: the attention output is the
    share of trigger characters in the context; o_proj writes it, scaled, into dimension 1;
  * the MLP's down_proj is zero (the block adds nothing else);
  * an untied lm_head gives the target character the logit A*h1 - B*h0 (h = the final RMSNorm of
    the residual), every other character 0, end-of-sequence a large negative logit.
So with no trigger in the attacker's message the target is one unlikely character among ~100;
with one trigger it is very likely. Nothing is trained in it: it is a genuine frozen HF model,
saved with `save_pretrained` and loaded by the runtime as a `local` model source.
"""

import json
from pathlib import Path

import torch
from runtime_helpers import TEST_THREADS
from transformers import Qwen2Config, Qwen2ForCausalLM

from troupe.models.tokenizer import CharTokenizer

TARGET = "#"
# One trigger among the 100 tokens the attacker can write: not in any text the runtime adds
# ("?\nAlice:", "\nBob:"), nor the target.
TRIGGERS = "~"
HIDDEN = 8
# Scales of the hand-set weights (see the module docstring); chosen on paper so that one trigger
# in a 17-character context gives P(target) ~ 0.95 and none gives ~ 0.001 (probed in the test).
TRIGGER_GAIN = 40.0  # o_proj: trigger share -> dimension 1
TARGET_GAIN = 3.0  # lm_head weight on dimension 1 for the target
TARGET_OFFSET = 1.0  # lm_head weight against dimension 0 (the constant) for the target
EOS_LOGIT_WEIGHT = -10.0  # the defender always says a character (an empty reply would say nothing)


@torch.no_grad()
def build_bag_of_characters_defender(folder: Path) -> Path:
    tokenizer = CharTokenizer()
    config = Qwen2Config(
        vocab_size=tokenizer.vocab_size,
        hidden_size=HIDDEN,
        intermediate_size=HIDDEN,
        num_hidden_layers=1,
        num_attention_heads=1,
        num_key_value_heads=1,
        max_position_embeddings=256,
        tie_word_embeddings=False,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
    )
    model = Qwen2ForCausalLM(config)
    for p in model.parameters():
        p.zero_()
    for norm in (model.model.norm, model.model.layers[0].input_layernorm, model.model.layers[0].post_attention_layernorm):
        norm.weight.fill_(1.0)
    triggers = [tokenizer.encode(ch)[0] for ch in TRIGGERS]
    target = tokenizer.encode(TARGET)[0]
    embed = model.model.embed_tokens.weight
    embed[:, 0] = 1.0
    embed[triggers, 2] = 1.0
    attention = model.model.layers[0].self_attn  # q, k stay zero: uniform attention
    attention.v_proj.weight[0, 2] = 1.0
    attention.o_proj.weight[1, 0] = TRIGGER_GAIN
    head = model.lm_head.weight
    head[target, 1] = TARGET_GAIN
    head[target, 0] = -TARGET_OFFSET
    head[tokenizer.eos_token_id, 0] = EOS_LOGIT_WEIGHT
    head[[tokenizer.pad_token_id, tokenizer.bos_token_id, tokenizer.unk_token_id], 0] = EOS_LOGIT_WEIGHT
    folder.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(str(folder), safe_serialization=True)
    tokenizer.save_pretrained(folder)
    return folder


@torch.no_grad()
def target_probability(folder: Path, attacker_text: str) -> float:
    """P(defender's first character = TARGET) in the context the runtime builds for it."""
    model = Qwen2ForCausalLM.from_pretrained(str(folder), dtype=torch.float32)
    tokenizer = CharTokenizer.from_pretrained(folder)
    ids = tokenizer.encode(f"?\nAlice:{attacker_text}\nBob:")
    logits = model(torch.tensor([ids])).logits[0, -1]
    return float(torch.softmax(logits, -1)[tokenizer.encode(TARGET)[0]])


def adversarial_spec(folder: Path, defender: Path, steps: int, seed: int = 11, lr: float = 3e-3, attacker_tokens: int = 4) -> dict:
    (folder / "targets.jsonl").write_text("".join(json.dumps({"prompt": "?", "target": TARGET}) + "\n" for _ in range(16)))
    return {
        "specVersion": 1,
        "name": "make the defender say #",
        "seed": seed,
        "actors": [
            {
                "name": "Alice",
                "model": {"source": "tiny", "preset": "tiny-char-2l"},
                "trainable": True,
                "training": {"learningRate": lr},
                "sampling": {"temperature": 1.0, "maxNewTokens": attacker_tokens},
            },
            {
                "name": "Bob",
                "model": {"source": "local", "path": str(defender)},
                "trainable": False,
                "sampling": {"temperature": 1.0, "maxNewTokens": 1},
            },
        ],
        "datasets": [{"name": "targets", "source": {"kind": "file", "path": "targets.jsonl", "format": "jsonl"}}],
        "rewards": [
            # conversation scope: a builtin scores the conversation's last message, the defender's reply
            {"name": "target", "scope": "conversation", "source": {"kind": "builtin", "name": "exact_match", "params": {"field": "target"}}}
        ],
        "environments": [
            {"name": "attack", "kind": "adversarial", "dataset": "targets", "actors": ["Alice", "Bob"], "rewards": [{"reward": "target"}]}
        ],
        "algorithm": {"name": "grpo", "groupSize": 8},
        "trainer": {"steps": steps, "promptsPerStep": 4, "episodesPerStep": 1, "cpuThreads": TEST_THREADS},
    }
