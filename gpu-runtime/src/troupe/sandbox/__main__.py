"""`python -m troupe.sandbox [--json]`: can user code run here, and how? For a runner's start-up log.

Exit 0 when user code may run (sandboxed, or unsandboxed by TROUPE_SANDBOX=off), 1 when specs with
user code will be refused; the line (or JSON) says why.
"""

from __future__ import annotations

import json
import sys

from .availability import OFF, sandbox_status


def main(argv: list[str]) -> int:
    status = sandbox_status()
    if "--json" in argv:
        print(json.dumps({"mode": status.mode, "usable": status.usable, "reason": status.reason, "bwrap": status.bwrap}))
    else:
        word = "OFF (unsandboxed)" if status.mode == OFF else "ok" if status.usable else "UNAVAILABLE"
        print(f"sandbox: {word}: {status.reason}")
    return 0 if status.usable else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
