"""What counts as the database being away (faults issue, point 1): the caller answers
``service_unavailable`` and retries later, instead of dropping what it meant to write."""

from __future__ import annotations

import asyncpg
import pytest

from openwork_core.storage.errors import database_unavailable


@pytest.mark.parametrize(
    "exc",
    [
        OSError("connection refused"),
        TimeoutError(),
        asyncpg.InterfaceError("connection is closed"),
        asyncpg.InternalClientError(
            "cannot switch to state 15; another operation (2) is in progress"
        ),
        asyncpg.exceptions.ConnectionDoesNotExistError("connection was closed"),
        asyncpg.exceptions.AdminShutdownError(
            "terminating connection due to administrator command"
        ),
    ],
    ids=type,
)
def test_an_outage_or_a_connection_it_broke_is_the_database_being_unavailable(
    exc: BaseException,
) -> None:
    assert database_unavailable(exc)


def test_a_refusal_of_the_write_itself_is_not_an_outage() -> None:
    assert not database_unavailable(asyncpg.UniqueViolationError("duplicate key"))
    assert not database_unavailable(ValueError("bad row"))


def test_a_wrapped_outage_is_still_an_outage() -> None:
    outer = RuntimeError("could not write")
    outer.__cause__ = OSError("reset by peer")
    assert database_unavailable(outer)
