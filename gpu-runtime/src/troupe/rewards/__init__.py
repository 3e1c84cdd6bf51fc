"""rewards: see gpu-runtime/ARCHITECTURE.md."""
