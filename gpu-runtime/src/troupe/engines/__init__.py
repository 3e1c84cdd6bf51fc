"""engines: see gpu-runtime/ARCHITECTURE.md."""
