"""Starting, talking to and killing sandboxed processes, with every byte read under a cap.

The trainer never holds more of a sandbox's output than the caps: stdout lines are refused past
`max_line_bytes`, stderr keeps a short tail and is otherwise counted and dropped, and a run or a
read that passes `output_bytes` ends with the sandbox killed. Killing the sandbox kills every
process in it: bubblewrap's init is pid 1 of the sandbox's pid namespace and dies with its parent
(`--die-with-parent`), and the kernel kills a pid namespace's every process when its pid 1 dies.
"""

from __future__ import annotations

import os
import resource
import selectors
import signal
import subprocess
import tempfile
import time
import weakref
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

from .availability import OFF, configured_mode, bwrap_path
from .command import child_env, python_executable, python_paths, release_uid, sandbox_argv, take_uid
from .limits import Limits
from .memory_scope import MemoryScope

STDERR_TAIL_BYTES = 4096
CHUNK = 65536


class SandboxError(RuntimeError):
    """The sandboxed process broke a rule or went away; it has been killed."""


class SandboxUnavailable(SandboxError):
    """No sandbox can start here (bubblewrap missing or failing, and no explicit opt-out)."""


class SandboxTimeout(SandboxError):
    pass


class OutputLimitExceeded(SandboxError):
    pass


class SandboxExited(SandboxError):
    def __init__(self, message: str, returncode: int | None):
        super().__init__(message)
        self.returncode = returncode


@dataclass
class CompletedRun:
    returncode: int | None  # None when it was killed for a limit (timed_out / output_exceeded)
    stdout: bytes
    stderr: bytes
    timed_out: bool
    output_exceeded: bool
    seconds: float


def describe_exit(returncode: int | None) -> str:
    if returncode is None:
        return "was killed"
    if returncode > 128 and returncode - 128 < signal.NSIG:  # bubblewrap reports a signal as 128 + n
        return f"was killed by {signal.Signals(returncode - 128).name}"
    if returncode < 0:
        return f"was killed by {signal.Signals(-returncode).name}"
    return f"exited with code {returncode}"


class Sandbox:
    """One kind of sandbox: its limits, the read-only paths it sees and its environment.

    `run_dir` is bound read-only and is the working folder; `read_only` adds more paths (same
    place inside). `env` adds variables to the small allow-list of command.BASE_ENV; nothing is
    inherited. `python=True` binds this interpreter's folders, so `sys.executable` runs inside.
    """

    def __init__(
        self,
        limits: Limits | None = None,
        *,
        run_dir: str | Path | None = None,
        read_only: Sequence[str | Path] = (),
        env: Mapping[str, str] | None = None,
        python: bool = True,
    ):
        self.limits = limits or Limits()
        self.run_dir = Path(run_dir) if run_dir is not None else None
        self.read_only = [Path(p) for p in read_only]
        self.env = dict(env or {})
        self.python = python
        self.mode = configured_mode()

    def start(self, argv: Sequence[str]) -> "SandboxProcess":
        """A long-lived process: write requests, read answers line by line, kill it when done."""
        if self.mode == OFF:
            return self._start_unsandboxed(argv)
        bwrap = bwrap_path()
        if bwrap is None:
            raise SandboxUnavailable("bubblewrap (bwrap) is not installed: apt-get install bubblewrap, or set TROUPE_SANDBOX=off")
        uid, slot = take_uid() if os.geteuid() == 0 else (None, None)
        try:
            command, fds = sandbox_argv(bwrap, argv, self.limits, self.read_only, self.run_dir, self.env, uid, self.python)
            scope = MemoryScope.create(self.limits.memory_mb * 1024 * 1024)  # the sandbox's sum (memory_scope.py)
            popen = subprocess.Popen(
                command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, pass_fds=fds,
                env={"PATH": "/usr/bin:/bin"}, start_new_session=True, close_fds=True, preexec_fn=scope.join if scope else None,
            )
        except BaseException:
            release_uid(slot)
            raise
        finally:
            for fd in locals().get("fds") or []:
                os.close(fd)
        return SandboxProcess(popen, self.limits, slot, scope)

    def run(self, argv: Sequence[str], stdin: bytes = b"") -> CompletedRun:
        """Run a command to its end (or to a limit) and return its capped output."""
        started = time.monotonic()
        process = self.start(argv)
        try:
            return process.communicate(stdin, started + self.limits.wall_seconds, started)
        finally:
            process.close()

    def _start_unsandboxed(self, argv: Sequence[str]) -> "SandboxProcess":
        limits = self.limits

        def set_limits() -> None:  # runs in the child, between fork and exec
            for what, value in ((resource.RLIMIT_AS, limits.memory_mb * 1024 * 1024), (resource.RLIMIT_CPU, limits.cpu_seconds),
                                (resource.RLIMIT_NOFILE, limits.open_files), (resource.RLIMIT_CORE, 0)):
                resource.setrlimit(what, (value, value))

        cwd = self.run_dir or Path(tempfile.gettempdir())
        popen = subprocess.Popen(
            list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=cwd,
            env=child_env(self.env), start_new_session=True, close_fds=True, preexec_fn=set_limits,
        )
        return SandboxProcess(popen, limits, None)


def _kill(popen: subprocess.Popen, slot: int | None, scope: MemoryScope | None = None) -> None:
    try:
        os.killpg(popen.pid, signal.SIGKILL)  # bwrap and its init (same group); the pid namespace goes with init
    except (ProcessLookupError, PermissionError):
        pass
    try:
        popen.kill()
        popen.wait(timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        pass
    for stream in (popen.stdin, popen.stdout, popen.stderr):
        try:
            if stream is not None:
                stream.close()
        except OSError:
            pass
    release_uid(slot)
    if scope is not None:
        scope.close()


class SandboxProcess:
    """A started sandbox. Every read takes a deadline (time.monotonic()) and caps; a read that
    breaks a cap or a deadline kills the sandbox and raises a SandboxError saying which."""

    def __init__(self, popen: subprocess.Popen, limits: Limits, slot: int | None, scope: MemoryScope | None = None):
        self.popen = popen
        self.pid = popen.pid
        self.limits = limits
        self.stderr_tail = b""
        self._line_buffer = bytearray()
        self._stdout_open = self._stderr_open = True
        for stream in (popen.stdin, popen.stdout, popen.stderr):
            os.set_blocking(stream.fileno(), False)  # type: ignore[union-attr]
        self.scope = scope
        self._finalizer = weakref.finalize(self, _kill, popen, slot, scope)

    @property
    def alive(self) -> bool:
        return self._finalizer.alive and self.popen.poll() is None

    def kill(self) -> None:
        self._finalizer()

    close = kill

    def write(self, data: bytes, deadline: float) -> None:
        """Send `data` to the process's stdin (draining its stderr meanwhile)."""
        self._pump(deadline, stdin=memoryview(data), want_line=False)

    def read_line(self, deadline: float, max_line_bytes: int, output_budget: int | None = None) -> bytes:
        """The next line on stdout (without its newline). Bytes on stderr count against
        `output_budget` (default: limits.output_bytes) while waiting."""
        return self._pump(deadline, want_line=True, max_line_bytes=max_line_bytes,
                          output_budget=self.limits.output_bytes if output_budget is None else output_budget)

    def communicate(self, stdin: bytes, deadline: float, started: float) -> CompletedRun:
        out, err = bytearray(), bytearray()
        try:
            self._pump(deadline, stdin=memoryview(stdin), want_line=False, collect=(out, err), output_budget=self.limits.output_bytes)
        except SandboxTimeout:
            return CompletedRun(None, bytes(out), bytes(err), True, False, time.monotonic() - started)
        except OutputLimitExceeded:
            return CompletedRun(None, bytes(out), bytes(err), False, True, time.monotonic() - started)
        try:
            code = self.popen.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            self.kill()
            return CompletedRun(None, bytes(out), bytes(err), True, False, time.monotonic() - started)
        return CompletedRun(code, bytes(out), bytes(err), False, False, time.monotonic() - started)

    def _exited(self) -> SandboxExited:
        try:
            code = self.popen.wait(timeout=5)
        except subprocess.TimeoutExpired:
            code = None
        self.kill()
        tail = self.stderr_tail.decode(errors="replace").strip()
        return SandboxExited(f"the sandboxed process {describe_exit(code)}" + (f":\n{tail}" if tail else ""), code)

    def _pump(self, deadline: float, *, stdin: memoryview | None = None, want_line: bool, max_line_bytes: int = 0,
              output_budget: int | None = None, collect: tuple[bytearray, bytearray] | None = None) -> bytes:
        if want_line:
            line = self._take_line(max_line_bytes)
            if line is not None:
                return line
        if not self._finalizer.alive:
            raise SandboxExited("the sandboxed process was already stopped", None)
        used = 0
        with selectors.DefaultSelector() as sel:
            if self._stdout_open and (want_line or collect is not None):  # a write leaves answers unread
                sel.register(self.popen.stdout, selectors.EVENT_READ, "out")  # type: ignore[arg-type]
            if self._stderr_open:
                sel.register(self.popen.stderr, selectors.EVENT_READ, "err")  # type: ignore[arg-type]
            if stdin is not None and len(stdin):
                sel.register(self.popen.stdin, selectors.EVENT_WRITE, "in")  # type: ignore[arg-type]
            elif stdin is not None and collect is not None:
                self._close_stdin()
            while True:
                if not want_line and stdin is not None and not len(stdin) and collect is None:
                    return b""  # everything written
                if collect is not None and not self._stdout_open and not self._stderr_open:
                    return b""
                left = deadline - time.monotonic()
                if left <= 0:
                    self.kill()
                    raise SandboxTimeout("the sandboxed process ran past its time limit and was killed")
                if not sel.get_map():
                    break
                for key, _ in sel.select(min(left, 1.0)):
                    if key.data == "in":
                        try:
                            n = os.write(key.fileobj.fileno(), stdin[:CHUNK])  # type: ignore[index,union-attr]
                        except (BrokenPipeError, BlockingIOError) as e:
                            n = 0 if isinstance(e, BlockingIOError) else -1
                        if n < 0:
                            sel.unregister(key.fileobj)
                            stdin = memoryview(b"")
                            continue
                        stdin = stdin[n:]  # type: ignore[index]
                        if not len(stdin):
                            sel.unregister(key.fileobj)
                            if collect is not None:
                                self._close_stdin()
                        continue
                    try:
                        chunk = os.read(key.fileobj.fileno(), CHUNK)  # type: ignore[union-attr]
                    except BlockingIOError:
                        continue
                    if not chunk:
                        sel.unregister(key.fileobj)
                        if key.data == "out":
                            self._stdout_open = False
                        else:
                            self._stderr_open = False
                        continue
                    used += len(chunk)
                    if key.data == "err":
                        self.stderr_tail = (self.stderr_tail + chunk)[-STDERR_TAIL_BYTES:]
                    if collect is not None:
                        target = collect[0] if key.data == "out" else collect[1]
                        target += chunk[: max(0, (output_budget or 0) - len(collect[0]) - len(collect[1]))]
                    elif key.data == "out":
                        self._line_buffer += chunk
                        used -= len(chunk)  # protocol lines have their own cap
                        line = self._take_line(max_line_bytes)
                        if line is not None:
                            return line
                    if output_budget is not None and used > output_budget:
                        self.kill()
                        raise OutputLimitExceeded(f"the sandboxed process printed more than {output_budget:,} bytes and was killed")
        if collect is not None:
            return b""
        raise self._exited()

    def _take_line(self, max_line_bytes: int) -> bytes | None:
        end = self._line_buffer.find(b"\n")
        if end < 0:
            if len(self._line_buffer) > max_line_bytes:
                self.kill()
                raise OutputLimitExceeded(f"the sandboxed process wrote a line longer than {max_line_bytes:,} bytes and was killed")
            return None
        if end > max_line_bytes:
            self.kill()
            raise OutputLimitExceeded(f"the sandboxed process wrote a line longer than {max_line_bytes:,} bytes and was killed")
        line = bytes(self._line_buffer[:end])
        del self._line_buffer[: end + 1]
        return line

    def _close_stdin(self) -> None:
        try:
            self.popen.stdin.close()  # type: ignore[union-attr]
        except OSError:
            pass


__all__ = ["CompletedRun", "OutputLimitExceeded", "Sandbox", "SandboxError", "SandboxExited", "SandboxProcess",
           "SandboxTimeout", "SandboxUnavailable", "describe_exit", "python_executable", "python_paths"]
