"""The per-step metrics of a remote environment (`Environment.metrics`, reported with each actor's):

- `remote/failed_sessions`: this step's episodes whose session failed (a timeout, a crash, a refused
  connection, a reply that breaks the protocol), each scored `failureScore` and trained on nothing;
- `remote/timeouts`: those of them that failed by a timeout, of one call (`timeoutSeconds`) or of the
  whole session (`sessionTimeoutSeconds`).

environment.py's `fail` records the cause's kind in `episode.state["failure_kind"]`.
"""

from __future__ import annotations

from typing import Any, Sequence


def session_metrics(episodes: Sequence[Any]) -> dict[str, float]:
    failed = [e for e in episodes if "failed" in e.state]
    return {
        "remote/failed_sessions": float(len(failed)),
        "remote/timeouts": float(sum(1 for e in failed if e.state.get("failure_kind") == "timeout")),
    }
