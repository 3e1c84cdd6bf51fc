"""models: see gpu-runtime/ARCHITECTURE.md."""
