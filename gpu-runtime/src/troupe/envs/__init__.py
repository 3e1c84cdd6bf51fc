"""envs: see gpu-runtime/ARCHITECTURE.md."""
