"""Loopback ports for tests that need one nobody answers on."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def refused_port() -> Iterator[int]:
    """A loopback port that refuses every connection while the block runs: bound, never
    listening, and without ``SO_REUSEADDR``, so no other process (another test's server under
    xdist) can bind it meanwhile. A port bound, read and closed again is free for the next
    ``bind(0)`` at once: a parallel test's fake provider once answered there."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield int(held.getsockname()[1])
