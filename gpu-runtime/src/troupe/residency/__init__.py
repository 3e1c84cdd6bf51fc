"""residency: see gpu-runtime/ARCHITECTURE.md."""
