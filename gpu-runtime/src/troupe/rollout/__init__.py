"""rollout: see gpu-runtime/ARCHITECTURE.md."""
