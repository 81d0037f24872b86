"""The approval gate of a registry tool call (permissions-sandbox.md §5, session-runtime.md §5).

``authorize`` is pure: it reads the call's pre-execution facts (``FinalizedToolset.prepare``),
the session mode and whether anyone can answer a card, and returns one ``Verdict``:

1. a write target in a hard-protected path -> rule denial (source ``builtin``);
   an MCP tool call that asks first (its server's ``approval``) -> a card showing the server,
   the tool and the arguments (non-interactive: denial);
2. an escalation -> denial when the justification is empty or the grants are invalid or add
   nothing (a network request adds something for bash only); denial (source
   ``non_interactive``) when nobody can approve; else a card (showing the network request);
3. a dangerous bash command in mode ``auto`` -> a card (non-interactive: denial);
4. otherwise run in the session mode's policy.

A card's answer goes through ``decide``: ``allow_once`` runs with the card's grants (and network)
for that call only (nothing is stored); ``deny`` is a ``denied`` result and the Turn fails ``permission_denied``.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol, TypeAlias

from openwork_chat_state.messages import JsonObject
from openwork_core.ids import SessionId, ToolCallId, TurnId
from openwork_core.session.wire_fields import OMIT_WHEN_NONE
from openwork_tools.context import ToolSessionContext
from openwork_tools.modes import SandboxMode
from openwork_tools.paths import is_credential, is_hard_protected, is_under
from openwork_tools.policy import Access, Actor, GrantScope, PathGrant, SandboxPolicy
from openwork_tools.prepared import DangerMatch, PreparedCall
from openwork_tools.sandbox.bwrap import workspace_writable

JUSTIFICATION_REQUIRED_TEXT = (
    "[sandbox: sandboxPermissions needs a one-sentence justification that the user will read; "
    "retry with it]"
)
NON_INTERACTIVE_TEXT = (
    "[sandbox: this call needs the user's approval, but nobody can approve it in this session "
    "(it is not interactive); do not retry it — continue without it, or report the command or "
    "paths you need]"
)
USER_DENIED_TEXT = "[sandbox: the user denied this call]"
NO_GRANTS_TEXT = "[sandbox: sandboxPermissions lists no usable paths]"


NOTHING_NEW_ERROR = (
    "sandboxPermissions asks for nothing this call cannot already do; retry without it"
)


def grant_error_text(error: str) -> str:
    """A grant validation failure (permissions-sandbox.md §5 step 2)."""
    return f"[sandbox: {error}]"


# -- path facts shown on the card --------------------------------------------------------------


class PathTier(enum.StrEnum):
    HARD_PROTECTED = "hard_protected"
    SENSITIVE = "sensitive"
    CREDENTIAL = "credential"
    NORMAL = "normal"


@dataclass(frozen=True, slots=True)
class PathFacts:
    tier: PathTier
    in_workspace: bool


class PathClassifier(Protocol):
    def __call__(self, path: Path) -> PathFacts: ...


def session_path_classifier(session: ToolSessionContext) -> PathClassifier:
    """Tier and workspace membership from the session's canonical roots (no file access).

    ``sensitive`` is never reported: openwork_tools defines no sensitive tier yet."""

    def classify(path: Path) -> PathFacts:
        if is_hard_protected(path, session):
            tier = PathTier.HARD_PROTECTED
        elif is_credential(path, session):
            tier = PathTier.CREDENTIAL
        else:
            tier = PathTier.NORMAL
        return PathFacts(tier, is_under(path, session.working_directory))

    return classify


class GrantNovelty(Protocol):
    def __call__(self, grant: PathGrant, actor: Actor) -> bool: ...


def session_grant_novelty(session: ToolSessionContext, mode: SandboxMode) -> GrantNovelty:
    """Whether a grant widens what ``actor`` may already do under ``mode`` (§1, §5 step 2):
    reads are open everywhere but credential directories; file tools write the workspace in both
    modes, bash only in auto (never when the workspace holds $HOME); temp dirs are writable."""
    bash_writes_workspace = workspace_writable(session, SandboxPolicy(mode=mode))

    def adds_access(grant: PathGrant, actor: Actor) -> bool:
        path = grant.path
        if grant.access is Access.READ:
            return is_credential(path, session)
        if is_under(path, session.working_directory):  # the workspace rule wins over temp dirs
            return actor is Actor.PROCESS and not bash_writes_workspace
        return not any(is_under(path, temp) for temp in session.temp_dirs)

    return adds_access


def _always_new(grant: PathGrant, actor: Actor) -> bool:
    del grant, actor
    return True


# -- the card (written in camelCase by session/wire.py) ----------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class CardPath:
    path: str
    access: Access
    scope: GrantScope
    tier: PathTier
    in_workspace: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class CardDanger:
    """``start``/``end`` are UTF-16 offsets into ``command``."""

    key: str
    start: int
    end: int


@dataclass(frozen=True, slots=True, kw_only=True)
class CardMcpCall:
    """An MCP tool call (issue 27 point 4): the server, its own name of the tool, the arguments."""

    server: str
    tool: str
    arguments: JsonObject


@dataclass(frozen=True, slots=True, kw_only=True)
class ApprovalCard:
    """On the wire optional fields are omitted when absent; ``paths`` is always there."""

    mode: SandboxMode
    command: str | None = field(default=None, metadata=OMIT_WHEN_NONE)
    justification: str | None = field(default=None, metadata=OMIT_WHEN_NONE)
    paths: tuple[CardPath, ...] = ()
    network: bool | None = field(default=None, metadata=OMIT_WHEN_NONE)
    """``True`` when the call asks for the network (issue 22; omitted otherwise, and ``paths``
    may then be empty)."""
    danger: CardDanger | None = field(default=None, metadata=OMIT_WHEN_NONE)
    previous_denial: str | None = field(default=None, metadata=OMIT_WHEN_NONE)
    mcp: CardMcpCall | None = field(default=None, metadata=OMIT_WHEN_NONE)


@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionRequest:
    """Carried by ``permission_requested`` and the snapshot's ``pendingPermission``."""

    session_id: SessionId
    turn_id: TurnId
    tool_call_id: ToolCallId
    provider_call_id: str
    tool_name: str
    card: ApprovalCard


class PermissionDecision(enum.StrEnum):
    """Only two buttons: no session-wide approval, the card never changes the mode."""

    ALLOW_ONCE = "allow_once"
    DENY = "deny"


# -- verdicts ----------------------------------------------------------------------------------


class DenialSource(enum.StrEnum):
    BUILTIN = "builtin"
    NON_INTERACTIVE = "non_interactive"
    USER = "user"


@dataclass(frozen=True, slots=True)
class Run:
    """Run under the session mode plus ``grants`` and, when ``network``, the network (this call
    only)."""

    grants: tuple[PathGrant, ...] = ()
    network: bool = False
    kind: Literal["run"] = "run"


@dataclass(frozen=True, slots=True)
class RuleDenial:
    """A ``denied`` result with ``text``; the Turn continues unless ``source`` is ``user``."""

    text: str
    source: DenialSource
    kind: Literal["rule_denial"] = "rule_denial"


@dataclass(frozen=True, slots=True)
class NeedsCard:
    """Ask the user (phase ``waiting_permission``); ``grants`` apply if allowed once."""

    card: ApprovalCard
    grants: tuple[PathGrant, ...] = ()
    network: bool = False
    kind: Literal["needs_card"] = "needs_card"


Verdict: TypeAlias = Run | RuleDenial | NeedsCard


def _card_danger(danger: DangerMatch | None) -> CardDanger | None:
    return (
        None if danger is None else CardDanger(key=danger.key, start=danger.start, end=danger.end)
    )


def _card_paths(grants: tuple[PathGrant, ...], classify: PathClassifier) -> tuple[CardPath, ...]:
    paths = []
    for grant in grants:
        facts = classify(grant.path)
        paths.append(
            CardPath(
                path=str(grant.path),
                access=grant.access,
                scope=grant.scope,
                tier=facts.tier,
                in_workspace=facts.in_workspace,
            )
        )
    return tuple(paths)


def authorize(
    prepared: PreparedCall | None,
    *,
    mode: SandboxMode,
    interactive: bool,
    sandbox_available: bool,
    previous_denial: str | None,
    classify: PathClassifier,
    novelty: GrantNovelty = _always_new,
) -> Verdict:
    """permissions-sandbox.md §5, in its order. ``prepared`` is None for read-only tools, unknown
    names and unparsable input (the tool itself then reports the input error)."""
    if prepared is None:
        return Run()
    if prepared.protected_target is not None:
        return RuleDenial(prepared.protected_target, DenialSource.BUILTIN)
    if (external := prepared.external) is not None:  # an MCP tool that asks (docs/mcp.md)
        if not interactive:
            return RuleDenial(NON_INTERACTIVE_TEXT, DenialSource.NON_INTERACTIVE)
        call = CardMcpCall(server=external.server, tool=external.tool, arguments=external.arguments)
        return NeedsCard(ApprovalCard(mode=mode, mcp=call))
    # Without a sandbox there are no escalation parameters and no danger detection (§2, §4).
    escalation = prepared.escalation if sandbox_available else None
    danger = prepared.danger if sandbox_available else None
    if escalation is not None:
        if not escalation.justification.strip():
            return RuleDenial(JUSTIFICATION_REQUIRED_TEXT, DenialSource.BUILTIN)
        if escalation.error is not None:
            return RuleDenial(grant_error_text(escalation.error), DenialSource.BUILTIN)
        if not escalation.grants and not escalation.network:
            return RuleDenial(NO_GRANTS_TEXT, DenialSource.BUILTIN)
        network = escalation.network and prepared.actor is Actor.PROCESS
        if not network and not any(novelty(g, prepared.actor) for g in escalation.grants):
            return RuleDenial(grant_error_text(NOTHING_NEW_ERROR), DenialSource.BUILTIN)
        if not interactive:
            return RuleDenial(NON_INTERACTIVE_TEXT, DenialSource.NON_INTERACTIVE)
        card = ApprovalCard(
            mode=mode,
            command=prepared.command,
            justification=escalation.justification,
            paths=_card_paths(escalation.grants, classify),
            network=True if network else None,
            danger=_card_danger(danger),
            previous_denial=previous_denial,
        )
        return NeedsCard(card, escalation.grants, network)
    if danger is not None and mode is SandboxMode.AUTO:
        if not interactive:
            return RuleDenial(NON_INTERACTIVE_TEXT, DenialSource.NON_INTERACTIVE)
        card = ApprovalCard(
            mode=mode,
            command=prepared.command,
            danger=_card_danger(danger),
            previous_denial=previous_denial,
        )
        return NeedsCard(card)
    return Run()


def decide(pending: NeedsCard, decision: PermissionDecision) -> Run | RuleDenial:
    """The user's answer: allow once runs with the card's grants; deny fails the Turn
    ``permission_denied`` after a ``denied`` result."""
    if decision is PermissionDecision.ALLOW_ONCE:
        return Run(pending.grants, pending.network)
    return RuleDenial(USER_DENIED_TEXT, DenialSource.USER)
