"""Datasets: builtin toy tasks generated from the seed, jsonl/csv/parquet files, and Hugging Face datasets
read offline from the host's cache (hf_datasets.py).

Rows are plain dicts. A dataset keeps every row (so `datasetRow` indices are stable) and which
of them are held out for evaluation (`evalFraction`).
"""

from __future__ import annotations

import csv
import json
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

import numpy as np

from ..host.data_roots import checked_path
from .hf_datasets import load_huggingface_rows
from ..spec import SpecError
from ..spec.runspec_types import DatasetSourceBuiltin, DatasetSourceFile, DatasetSourceHuggingface
from .sections import DatasetInput, dataset_section

# echo_letter: a small alphabet so a random policy already hits the asked letter now and then
# (about 1 character in the vocabulary's ~100) and a learned one has a real choice to make.
ECHO_ALPHABET = "abcdefgh"
REVERSE_ALPHABET = "abcdefghij"

Row = dict[str, Any]


def _rng(seed: int, name: str) -> np.random.Generator:
    """A generator that depends on the spec seed and the dataset's name, stable across processes."""
    return np.random.default_rng([seed, zlib.crc32(name.encode("utf-8"))])


def echo_letter_rows(size: int, seed: int) -> list[Row]:
    """`say k:` -> the model should answer with k's (reward: letter_match)."""
    rng = _rng(seed, "echo_letter")
    letters = rng.integers(0, len(ECHO_ALPHABET), size=size)
    return [{"prompt": f"say {ECHO_ALPHABET[i]}:", "letter": ECHO_ALPHABET[i]} for i in letters]


def reverse_word_rows(size: int, seed: int) -> list[Row]:
    """`reverse abc:` -> `cba` (reward: exact_match on `answer`). Words of 3 to 5 letters."""
    rng = _rng(seed, "reverse_word")
    rows = []
    for _ in range(size):
        length = int(rng.integers(3, 6))
        word = "".join(REVERSE_ALPHABET[i] for i in rng.integers(0, len(REVERSE_ALPHABET), size=length))
        rows.append({"prompt": f"reverse {word}:", "word": word, "answer": word[::-1]})
    return rows


BUILTIN_DATASETS = {"echo_letter": echo_letter_rows, "reverse_word": reverse_word_rows}


def read_jsonl(path: Path, field: str) -> list[Row]:
    rows = []
    with path.open(encoding="utf-8") as f:
        for line_no, line in enumerate(f, start=1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise SpecError.at(field, f"{path}: line {line_no}, column {e.colno}: {e.msg}") from e
            if not isinstance(row, dict):
                raise SpecError.at(field, f"{path}: line {line_no}: each line must be a JSON object")
            rows.append(row)
    return rows


def read_csv(path: Path, field: str) -> list[Row]:
    with path.open(encoding="utf-8", newline="") as f:
        reader = csv.DictReader(f)
        rows = []
        for row in reader:
            if None in row:  # more cells than header columns
                raise SpecError.at(field, f"{path}: line {reader.line_num}: more cells than the header has columns")
            rows.append(dict(row))
    return rows


def read_parquet(path: Path, field: str) -> list[Row]:
    """A flat Parquet table, one dict per row (pyarrow; nested columns stay lists/dicts)."""
    try:
        import pyarrow.parquet as pq  # lazy: only Parquet datasets need it
    except ImportError as e:  # pragma: no cover - pyarrow is a runtime dependency
        raise SpecError.at(field, "reading Parquet needs pyarrow: pip install pyarrow") from e
    try:
        table = pq.read_table(path)
    except Exception as e:  # pyarrow raises several types for a damaged file
        raise SpecError.at(field, f"{path}: not a readable Parquet file: {e}") from e
    return table.to_pylist()


READERS = {"jsonl": read_jsonl, "csv": read_csv, "parquet": read_parquet}


@dataclass
class Dataset:
    name: str
    rows: list[Row]
    train_indices: list[int]
    eval_indices: list[int]

    def columns(self) -> set[str]:
        """Columns present in every row."""
        cols = set(self.rows[0])
        for row in self.rows[1:]:
            cols &= set(row)
        return cols


def load_dataset(spec: DatasetInput, index: int, seed: int, work_dir: Path) -> Dataset:
    """The dataset of its typed section (`datasets[index]`; a document is read at the door, sections.py)."""
    section = dataset_section(spec)
    source = section.source
    field = f"datasets.{index}.source"
    if isinstance(source, DatasetSourceBuiltin):
        rows = BUILTIN_DATASETS[source.name](source.size, seed)
    elif isinstance(source, DatasetSourceFile):
        path = checked_path(source.path, work_dir, f"{field}.path", "a file dataset")  # data_roots.py
        if not path.is_file():
            raise SpecError.at(f"{field}.path", f"{path} is not a file on this host")
        reader = READERS[source.format]
        rows = reader(path, f"{field}.path")
        if not rows:
            raise SpecError.at(f"{field}.path", f"{path} has no rows")
    elif isinstance(source, DatasetSourceHuggingface):
        rows = load_huggingface_rows(source, field)
    else:  # refused earlier by spec.support
        raise SpecError.at(f"{field}.kind", f'"{source.kind}" datasets are not supported yet')
    order = _rng(seed, f"split:{section.name}").permutation(len(rows)).tolist()
    n_eval = int(round(len(rows) * section.eval_fraction))
    if n_eval >= len(rows):
        raise SpecError.at(f"datasets.{index}.evalFraction", f"holds out all {len(rows)} rows")
    return Dataset(section.name, rows, sorted(order[n_eval:]), sorted(order[:n_eval]))


class RowSampler:
    """Training rows in a fresh seeded shuffle each epoch, so every row is seen before repeats."""

    def __init__(self, indices: list[int], rng: np.random.Generator):
        self.indices = indices
        self.rng = rng
        self._pending: list[int] = []  # the rest of this epoch's order, next first

    def take(self, n: int) -> list[int]:
        out = []
        while len(out) < n:
            if not self._pending:
                self._pending = [self.indices[i] for i in self.rng.permutation(len(self.indices))]
                continue
            out.append(self._pending.pop(0))
        return out

    def state(self) -> dict[str, Any]:
        """The data position, for a checkpoint: the rest of the epoch and the shuffle RNG."""
        return {"pending": list(self._pending), "rng": self.rng.bit_generator.state}

    def load_state(self, state: dict[str, Any]) -> None:
        self._pending = [int(i) for i in state["pending"]]
        self.rng.bit_generator.state = state["rng"]
