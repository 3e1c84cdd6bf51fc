"""Where `file` datasets and `local` models may be read from (issue 30): the run folder and the folders an
operator lists in TROUPE_DATA_ROOTS (default: the Hugging Face cache), after resolving symlinks.

The web's launch check refuses paths outside the published roots by field (packages/contracts/src/
hostPolicy.ts), but it cannot see this host's symlinks; this is the check on the host itself, made right
before a path is opened, so a link planted under a root that points elsewhere is refused too.

    path = checked_path(source["path"], work_dir, "datasets.0.source.path", "a file dataset")
"""

from __future__ import annotations

import os
from pathlib import Path

from ..spec import SpecError

DATA_ROOTS_VAR = "TROUPE_DATA_ROOTS"


def hf_cache() -> Path:
    """The Hugging Face cache folder as huggingface_hub finds it (HF_HOME, else XDG_CACHE_HOME/huggingface)."""
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser()
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "huggingface"


def configured_roots() -> list[Path]:
    """The operator's roots (TROUPE_DATA_ROOTS, comma- or space-separated), symlinks resolved; unset: the HF cache."""
    raw = os.environ.get(DATA_ROOTS_VAR, "")
    listed = [p for p in raw.replace(",", " ").split() if p]
    roots = [Path(p).expanduser() for p in listed] if listed else [hf_cache()]
    return [Path(os.path.realpath(p)) for p in roots if p.is_absolute()]


def _under(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def checked_path(raw: str, work_dir: Path, field: str, what: str) -> Path:
    """The real path of a spec path (relative: to the run folder), or a SpecError at `field` when it resolves
    outside the run folder and every data root."""
    path = Path(raw)
    path = path if path.is_absolute() else Path(work_dir) / path
    real = Path(os.path.realpath(path))
    roots = [Path(os.path.realpath(work_dir)), *configured_roots()]
    if any(_under(real, root) for root in roots):
        return real
    via = f" (it resolves to {real})" if real != Path(os.path.abspath(path)) else ""
    listed = ", ".join(str(r) for r in roots)
    raise SpecError.at(
        field,
        f"{raw}{via} is outside the run folder and every data root ({listed}): {what} is read only under them; "
        f"the operator lists more folders in {DATA_ROOTS_VAR} on the runner host",
    )
