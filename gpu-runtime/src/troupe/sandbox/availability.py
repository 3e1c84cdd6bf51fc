"""Is the sandbox usable here? `TROUPE_SANDBOX` picks the mode; bubblewrap is probed once.

    TROUPE_SANDBOX unset, "bwrap" or "on": user code runs under bubblewrap; where bwrap is missing
                                           or cannot start a sandbox, specs with user code are refused.
    TROUPE_SANDBOX=off:                    an operator's explicit opt-out: user code runs as plain
                                           child processes with the same rlimits and a cleaned
                                           environment, but with the runner's user, files and network.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
from dataclasses import dataclass

from .command import release_uid, sandbox_argv, take_uid
from .limits import Limits
from .memory_scope import scope_status

ENV_VAR = "TROUPE_SANDBOX"
BWRAP_ENV_VAR = "TROUPE_BWRAP"  # path of the bwrap binary when it is not on PATH
ON, OFF = "bwrap", "off"
INSTALL_HINT = "install bubblewrap (apt-get install bubblewrap; scripts/setup.sh does it)"
OFF_WARNING = (
    f"{ENV_VAR}=off: user code runs UNSANDBOXED (the runner's user, files and network; only rlimits "
    "and a cleaned environment). Use this for trusted code only."
)


@dataclass(frozen=True)
class SandboxStatus:
    mode: str  # ON or OFF
    usable: bool  # user code may run (sandboxed, or unsandboxed by explicit opt-out)
    reason: str  # why not usable, or a note on how it runs
    bwrap: str | None = None


def configured_mode() -> str:
    raw = os.environ.get(ENV_VAR, "").strip().lower()
    if raw in ("", "bwrap", "on", "1", "true"):
        return ON
    if raw in ("off", "0", "false"):
        return OFF
    raise ValueError(f'{ENV_VAR}="{os.environ[ENV_VAR]}" is not understood: use "bwrap" (the default) or "off"')


def bwrap_path() -> str | None:
    return os.environ.get(BWRAP_ENV_VAR) or shutil.which("bwrap")


def sandbox_status() -> SandboxStatus:
    try:
        mode = configured_mode()
    except ValueError as e:
        return SandboxStatus(ON, False, str(e))
    if mode == OFF:
        return SandboxStatus(OFF, True, OFF_WARNING)
    bwrap = bwrap_path()
    if bwrap is None:
        return SandboxStatus(ON, False, f"bubblewrap (bwrap) is not installed: {INSTALL_HINT}, or set {ENV_VAR}=off to run user code unsandboxed")
    problem = _probe(bwrap)
    if problem:
        return SandboxStatus(ON, False, f"bubblewrap at {bwrap} cannot start a sandbox here: {problem}", bwrap)
    return SandboxStatus(ON, True, f"user code runs under bubblewrap ({bwrap}); {scope_status()}", bwrap)


@functools.lru_cache(maxsize=4)
def _probe(bwrap: str) -> str | None:
    """None when a minimal sandbox (the real argv, running `true`) starts and exits 0."""
    uid, slot = take_uid()
    try:
        argv, fds = sandbox_argv(bwrap, ["true"], Limits(processes=8, memory_mb=64, tmp_mb=1), read_only=(), run_dir=None, env={}, uid=uid)
        done = subprocess.run(argv, pass_fds=fds, capture_output=True, timeout=30, env={"PATH": "/usr/bin:/bin"}, start_new_session=True)
    except (OSError, subprocess.SubprocessError) as e:
        return str(e)
    finally:
        release_uid(slot)
        for fd in locals().get("fds") or []:
            os.close(fd)
    if done.returncode != 0:
        return done.stderr.decode(errors="replace").strip()[-500:] or f"exit code {done.returncode}"
    return None
