"""Sessions (session-runtime.md): the actor and its command union, the turn runner, the storage
port, the registry of live sessions and the sub-agent host (docs/architecture.md).

Submodules are imported directly (``openwork_core.session.actor`` …); the names below are the
package's public surface."""

from __future__ import annotations

from typing import TYPE_CHECKING

from openwork_core.lazy_exports import lazy_getattr

if TYPE_CHECKING:
    from openwork_core.session.commands import SessionCommand, SessionStatus
    from openwork_core.session.directory import SessionDirectory
    from openwork_core.session.handle import SessionHandle
    from openwork_core.session.storage import (
        CompactionStorage,
        OutgoingMessage,
        SessionStorage,
        TurnClosing,
        TurnOpening,
    )
    from openwork_core.session.turn_accepted import TurnAccepted

_EXPORTS = {
    "CompactionStorage": "openwork_core.session.storage",
    "OutgoingMessage": "openwork_core.session.storage",
    "SessionCommand": "openwork_core.session.commands",
    "SessionDirectory": "openwork_core.session.directory",
    "SessionHandle": "openwork_core.session.handle",
    "SessionStatus": "openwork_core.session.commands",
    "SessionStorage": "openwork_core.session.storage",
    "TurnAccepted": "openwork_core.session.turn_accepted",
    "TurnClosing": "openwork_core.session.storage",
    "TurnOpening": "openwork_core.session.storage",
}
"""Each public name's module: nothing is imported until a name is used."""

__all__ = [
    "CompactionStorage",
    "OutgoingMessage",
    "SessionCommand",
    "SessionDirectory",
    "SessionHandle",
    "SessionStatus",
    "SessionStorage",
    "TurnAccepted",
    "TurnClosing",
    "TurnOpening",
]

if not TYPE_CHECKING:  # for mypy the names are the imports above: a misspelt one is an error
    __getattr__ = lazy_getattr(__name__, _EXPORTS, globals())
