"""The one error root of the product (docs/architecture.md "Errors", DESIGN.md §4.5).

Every package keeps its own base error and subclasses, each with a stable snake_case ``code`` and
the HTTP status the daemon answers with (``http_status``). The root lives in the lowest layer and
imports nothing of the project, so every package, ``openwork_tools`` included, can derive from it
without an import cycle. Two shared refusals live here because several packages raise them with
one meaning: ``InvalidRequest`` (``invalid_request``) and ``NotFound`` (``not_found``).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import JsonValue


class OpenWorkError(Exception):
    """Base of every product error: ``code`` names it on the wire, ``http_status`` is the status
    the daemon's one exception handler answers with."""

    code: ClassVar[str] = "openwork_error"
    http_status: ClassVar[int] = 500

    @property
    def public_message(self) -> str:
        """The envelope's ``message``: for humans, never a library's or the database's text."""
        return str(self) or self.code

    def envelope_extra(self) -> dict[str, JsonValue]:
        """Fields added to the envelope beside ``code`` and ``message`` (e.g. ``turn_id``)."""
        return {}


class InvalidRequest(OpenWorkError):
    """The caller's request cannot be served as sent (daemon-api.md §2)."""

    code = "invalid_request"
    http_status = 400


class NotFound(OpenWorkError):
    """The named record does not exist (daemon-api.md §2: unknown session or turn → 404)."""

    code = "not_found"
    http_status = 404
