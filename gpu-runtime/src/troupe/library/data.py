"""Where an environment's rows come from: rows in memory (written to the run folder as JSONL when the run
starts), a file, a built-in dataset or a Hugging Face dataset; each compiles to a RunSpec `datasets[]` source."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

FORMATS = {".jsonl": "jsonl", ".csv": "csv", ".parquet": "parquet"}


@dataclass(frozen=True)
class Data:
    source: Mapping[str, Any]
    rows: tuple[Mapping[str, Any], ...] | None = field(default=None, compare=False)
    # The RunSpec dataset's name, when read back by `from_spec` (else the environment's name is used).
    name: str | None = field(default=None, compare=False)

    @classmethod
    def builtin(cls, name: str, size: int = 256) -> Data:
        return cls({"kind": "builtin", "name": name, "size": size})

    @classmethod
    def huggingface(cls, id: str, split: str = "train", config: str | None = None) -> Data:
        return cls({"kind": "huggingface", "id": id, "split": split, **({"config": config} if config else {})})

    @classmethod
    def file(cls, path: str) -> Data:
        suffix = Path(path).suffix.lower()
        if suffix not in FORMATS:
            raise ValueError(f"{path}: a dataset file is .jsonl, .csv or .parquet")
        return cls({"kind": "file", "path": path, "format": FORMATS[suffix]})

    def materialize(self, work_dir: Path) -> None:
        """Writes rows held in memory to the file the spec names (under the run folder)."""
        if self.rows is None:
            return
        path = work_dir / str(self.source["path"])
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(dict(r), ensure_ascii=False) + "\n" for r in self.rows), encoding="utf-8")


def as_data(value: Any, name: str) -> Data:
    """Rows (a list of dicts, or anything with `to_list()` such as a `datasets.Dataset`), a file path, or Data."""
    if isinstance(value, Data):
        return value
    if isinstance(value, Mapping) and "kind" in value:
        return Data(dict(value))
    if isinstance(value, (str, Path)):
        return Data.file(str(value))
    rows: Sequence[Mapping[str, Any]] = value.to_list() if hasattr(value, "to_list") else list(value)
    if not rows or not all(isinstance(r, Mapping) for r in rows):
        raise ValueError(f"dataset {name}: rows must be a non-empty list of dicts")
    return Data({"kind": "file", "path": f"data/{name}.jsonl", "format": "jsonl"}, tuple(rows))
