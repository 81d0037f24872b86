"""The loopback Host rule (daemon-api.md §2)."""

from __future__ import annotations

import pytest

from openwork_core.daemon.security import host_is_loopback


@pytest.mark.parametrize(
    "host",
    [
        "127.0.0.1:7420",
        "localhost",
        "localhost:1",
        "[::1]:7420",
        "::1",
        "127.1.2.3",
        "app.localhost",
    ],
)
def test_loopback_names_and_addresses_are_accepted(host: str) -> None:
    assert host_is_loopback(host)


@pytest.mark.parametrize(
    "host",
    ["example.com", "10.0.0.1:7420", "[2001:db8::1]:80", "", "localhost.evil.com", "0.0.0.0"],
)
def test_other_hosts_are_refused(host: str) -> None:
    assert not host_is_loopback(host)
