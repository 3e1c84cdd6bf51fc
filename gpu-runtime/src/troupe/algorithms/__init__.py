"""algorithms: see gpu-runtime/ARCHITECTURE.md."""
