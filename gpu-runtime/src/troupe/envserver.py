"""`python -m troupe.envserver module:Class --port 8100`: serve an Environment over HTTP (remote/server.py)."""

from .envs.remote.server import main

if __name__ == "__main__":
    raise SystemExit(main())
