"""Tokenizers behind one small interface: a character tokenizer for tiny presets, and HF's.

The runtime only needs: encode a prompt, decode a completion, the EOS/pad ids, an optional chat
template, and save next to a checkpoint. The character tokenizer is our own class (not a
transformers tokenizer) because transformers 5.x rebuilds the tokenizer of a folder whose config
says `qwen2` as a byte-level one; ours is saved as `troupe_char_tokenizer.json` and found first
by `load_tokenizer`, so a checkpoint reloads exactly.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Protocol, Sequence

CHAR_TOKENIZER_FILE = "troupe_char_tokenizer.json"


class Tokenizer(Protocol):
    pad_token_id: int
    eos_token_ids: list[int]
    vocab_size: int

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]: ...
    def decode(self, ids: Sequence[int]) -> str: ...
    def apply_chat_template(self, messages: list[dict[str, str]]) -> str | None: ...
    def save_pretrained(self, folder: str | Path) -> None: ...


class CharTokenizer:
    """One token per character: special tokens, then printable ASCII and newline."""

    SPECIALS = ("<pad>", "<bos>", "<eos>", "<unk>")

    def __init__(self, chars: str | None = None):
        self.chars = chars if chars is not None else "".join(chr(c) for c in range(32, 127)) + "\n"
        if len(set(self.chars)) != len(self.chars):
            raise ValueError("duplicate characters in the vocabulary")
        self.pad_token_id, self.bos_token_id, self.eos_token_id, self.unk_token_id = range(len(self.SPECIALS))
        self.eos_token_ids = [self.eos_token_id]
        self._ids = {ch: i + len(self.SPECIALS) for i, ch in enumerate(self.chars)}
        self.vocab_size = len(self.SPECIALS) + len(self.chars)

    def __len__(self) -> int:
        return self.vocab_size

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        # No BOS: prompts are short and the demo's positions are what they look like.
        return [self._ids.get(ch, self.unk_token_id) for ch in text]

    def decode(self, ids: Sequence[int]) -> str:
        n = len(self.SPECIALS)
        return "".join(self.chars[i - n] for i in ids if n <= i < self.vocab_size)

    def token_text(self, token_id: int) -> str:
        n = len(self.SPECIALS)
        return self.SPECIALS[token_id] if token_id < n else self.chars[token_id - n]

    def apply_chat_template(self, messages: list[dict[str, str]]) -> str | None:
        return None  # tiny presets have no chat format

    def save_pretrained(self, folder: str | Path) -> None:
        data = {"type": "troupe-char", "version": 1, "specials": list(self.SPECIALS), "chars": self.chars}
        Path(folder, CHAR_TOKENIZER_FILE).write_text(json.dumps(data, ensure_ascii=False, indent=1), encoding="utf-8")

    @classmethod
    def from_pretrained(cls, folder: str | Path) -> "CharTokenizer":
        data = json.loads(Path(folder, CHAR_TOKENIZER_FILE).read_text(encoding="utf-8"))
        if data.get("type") != "troupe-char" or data.get("version") != 1 or tuple(data.get("specials", ())) != cls.SPECIALS:
            raise ValueError(f"{folder}/{CHAR_TOKENIZER_FILE} is not a troupe-char v1 tokenizer")
        return cls(data["chars"])


class HFTokenizer:
    """Adapter over a transformers tokenizer."""

    def __init__(self, tokenizer: Any, extra_eos_ids: Sequence[int] = ()):
        self.inner = tokenizer
        eos = [tokenizer.eos_token_id] if tokenizer.eos_token_id is not None else []
        self.eos_token_ids = sorted({*eos, *extra_eos_ids})
        if not self.eos_token_ids:
            raise ValueError("the tokenizer has no EOS token; generation could never stop")
        pad = tokenizer.pad_token_id
        self.pad_token_id = pad if pad is not None else self.eos_token_ids[0]
        self.vocab_size = len(tokenizer)

    def encode(self, text: str, add_special_tokens: bool = True) -> list[int]:
        return list(self.inner.encode(text, add_special_tokens=add_special_tokens))

    def decode(self, ids: Sequence[int]) -> str:
        return self.inner.decode(list(ids), skip_special_tokens=True)

    def apply_chat_template(self, messages: list[dict[str, str]]) -> str | None:
        if not getattr(self.inner, "chat_template", None):
            return None
        return self.inner.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)

    def save_pretrained(self, folder: str | Path) -> None:
        self.inner.save_pretrained(str(folder))


def load_tokenizer(folder_or_id: str, revision: str | None = None, extra_eos_ids: Sequence[int] = ()) -> Tokenizer:
    """Our char tokenizer when the folder holds one, else transformers' AutoTokenizer."""
    if Path(folder_or_id, CHAR_TOKENIZER_FILE).is_file():
        return CharTokenizer.from_pretrained(folder_or_id)
    from transformers import AutoTokenizer

    return HFTokenizer(AutoTokenizer.from_pretrained(folder_or_id, revision=revision), extra_eos_ids)
