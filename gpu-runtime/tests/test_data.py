from pathlib import Path

import numpy as np
import pytest

from troupe import SpecError
from troupe.envs.data import ECHO_ALPHABET, RowSampler, echo_letter_rows, load_dataset, reverse_word_rows


def test_builtin_datasets_are_deterministic_in_the_seed():
    assert echo_letter_rows(64, 7) == echo_letter_rows(64, 7)
    assert echo_letter_rows(64, 7) != echo_letter_rows(64, 8)
    assert reverse_word_rows(32, 7) == reverse_word_rows(32, 7)


def test_echo_letter_rows():
    rows = echo_letter_rows(256, 0)
    assert {r["letter"] for r in rows} == set(ECHO_ALPHABET)
    assert all(r["prompt"] == f"say {r['letter']}:" for r in rows)


def test_reverse_word_rows():
    for r in reverse_word_rows(50, 3):
        assert r["answer"] == r["word"][::-1] and 3 <= len(r["word"]) <= 5
        assert r["prompt"] == f"reverse {r['word']}:"


def _file_spec(path: str, fmt: str, eval_fraction=0.0):
    return {"name": "d", "source": {"kind": "file", "path": path, "format": fmt}, "evalFraction": eval_fraction}


def test_jsonl_and_csv_files(tmp_path: Path):
    (tmp_path / "a.jsonl").write_text('{"prompt": "hi", "answer": "1"}\n\n{"prompt": "yo", "answer": "2"}\n')
    (tmp_path / "a.csv").write_text("prompt,answer\nhi,1\nyo,2\n")
    for name, fmt in (("a.jsonl", "jsonl"), ("a.csv", "csv")):
        ds = load_dataset(_file_spec(name, fmt), 0, 1, tmp_path)
        assert ds.rows == [{"prompt": "hi", "answer": "1"}, {"prompt": "yo", "answer": "2"}]
        assert ds.columns() == {"prompt", "answer"}


def test_file_errors_name_the_field_and_line(tmp_path: Path):
    (tmp_path / "bad.jsonl").write_text('{"prompt": "hi"}\n{"prompt": \n')
    with pytest.raises(SpecError) as info:
        load_dataset(_file_spec("bad.jsonl", "jsonl"), 3, 1, tmp_path)
    assert info.value.field == "datasets.3.source.path"
    assert "line 2, column" in str(info.value)
    with pytest.raises(SpecError, match="is not a file"):
        load_dataset(_file_spec("missing.jsonl", "jsonl"), 0, 1, tmp_path)
    (tmp_path / "list.jsonl").write_text("[1, 2]\n")
    with pytest.raises(SpecError, match="line 1: each line must be a JSON object"):
        load_dataset(_file_spec("list.jsonl", "jsonl"), 0, 1, tmp_path)


def test_eval_split_is_seeded_and_disjoint(tmp_path: Path):
    spec = {"name": "letters", "source": {"kind": "builtin", "name": "echo_letter", "size": 100}, "evalFraction": 0.2}
    a = load_dataset(spec, 0, 5, tmp_path)
    assert len(a.eval_indices) == 20 and len(a.train_indices) == 80
    assert not set(a.eval_indices) & set(a.train_indices)
    assert a.eval_indices == load_dataset(spec, 0, 5, tmp_path).eval_indices


def test_row_sampler_covers_an_epoch_before_repeating():
    sampler = RowSampler([3, 5, 7, 9], np.random.default_rng(0))
    first, second = sampler.take(4), sampler.take(4)
    assert sorted(first) == [3, 5, 7, 9] and sorted(second) == [3, 5, 7, 9]
    again = RowSampler([3, 5, 7, 9], np.random.default_rng(0))
    assert again.take(8) == first + second


def test_parquet_files_read_like_jsonl(tmp_path: Path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pa.table({"prompt": ["hi", "yo"], "answer": ["1", "2"], "n": [3, 4]})
    pq.write_table(table, tmp_path / "a.parquet")
    ds = load_dataset(_file_spec("a.parquet", "parquet"), 0, 1, tmp_path)
    assert ds.rows == [{"prompt": "hi", "answer": "1", "n": 3}, {"prompt": "yo", "answer": "2", "n": 4}]
    assert ds.columns() == {"prompt", "answer", "n"}


def test_a_damaged_parquet_file_is_refused_with_the_field(tmp_path: Path):
    (tmp_path / "bad.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(SpecError) as err:
        load_dataset(_file_spec("bad.parquet", "parquet"), 0, 1, tmp_path)
    assert err.value.field == "datasets.0.source.path"
    assert "not a readable Parquet file" in str(err.value)
