"""Pre-execution facts for Core's approval gate (tools.md §6, permissions-sandbox.md §4, §5)."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from openwork_tools.context import ToolSessionContext
from openwork_tools.paths import is_hard_protected
from openwork_tools.policy import NETWORK_GRANT_LINE, Access, Actor, GrantScope, PathGrant

MAX_GRANTS = 16
NETWORK_ALREADY_ON_ERROR = "bash already has the network; retry without sandboxPermissions"


class GrantInput(BaseModel):
    """One path this call needs; write access implies read."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    path: str = Field(description="Absolute path.")
    access: Literal["read", "write"]
    scope: Literal["exact", "subtree"]


class SandboxPermissionsInput(BaseModel):
    """Paths (up to 16) and/or the network for this one call; unknown fields are rejected."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    paths: Annotated[list[GrantInput], Field(max_length=MAX_GRANTS)] = Field(default_factory=list)
    network: bool = Field(default=False, description=NETWORK_GRANT_LINE)

    @model_validator(mode="after")
    def _asks_for_something(self) -> SandboxPermissionsInput:
        if not self.paths and not self.network:
            raise ValueError("sandboxPermissions needs paths, network, or both")
        return self


@dataclass(frozen=True, slots=True)
class Escalation:
    """Normalised grants, justification and network request. ``error`` is the grant validation
    failure, if any: Core denies with ``[sandbox: <error>]``; an empty justification is Core's own
    denial."""

    grants: tuple[PathGrant, ...]
    justification: str
    error: str | None = None
    network: bool = False


@dataclass(frozen=True, slots=True)
class DangerMatch:
    """A dangerous bash pattern; ``start``/``end`` are UTF-16 offsets into the command."""

    key: str
    start: int
    end: int


@dataclass(frozen=True, slots=True, kw_only=True)
class PreparedCall:
    actor: Actor
    command: str | None = None
    escalation: Escalation | None = None
    danger: DangerMatch | None = None
    protected_target: str | None = None


def _too_broad(path: Path, session: ToolSessionContext) -> bool:
    return path == Path("/") or path == session.home or path in session.home.parents


def normalise_escalation(
    permissions: SandboxPermissionsInput | None,
    justification: str | None,
    session: ToolSessionContext,
) -> Escalation | None:
    """None when no permissions were asked for, or when the sandbox is unavailable."""
    if permissions is None or not session.sandbox.available:
        return None
    grants: list[PathGrant] = []
    error: str | None = None
    for item in permissions.paths:
        if not os.path.isabs(item.path):
            error = error or f"sandboxPermissions paths must be absolute: {item.path}"
            continue
        real = Path(os.path.realpath(os.path.normpath(item.path)))
        scope = GrantScope(item.scope)
        access = Access(item.access)
        if access is Access.WRITE and is_hard_protected(real, session):
            error = error or f"{real} is protected and cannot be granted"
        elif scope is GrantScope.SUBTREE and _too_broad(real, session):
            error = error or f"subtree access to {real} is too broad; list narrower paths"
        grants.append(PathGrant(real, access, scope))
    network = permissions.network and not session.settings.network_on
    if permissions.network and not network and not grants:
        error = error or NETWORK_ALREADY_ON_ERROR
    return Escalation(tuple(dict.fromkeys(grants)), (justification or "").strip(), error, network)
