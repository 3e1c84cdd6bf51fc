"""Hugging Face datasets (`datasets.*.source.kind: "huggingface"`), read with `datasets`, offline, from the
runner host's caches. Nothing is downloaded: a run must not depend on the network, and an air-gapped lab
has none. Two caches are searched, in this order:

1. The `datasets` cache (HF_DATASETS_CACHE, else HF_HOME/datasets): what `datasets.load_dataset(id)` wrote
   when it last ran online on this host (`<owner>___<name>/<config>/<version>/<hash>/*.arrow`).
   `load_dataset` finds it by id with offline mode on.
2. The hub cache (HF_HUB_CACHE, else HF_HOME/hub): the repository files `hf download --repo-type dataset
   <id>` (or `huggingface_hub.snapshot_download`) fetched; `load_dataset` reads that snapshot folder.

A dataset in neither is refused on `datasets.<i>.source.id`, naming both folders and how to fill them.
"""

from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator

from ..spec import SpecError
from ..spec.runspec_types import DatasetSourceHuggingface

Row = dict[str, Any]


@dataclass(frozen=True)
class CacheDirs:
    datasets: Path
    hub: Path


def cache_dirs(env: dict[str, str] | None = None) -> CacheDirs:
    """Where `datasets` and `huggingface_hub` keep their caches, by their own rules, read now (not at import)."""
    env = dict(os.environ) if env is None else env
    home = Path(env.get("HF_HOME") or Path(env.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "huggingface").expanduser()
    datasets = Path(env["HF_DATASETS_CACHE"]).expanduser() if env.get("HF_DATASETS_CACHE") else home / "datasets"
    hub = Path(env.get("HF_HUB_CACHE") or env.get("HUGGINGFACE_HUB_CACHE") or home / "hub").expanduser()
    return CacheDirs(datasets, hub)


@contextlib.contextmanager
def _offline() -> Iterator[Any]:
    """`datasets` with offline mode on for this call, whatever HF_DATASETS_OFFLINE / HF_HUB_OFFLINE said when
    it was first imported (the process's own setting, and so model loading, is left as it is)."""
    import datasets  # lazy: only specs with Hugging Face datasets need it

    datasets.disable_progress_bars()  # per-split bars would fill the run's log
    config = datasets.config
    before = config.HF_HUB_OFFLINE
    config.HF_HUB_OFFLINE = True
    try:
        yield datasets
    finally:
        config.HF_HUB_OFFLINE = before


def _hub_snapshot(repo_id: str, hub: Path) -> Path | None:
    """The newest snapshot of the dataset repository in the hub cache, or None."""
    from huggingface_hub import snapshot_download

    try:
        return Path(snapshot_download(repo_id, repo_type="dataset", cache_dir=str(hub), local_files_only=True))
    except Exception:  # LocalEntryNotFoundError and friends: not there
        return None


def _not_cached(source: DatasetSourceHuggingface, dirs: CacheDirs, field: str) -> SpecError:
    repo_id, config, split = source.id, source.config, source.split
    args = ", ".join([repr(repo_id), *([repr(config)] if config else []), f"split={split!r}"])
    return SpecError.at(
        f"{field}.id",
        f'Hugging Face dataset "{repo_id}" is not in this host\'s caches (datasets are read offline): looked in the '
        f"datasets cache {dirs.datasets} and the hub cache {dirs.hub}. Fill one on this host (or copy it here), e.g. "
        f'`python -c "import datasets; datasets.load_dataset({args})"` where the hub is reachable, or '
        f"`hf download --repo-type dataset {repo_id}`; set HF_HOME (or HF_DATASETS_CACHE / HF_HUB_CACHE) for the runner "
        "if the cache lives elsewhere",
    )


def _split_error(e: Exception, source: DatasetSourceHuggingface, field: str) -> SpecError | None:
    text = str(e)
    if "Unknown split" in text or ("split" in text.lower() and source.split in text):
        return SpecError.at(f"{field}.split", f'dataset "{source.id}" has no split "{source.split}" in the cache: {text}')
    if source.config and ("BuilderConfig" in text or "config" in text.lower()):
        return SpecError.at(f"{field}.config", f'dataset "{source.id}" has no config "{source.config}" in the cache: {text}')
    return None


def load_huggingface_rows(source: DatasetSourceHuggingface, field: str, env: dict[str, str] | None = None) -> list[Row]:
    """Every row of `source`'s split as a plain dict. `field` is the source's path (`datasets.<i>.source`)."""
    try:
        import datasets  # noqa: F401
    except ImportError as e:  # pragma: no cover - datasets is a runtime dependency
        raise SpecError.at(f"{field}.kind", '"huggingface" datasets need the datasets package: pip install datasets') from e
    dirs = cache_dirs(env)
    repo_id, config, split = source.id, source.config, source.split
    found: Any = None
    with _offline() as hf:
        try:
            found = hf.load_dataset(repo_id, config, split=split, cache_dir=str(dirs.datasets))
        except (ValueError, KeyError) as e:
            if (issue := _split_error(e, source, field)) is not None:
                raise issue from e
        except Exception:  # not in the datasets cache (ConnectionError / FileNotFoundError): try the hub cache
            found = None
        if found is None:
            snapshot = _hub_snapshot(repo_id, dirs.hub)
            if snapshot is None:
                raise _not_cached(source, dirs, field)
            try:
                found = hf.load_dataset(str(snapshot), config, split=split, cache_dir=str(dirs.datasets))
            except Exception as e:
                raise (_split_error(e, source, field) or SpecError.at(f"{field}.id", f"could not read {snapshot} (hub cache of \"{repo_id}\"): {e}")) from e
    rows = found.to_list()
    if not rows:
        raise SpecError.at(f"{field}.split", f'split "{split}" of "{repo_id}" has no rows')
    return rows
