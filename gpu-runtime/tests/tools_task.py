"""The toy tool-use task of test_tools_learning.py, its warm-up data and its tiny model.

The task: `37*58`, a product of two 2-digit numbers (no factor a multiple of 10, a 4-digit product).
A tiny model cannot multiply, so an answer written directly is a guess and almost always wrong; a call
to the calculator with the question as its expression returns the product, and the answer copied
from that result is right. What RL has to learn is the choice: call the tool.

Warm-up (SFT) rows show both behaviours, as a warm-up dataset would: for a share of the questions the
tool call, then the answer read from its result (two rows, one per actor turn); for the others a direct
guess (the product of the factors rounded to tens, a plausible estimate that is never exact here). Each
prompt is the text the `tools` environment puts before that turn of the actor: its system prompt (the
tool description), the question, the `Name:` headers, its own earlier call with the end-of-sequence
token it sampled, and the tool's response. `turn_contexts` writes them; a test checks they tokenise to
exactly the environment's token view.

The model: a 2-layer, 64-wide Llama (the size of the `tiny-char-2l` preset) with a byte-level BPE
tokenizer whose merges make the words and punctuation runs of the tool format single tokens, as a real
model's tokenizer does (Qwen2.5 reads `<tool_call>` as one token). With the one-character-per-token
presets, 63 tokens of JSON lie between the question and the call's expression and the description adds
238 more; a 2-layer model had not learned to copy across that after 300 SFT steps (measured, see
gpu-runtime/README.md), while with these tokens (17 and 69) it copies both the question into the call
and the result into the answer after about 200. Merges never join characters the runtime encodes
separately (a piece boundary of the view, such as `student:` and the `<` that follows it), which the
token-exact test would catch.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from troupe.envs.collaborative import SEPARATOR
from troupe.envs.tools_env import ToolsEnvironment, calculate, format_tool_call, format_tool_response

ACTOR = "student"
TOOLS = {"builtin": ["calculator"], "maxCalls": 1}
MAX_TURNS = 2  # the call, then the answer
EOS = "<|endoftext|>"
PAD = "<|pad|>"


# --- the task -------------------------------------------------------------------------------------


def questions(n: int, seed: int, exclude: frozenset[str] = frozenset()) -> list[str]:
    """`n` distinct questions `a*b`: 2-digit factors, neither a multiple of 10, a 4-digit product."""
    rng = np.random.default_rng(seed)
    out: list[str] = []
    seen = set(exclude)
    while len(out) < n:
        a, b = (int(x) for x in rng.integers(11, 100, size=2))
        q = f"{a}*{b}"
        if a % 10 == 0 or b % 10 == 0 or a * b < 1000 or q in seen:
            continue
        seen.add(q)
        out.append(q)
    return out


def answer(question: str) -> str:
    return str(calculate(question))


def guess(question: str) -> str:
    """A direct answer: the product of the factors rounded to tens."""
    a, b = (int(x) for x in question.split("*"))
    return str(round(a, -1) * round(b, -1))


def turn_contexts(question: str) -> tuple[str, str, str]:
    """(what the actor reads before its first turn, its tool call, what it reads before its second turn)
    as the tools environment and collaborative.py's views write them: the system prompt, the question,
    then `Name:body` lines; the actor's own call carries the EOS it sampled."""
    system = ToolsEnvironment(TOOLS).describe()
    first = system + SEPARATOR + question + SEPARATOR + f"{ACTOR}:"
    call = format_tool_call("calculator", {"expression": question})
    response = format_tool_response("calculator", answer(question))
    second = first + call + EOS + SEPARATOR + "tool:" + response + SEPARATOR + f"{ACTOR}:"
    return first, call, second


def write_sft_rows(path: Path, qs: list[str], tool_share: float, seed: int) -> dict[str, int]:
    """Warm-up rows {prompt, completion}: `tool_share` of the questions as a call plus an answer from its
    result, the rest as a direct guess. Returns the count of each kind."""
    rng = np.random.default_rng(seed)
    counts = {"tool": 0, "direct": 0}
    with path.open("w") as f:
        for q in qs:
            first, call, second = turn_contexts(q)
            if rng.random() < tool_share:
                f.write(json.dumps({"prompt": first, "completion": call}) + "\n")
                f.write(json.dumps({"prompt": second, "completion": answer(q)}) + "\n")
                counts["tool"] += 1
            else:
                assert guess(q) != answer(q)  # never exact: no factor is a multiple of 10
                f.write(json.dumps({"prompt": first, "completion": guess(q)}) + "\n")
                counts["direct"] += 1
    return counts


def write_rl_rows(path: Path, qs: list[str]) -> None:
    with path.open("w") as f:
        for q in qs:
            f.write(json.dumps({"prompt": q, "answer": answer(q)}) + "\n")


# --- the model ------------------------------------------------------------------------------------


def format_pieces() -> list[str]:
    """The tool format's text cut where a byte-level pre-tokenizer cuts it, without the digits (numbers
    stay one token per digit, so any product can be copied)."""
    from tokenizers import pre_tokenizers

    pre = pre_tokenizers.ByteLevel(add_prefix_space=False)
    texts = [ToolsEnvironment(TOOLS).describe(), format_tool_call("calculator", {"expression": "1*2"}),
             format_tool_response("calculator", "12"), f"{ACTOR}:", "tool:"]
    pieces = []
    for text in texts:
        for _, (start, end) in pre.pre_tokenize_str(text):
            if not any(c.isdigit() for c in text[start:end]):
                pieces.append(text[start:end])
    return pieces


def build_tokenizer():
    """Byte-level BPE (every byte is a token) with merges learned from the format's pieces, each fed
    alone, so a merge never spans two pieces."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast

    tok = Tokenizer(models.BPE())
    tok.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    tok.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=1000, min_frequency=1, initial_alphabet=pre_tokenizers.ByteLevel.alphabet(), special_tokens=[EOS, PAD], show_progress=False
    )
    tok.train_from_iterator(format_pieces(), trainer=trainer)
    return PreTrainedTokenizerFast(tokenizer_object=tok, eos_token=EOS, pad_token=PAD)


def build_model_folder(folder: Path, seed: int) -> Path:
    """A randomly initialised 2-layer, 64-wide Llama with the tokenizer above, saved as a Hub checkpoint
    is (the spec loads it with `model: {source: "local", path}`)."""
    import torch
    from transformers import LlamaConfig, LlamaForCausalLM

    from troupe.models.loading import TINY_INIT_STD, TINY_PRESETS

    tokenizer = build_tokenizer()
    tokenizer.save_pretrained(folder)
    shape = TINY_PRESETS["tiny-char-2l"]
    torch.manual_seed(seed)
    config = LlamaConfig(
        vocab_size=len(tokenizer), num_key_value_heads=shape["num_attention_heads"], max_position_embeddings=1024,
        initializer_range=TINY_INIT_STD, tie_word_embeddings=True, eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id, bos_token_id=None, **shape,
    )
    LlamaForCausalLM(config).save_pretrained(folder)
    return folder
