"""One error root (DESIGN.md §4.5, docs/architecture.md "Errors"): every product error derives
from ``OpenWorkError``, carries a stable snake_case ``code`` and an HTTP status, and a code
belongs to one class (a subclass may restate its parent's code, never a sibling's)."""

from __future__ import annotations

import importlib
import pkgutil
import re

import pytest

import openwork_chat_state
import openwork_core
import openwork_tools
from openwork_chat_state.error_root import OpenWorkError

SNAKE = re.compile(r"[a-z][a-z0-9]*(?:_[a-z0-9]+)*")
PACKAGES = (openwork_chat_state, openwork_core, openwork_tools)
# package base errors that must hang under the root (issue 10 point 5)
PACKAGE_ROOTS = (
    "openwork_chat_state.errors.ChatStateError",
    "openwork_tools.errors.ToolsError",
    "openwork_core.storage.errors.StorageError",
    "openwork_core.session.errors.SessionError",
    "openwork_core.session.compaction.errors.CompactionError",
    "openwork_core.context.errors.ContextAssemblyError",
    "openwork_core.context.world_state.errors.WorldStateError",
    "openwork_core.agents.errors.AgentError",
    "openwork_core.plan.errors.PlanError",
    "openwork_core.skills.discovery.SkillError",
    "openwork_core.skills.selection.SkillSelectionError",
    "openwork_core.skills.enablement.InvalidSkillName",
    "openwork_core.session.toolset.TurnToolsetError",
    "openwork_core.session.file_changes.UnknownFileChange",
    "openwork_core.models.capabilities.CapabilityError",
    "openwork_core.session.runner.model_step.ModelProtocolViolation",
    "openwork_core.daemon.errors.PayloadTooLarge",
)


def _import_everything() -> None:
    for package in PACKAGES:
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            if info.name.endswith("__main__"):
                continue
            importlib.import_module(info.name)


def _all_errors() -> list[type[OpenWorkError]]:
    _import_everything()
    seen: list[type[OpenWorkError]] = []
    stack = [OpenWorkError]
    while stack:
        cls = stack.pop()
        if cls not in seen:
            seen.append(cls)
            stack.extend(cls.__subclasses__())
    return seen


@pytest.mark.parametrize("dotted", PACKAGE_ROOTS)
def test_each_package_base_error_derives_from_the_one_root(dotted: str) -> None:
    module, _, name = dotted.rpartition(".")
    cls = getattr(importlib.import_module(module), name)
    assert issubclass(cls, OpenWorkError)


def test_every_error_has_a_snake_case_code_and_an_http_status() -> None:
    for cls in _all_errors():
        assert SNAKE.fullmatch(str(cls.code)), cls
        assert 400 <= cls.http_status <= 599, cls


def test_a_code_is_defined_by_one_class_or_restated_only_by_its_subclasses() -> None:
    """Two classes that each define the same code must be one line of inheritance."""
    owners: dict[str, list[type[OpenWorkError]]] = {}
    for cls in _all_errors():
        if "code" in vars(cls):
            owners.setdefault(str(cls.code), []).append(cls)
    clashes = {
        code: [c.__qualname__ for c in classes]
        for code, classes in owners.items()
        if any(
            not (issubclass(a, b) or issubclass(b, a))
            for i, a in enumerate(classes)
            for b in classes[i + 1 :]
        )
    }
    assert clashes == {}
    assert len(owners) > 80  # the whole product was imported, not one package


def test_world_state_errors_carry_the_turn_failure_code_they_fail_with() -> None:
    """context-window.md §3: the class names the Turn's failure code; no string mapping."""
    from openwork_core.context.world_state import errors as ws
    from openwork_core.session.outcome import FailureCode

    for cls in ws.WorldStateError.__subclasses__():
        assert isinstance(cls.code, FailureCode)
