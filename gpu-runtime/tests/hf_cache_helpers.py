"""Hugging Face datasets placed in a local cache the way the real tools place them, for offline loading tests.

- `put_in_datasets_cache`: what `datasets.load_dataset(repo_id, config)` writes when it runs online: a builder
  with the repository's id prepares `<owner>___<name>/<config>/<version>/<hash>/` (dataset_info.json and
  `<name>-<split>.arrow`) under the datasets cache. Here the builder's rows come from a dict instead of the hub.
- `put_in_hub_cache`: what `hf download --repo-type dataset <repo_id>` writes: the repository's files (Parquet
  under data/) in `datasets--<owner>--<name>/snapshots/<commit>/`, with refs/main naming the commit.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

Rows = dict[str, list[dict[str, Any]]]  # split -> rows


def put_in_datasets_cache(datasets_cache: Path, repo_id: str, config: str, splits: Rows) -> Path:
    import datasets

    first = next(iter(splits.values()))[0]
    features = datasets.Features({k: datasets.Value("int64" if isinstance(v, int) else "string") for k, v in first.items()})

    class HubDataset(datasets.GeneratorBasedBuilder):
        BUILDER_CONFIGS = [datasets.BuilderConfig(name=config)]

        def _info(self) -> datasets.DatasetInfo:
            return datasets.DatasetInfo(features=features)

        def _split_generators(self, dl_manager: Any) -> list[datasets.SplitGenerator]:
            return [datasets.SplitGenerator(name=split, gen_kwargs={"split": split}) for split in splits]

        def _generate_examples(self, split: str) -> Any:
            yield from enumerate(splits[split])

    builder = HubDataset(cache_dir=str(datasets_cache), repo_id=repo_id, dataset_name=repo_id.split("/")[-1], config_name=config, hash="0123456789abcdef")
    builder.download_and_prepare()
    return Path(builder.cache_dir)


def put_in_hub_cache(hub_cache: Path, repo_id: str, splits: Rows, commit: str = "c0ffee" * 6 + "c0ff") -> Path:
    import pyarrow as pa
    import pyarrow.parquet as pq

    repo = hub_cache / f"datasets--{repo_id.replace('/', '--')}"
    snapshot = repo / "snapshots" / commit
    (snapshot / "data").mkdir(parents=True)
    (repo / "refs").mkdir(parents=True)
    (repo / "refs" / "main").write_text(commit)
    for split, rows in splits.items():
        pq.write_table(pa.Table.from_pylist(rows), snapshot / "data" / f"{split}-00000-of-00001.parquet")
    return snapshot
