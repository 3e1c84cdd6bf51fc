"""A seccomp filter (classic BPF, as bubblewrap's --seccomp reads it) refusing new user namespaces.

Under a root runtime the sandbox's uid lives in the host's user namespace, where the kernel lets
any user create user namespaces; inside one, code gets capabilities over fresh namespaces and a
much larger kernel surface. This filter refuses `unshare`/`clone` with CLONE_NEWUSER (EPERM), and
`clone3` (ENOSYS, whose flags a filter cannot read; libc falls back to `clone`), like Docker's
default profile. Everything else is allowed. Architectures other than x86-64 and arm64 get no
filter (`None`).
"""

from __future__ import annotations

import errno
import os
import platform
import struct

CLONE_NEWUSER = 0x10000000
X32_SYSCALL_BIT = 0x40000000
# machine -> (AUDIT_ARCH, clone, unshare, clone3)
ARCHES = {
    "x86_64": (0xC000003E, 56, 272, 435),
    "aarch64": (0xC00000B7, 220, 97, 435),
}
LD_ABS_W, JEQ, JGE, JSET, RET = 0x20, 0x15, 0x35, 0x45, 0x06
ALLOW, ERRNO = 0x7FFF0000, 0x00050000
ARCH_OFFSET, NR_OFFSET, ARG0_OFFSET = 4, 0, 16  # struct seccomp_data; arg0's low 32 bits (little-endian)


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def no_user_namespaces_filter(machine: str | None = None) -> bytes | None:
    arch = ARCHES.get(machine or platform.machine())
    if arch is None:
        return None
    audit_arch, clone, unshare, clone3 = arch
    return b"".join([
        _op(LD_ABS_W, ARCH_OFFSET),                 # 0
        _op(JEQ, audit_arch, 0, 5),                 # 1: another ABI -> 7 allow (not ours to judge)
        _op(LD_ABS_W, NR_OFFSET),                   # 2
        _op(JGE, X32_SYSCALL_BIT, 8, 0),            # 3: x32 numbers -> 12 ENOSYS
        _op(JEQ, clone3, 7, 0),                     # 4: -> 12 ENOSYS
        _op(JEQ, unshare, 2, 0),                    # 5: -> 8 check flags
        _op(JEQ, clone, 1, 0),                      # 6: -> 8 check flags
        _op(RET, ALLOW),                            # 7
        _op(LD_ABS_W, ARG0_OFFSET),                 # 8
        _op(JSET, CLONE_NEWUSER, 1, 0),             # 9: -> 11 EPERM
        _op(RET, ALLOW),                            # 10
        _op(RET, ERRNO | errno.EPERM),              # 11
        _op(RET, ERRNO | errno.ENOSYS),             # 12
    ])


def filter_fd() -> int | None:
    """A memfd holding the filter, positioned at its start, for `bwrap --seccomp FD` (caller closes it)."""
    program = no_user_namespaces_filter()
    if program is None:
        return None
    fd = os.memfd_create("troupe-seccomp", 0)  # not CLOEXEC-free: subprocess's pass_fds makes it inheritable
    os.write(fd, program)
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
