"""launch/node_address.py: the interface gloo binds to on a Ray node is the one holding the node's address
(the two-host run that needs it is tests/test_ray_two_hosts.py)."""

import sys

import pytest

from troupe.launch.node_address import interface_of

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="SIOCGIFADDR is Linux's; elsewhere interface_of is None by design")


def test_the_loopback_address_is_on_lo():
    assert interface_of("127.0.0.1") == "lo"


def test_an_address_on_no_interface_has_none():
    assert interface_of("203.0.113.77") is None  # TEST-NET-3: documentation only, on no interface here
