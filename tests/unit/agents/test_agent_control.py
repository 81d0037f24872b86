"""AgentControl: task-name registry and turn slots (multi-agent.md §2, §3, §7)."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from openwork_core.agents.control import (
    DEFAULT_MAX_ACTIVE_SUB_AGENT_TURNS,
    AgentControl,
    TurnSlots,
    is_valid_task_name,
)
from openwork_core.agents.errors import (
    AgentLimitReached,
    DuplicateTaskName,
    InvalidTaskName,
    UnknownAgent,
)


@dataclass(frozen=True)
class _Child:
    id: str
    task_name: str


@pytest.mark.parametrize("name", ["a", "scan_auth", "a1_b2", "a" + "b" * 47])
def test_task_names_matching_the_pattern_are_valid(name: str) -> None:
    """§3: ``^[a-z][a-z0-9_]{0,47}$``, 48 characters max."""
    assert is_valid_task_name(name)


@pytest.mark.parametrize(
    "name",
    ["", "A", "Scan", "1scan", "_scan", "scan-auth", "scan auth", "a" + "b" * 48, "scan\n", "sçan"],
)
def test_malformed_task_names_are_rejected_before_any_reservation(name: str) -> None:
    """§3, §10: malformed names rejected before any row; 49 characters is too long."""
    control = AgentControl("root")
    assert not is_valid_task_name(name)
    with pytest.raises(InvalidTaskName) as caught:
        control.reserve(name)
    assert caught.value.body.startswith("invalid_task_name: ")
    assert control.task_names() == ()


def test_a_reserved_name_cannot_be_reserved_again_before_its_row_exists() -> None:
    """§3: the registry reserves the name before the row."""
    control = AgentControl("root")
    control.reserve("scan")
    with pytest.raises(DuplicateTaskName) as caught:
        control.reserve("scan")
    assert caught.value.body.startswith("duplicate_task_name: ")


def test_a_bound_name_cannot_be_reserved_again() -> None:
    """§3: duplicate name under one root rejected."""
    control = AgentControl("root")
    control.reserve("scan")
    control.bind("scan", "ses_1")
    with pytest.raises(DuplicateTaskName):
        control.reserve("scan")


def test_a_released_name_can_be_reserved_again() -> None:
    """§5: a failed spawn releases the name."""
    control = AgentControl("root")
    control.reserve("scan")
    control.release("scan")
    control.reserve("scan")
    control.bind("scan", "ses_2")
    control.release("scan")
    assert control.session_of("scan") is None
    control.reserve("scan")


def test_bind_maps_the_name_to_the_child_session_and_only_bound_names_are_listed() -> None:
    """§2: ``task_name -> SessionId``; the model never sees SessionIds."""
    control = AgentControl("root")
    control.reserve("zeta")
    control.reserve("alpha")
    control.reserve("pending")
    control.bind("zeta", "ses_z")
    control.bind("alpha", "ses_a")
    assert control.session_of("alpha") == "ses_a"
    assert control.session_of("pending") is None
    assert control.task_names() == ("alpha", "zeta")
    assert control.task_of("ses_z") == "zeta"
    assert control.task_of("ses_unknown") is None


def test_binding_an_unreserved_name_is_a_programming_error() -> None:
    control = AgentControl("root")
    with pytest.raises(KeyError):
        control.bind("scan", "ses_1")


def test_require_session_of_an_unknown_name_raises_unknown_agent() -> None:
    """§5: followup_task / interrupt_agent on an unknown name → ``unknown_agent``."""
    control = AgentControl("root")
    with pytest.raises(UnknownAgent) as caught:
        control.require_session("ghost")
    assert caught.value.body == "unknown_agent: no sub-agent named 'ghost' exists in this session"


def test_restore_binds_every_persisted_child_without_taking_slots() -> None:
    """§2: restored identities, no sessions started, no slots taken."""
    control = AgentControl.restore("root", [_Child("ses_b", "beta"), _Child("ses_a", "alpha")])
    assert control.task_names() == ("alpha", "beta")
    assert control.require_session("beta") == "ses_b"
    assert control.slots.active == 0
    assert control.max_active_turns == DEFAULT_MAX_ACTIVE_SUB_AGENT_TURNS == 3
    with pytest.raises(DuplicateTaskName):
        control.reserve("alpha")


def test_the_fourth_concurrent_turn_slot_is_refused_with_agent_limit_reached() -> None:
    """§7, §10: default 3 active child Turns; the 4th → ``agent_limit_reached``."""
    slots = TurnSlots()
    taken = [slots.acquire() for _ in range(3)]
    assert slots.active == 3
    with pytest.raises(AgentLimitReached) as caught:
        slots.acquire()
    assert caught.value.body.startswith("agent_limit_reached: at most 3 sub-agent turns")
    taken[0].release()
    assert slots.active == 2
    slots.acquire()
    assert slots.active == 3


def test_a_slot_is_returned_exactly_once_however_often_release_is_called() -> None:
    """§7: the slot is returned however the Turn ends (release in ``finally`` may repeat)."""
    slots = TurnSlots(limit=2)
    slot = slots.acquire()
    other = slots.acquire()
    assert slot.release() is True
    assert slot.release() is False
    assert slots.active == 1
    assert other.release() is True, "the other slot was still taken"
    assert slots.active == 0


def test_a_slot_is_returned_when_the_turn_raises() -> None:
    """§7: returned however the Turn ends."""
    slots = TurnSlots(limit=1)

    def run_turn() -> None:
        slot = slots.acquire()
        try:
            raise RuntimeError("turn failed")
        finally:
            slot.release()

    with pytest.raises(RuntimeError):
        run_turn()
    assert slots.active == 0


def test_the_limit_comes_from_max_active_turns() -> None:
    """§5: the number comes from ``AgentControl::max_active_turns``."""
    control = AgentControl("root", max_active_turns=1)
    control.slots.acquire()
    with pytest.raises(AgentLimitReached):
        control.slots.acquire()
    with pytest.raises(ValueError, match="at least 1"):
        TurnSlots(limit=0)
