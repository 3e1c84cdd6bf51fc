"""`python -m troupe.sandbox.exec CONFIG -- COMMAND...`: replace this process with COMMAND inside a sandbox.

For callers that spawn the process themselves and talk to it over its stdio, such as the MCP SDK's
`stdio_client`, which cannot hand the seccomp filter's descriptor to the child: this wrapper makes the filter
itself and execs bubblewrap, so the server runs under the same sandbox as every other piece of user code.
CONFIG is JSON: {"limits": {Limits field: value}, "readOnly": [path], "runDir": path | null, "env": {name: value},
"uid": int | null (a root runtime's sandbox uid, from take_uid; the caller releases it), "python": bool}.
With TROUPE_SANDBOX=off (the operator's opt-out) COMMAND runs unsandboxed, as everywhere else.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from .availability import OFF, bwrap_path, configured_mode
from .command import sandbox_argv
from .limits import Limits


def exec_argv(config: dict, command: list[str]) -> tuple[str, list[str]]:
    """(executable, argv) this wrapper execs."""
    if configured_mode() == OFF:
        return command[0], command
    bwrap = bwrap_path()
    if bwrap is None:
        raise SystemExit("troupe.sandbox.exec: bubblewrap (bwrap) is not installed: apt-get install bubblewrap, or set TROUPE_SANDBOX=off")
    limits = Limits(**config.get("limits", {}))
    run_dir = Path(config["runDir"]) if config.get("runDir") else None
    argv, fds = sandbox_argv(bwrap, command, limits, [Path(p) for p in config.get("readOnly", [])], run_dir, config.get("env"), config.get("uid"), bool(config.get("python", True)))
    for fd in fds:
        os.set_inheritable(fd, True)
    return bwrap, argv


def main(argv: list[str]) -> int:
    if len(argv) < 3 or argv[1] != "--":
        print("usage: python -m troupe.sandbox.exec CONFIG_JSON -- COMMAND [ARG...]", file=sys.stderr)
        return 2
    executable, full = exec_argv(json.loads(argv[0]), argv[2:])
    os.execvp(executable, full)
    return 127  # not reached


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
