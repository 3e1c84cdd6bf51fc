"""Which local network interface holds a node's address, for gloo on several hosts.

Ray knows a node by its IP (`--node-ip-address`), but gloo binds by interface name (GLOO_SOCKET_IFNAME);
left alone it binds to whatever the host name resolves to, often 127.0.0.1 (an /etc/hosts line such as
"127.0.0.1 vm"), and a rank on another host then connects to its own loopback and waits forever. Linux and
IPv4 only (SIOCGIFADDR reads an interface's primary address): elsewhere the answer is None and gloo keeps
its own choice.
"""

from __future__ import annotations

import fcntl
import socket
import struct

_SIOCGIFADDR = 0x8915  # linux/sockios.h


def interface_of(ip: str) -> str | None:
    """The name of the interface whose primary IPv4 address is `ip`, or None."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        for _, name in socket.if_nameindex():
            try:
                answer = fcntl.ioctl(probe.fileno(), _SIOCGIFADDR, struct.pack("256s", name.encode()[:15]))
            except OSError:  # an interface without an IPv4 address
                continue
            if socket.inet_ntoa(answer[20:24]) == ip:
                return name
    return None
