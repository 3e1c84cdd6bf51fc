"""The one sandbox for user and model code: Python rewards now, code and tool environments next.

    from troupe.sandbox import Limits, Sandbox

    box = Sandbox(Limits(memory_mb=256, cpu_seconds=5, processes=16, output_bytes=100_000, wall_seconds=10),
                  run_dir=run_folder)                      # read-only, the working folder inside
    done = box.run([python_executable(), "-I", "-c", program], stdin=b"3 4\\n")
    done.returncode, done.stdout, done.timed_out, done.output_exceeded

    worker = box.start([python_executable(), "-I", "my_worker.py"])   # long-lived: one request per line
    worker.write(b'{"x": 1}\\n', deadline=time.monotonic() + 5)
    answer = worker.read_line(deadline=time.monotonic() + 5, max_line_bytes=65536)  # raises SandboxError
    worker.close()                                        # kills it and every process it started

What holds inside (bubblewrap, see command.py): an unprivileged uid (no new user namespaces:
seccomp.py), no network namespace peers
(not even loopback services), a private size-limited /tmp, only /usr, the interpreter and the
paths given (read-only), its own /proc (no other process's environ), an environment of a few
fixed variables, rlimits on memory/CPU/processes/files, one memory cgroup for the whole sandbox where
the host can make one (memory_scope.py), and death with its parent. What the
caller enforces: wall-clock deadlines and output caps (process.py). Treat everything a sandbox
says as untrusted: validate it (python_rewards.py validates scores).

`sandbox_status()` says whether sandboxes can start here; `TROUPE_SANDBOX=off` is an operator's
explicit opt-out (unsandboxed, loudly logged).
"""

from .availability import ENV_VAR, OFF, OFF_WARNING, ON, SandboxStatus, configured_mode, sandbox_status
from .limits import Limits
from .process import (
    CompletedRun,
    OutputLimitExceeded,
    Sandbox,
    SandboxError,
    SandboxExited,
    SandboxProcess,
    SandboxTimeout,
    SandboxUnavailable,
    describe_exit,
    python_executable,
)

__all__ = [
    "ENV_VAR", "OFF", "OFF_WARNING", "ON", "CompletedRun", "Limits", "OutputLimitExceeded", "Sandbox", "SandboxError",
    "SandboxExited", "SandboxProcess", "SandboxStatus", "SandboxTimeout", "SandboxUnavailable", "configured_mode",
    "describe_exit", "python_executable", "sandbox_status",
]
