"""Reading Linux /proc files without importing torch (capabilities runs before any engine is imported)."""

from __future__ import annotations


def proc_kb_bytes(path: str, key: str) -> int | None:
    """The value of a `Key:   123 kB` line of a /proc file, in bytes; None where the file or the key is missing
    (macOS, a sandbox without /proc)."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith(f"{key}:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        return None
    return None
