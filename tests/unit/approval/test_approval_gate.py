"""The approval gate (permissions-sandbox.md §5, session-runtime.md §5)."""

from __future__ import annotations

import json
from pathlib import Path

import orjson
import pytest

from openwork_core.session.approval import (
    JUSTIFICATION_REQUIRED_TEXT,
    NON_INTERACTIVE_TEXT,
    NOTHING_NEW_ERROR,
    USER_DENIED_TEXT,
    ApprovalCard,
    CardDanger,
    CardPath,
    DenialSource,
    NeedsCard,
    PathFacts,
    PathTier,
    PermissionDecision,
    PermissionRequest,
    RuleDenial,
    Run,
    Verdict,
    authorize,
    decide,
    grant_error_text,
    session_grant_novelty,
    session_path_classifier,
)
from openwork_core.session.updates import PermissionRequested, SessionUpdateEnvelope
from openwork_core.session.wire import wire_json
from openwork_tools.builtin.registry import builtin_registry
from openwork_tools.context import ToolSessionContext
from openwork_tools.modes import SandboxMode, SandboxStatus
from openwork_tools.policy import Access, Actor, GrantScope, PathGrant
from openwork_tools.prepared import DangerMatch, Escalation, PreparedCall
from openwork_tools.registry import ToolsetConfig

PROTECTED = (
    "[sandbox: /home/u/.openwork/x is protected and cannot be written in any mode; do not retry]"
)
GRANT = PathGrant(Path("/data/out"), Access.WRITE, GrantScope.SUBTREE)
DANGER = DangerMatch(key="rm_recursive_or_force", start=0, end=5)


def _facts(path: Path) -> PathFacts:
    return PathFacts(PathTier.NORMAL, in_workspace=False)


def _authorize(
    prepared: PreparedCall | None,
    *,
    mode: SandboxMode = SandboxMode.AUTO,
    interactive: bool = True,
    sandbox_available: bool = True,
    previous_denial: str | None = None,
) -> Verdict:
    return authorize(
        prepared,
        mode=mode,
        interactive=interactive,
        sandbox_available=sandbox_available,
        previous_denial=previous_denial,
        classify=_facts,
    )


def _bash(
    command: str = "rm -rf build",
    *,
    escalation: Escalation | None = None,
    danger: DangerMatch | None = None,
) -> PreparedCall:
    return PreparedCall(actor=Actor.PROCESS, command=command, escalation=escalation, danger=danger)


def _escalation(
    justification: str = "Build output goes there.", error: str | None = None
) -> Escalation:
    return Escalation(grants=(GRANT,), justification=justification, error=error)


# -- step 4: nothing to ask ------------------------------------------------------------------


def test_a_read_only_call_runs_without_grants() -> None:
    """§5 step 4: no pre-execution facts -> run in the session mode's policy."""
    assert _authorize(None) == Run()


def test_a_plain_command_runs_in_either_mode() -> None:
    """§5 step 4."""
    for mode in SandboxMode:
        assert _authorize(_bash("ls -la"), mode=mode) == Run()


# -- step 1: protected target ------------------------------------------------------------------


def test_a_protected_write_target_is_a_builtin_denial_in_every_mode() -> None:
    """§5 step 1: rule denial, source builtin, no card, even with an escalation and when
    nobody is interactive."""
    prepared = PreparedCall(
        actor=Actor.FILE_TOOL, protected_target=PROTECTED, escalation=_escalation()
    )
    for mode in SandboxMode:
        for interactive in (True, False):
            verdict = _authorize(prepared, mode=mode, interactive=interactive)
            assert verdict == RuleDenial(PROTECTED, DenialSource.BUILTIN)


def test_a_write_into_git_hooks_is_denied_by_the_gate(tmp_path: Path) -> None:
    """§5 step 1 end to end with the write tool's own facts (tools.md §6)."""
    ws = tmp_path / "ws"
    (ws / ".git" / "hooks").mkdir(parents=True)
    session = ToolSessionContext(
        working_directory=ws, sandbox=SandboxStatus(available=True), home=tmp_path
    )
    toolset = builtin_registry().finalize(ToolsetConfig(("write",)), session)
    prepared = toolset.prepare(
        "write", json.dumps({"path": ".git/hooks/pre-commit", "content": "x"})
    )
    verdict = _authorize(prepared)
    assert isinstance(verdict, RuleDenial) and verdict.source is DenialSource.BUILTIN
    real = (ws / ".git" / "hooks" / "pre-commit").resolve()
    assert verdict.text == (
        f"[sandbox: {real} is protected and cannot be written in any mode; do not retry]"
    )


# -- step 2: escalation ------------------------------------------------------------------------


def test_an_escalation_without_justification_is_denied_with_the_fixed_text() -> None:
    """§5 step 2: empty justification -> the fixed denial."""
    verdict = _authorize(_bash(escalation=_escalation(justification="  ")))
    assert verdict == RuleDenial(JUSTIFICATION_REQUIRED_TEXT, DenialSource.BUILTIN)
    assert verdict.text == (
        "[sandbox: sandboxPermissions needs a one-sentence justification that the user will "
        "read; retry with it]"
    )


def test_the_justification_is_checked_before_the_grants() -> None:
    """§5 step 2 order."""
    verdict = _authorize(_bash(escalation=_escalation(justification="", error="bad")))
    assert verdict == RuleDenial(JUSTIFICATION_REQUIRED_TEXT, DenialSource.BUILTIN)


def test_an_invalid_grant_is_denied_with_the_validation_error() -> None:
    """§5 step 2: grant validation failure -> ``[sandbox: <error>]``."""
    error = "subtree access to / is too broad; list narrower paths"
    verdict = _authorize(_bash(escalation=_escalation(error=error)))
    assert verdict == RuleDenial(f"[sandbox: {error}]", DenialSource.BUILTIN)


def test_an_escalation_in_a_non_interactive_session_is_denied_as_non_interactive() -> None:
    """§5 step 2: nobody can approve -> denial, source non_interactive."""
    verdict = _authorize(_bash(escalation=_escalation()), interactive=False)
    assert verdict == RuleDenial(NON_INTERACTIVE_TEXT, DenialSource.NON_INTERACTIVE)
    assert "nobody can approve" in NON_INTERACTIVE_TEXT


def test_a_valid_escalation_asks_with_a_card_carrying_its_grants() -> None:
    """§5 step 2: else card; the grants apply only if allowed once."""
    verdict = _authorize(
        _bash("cp a /data/out", escalation=_escalation()),
        mode=SandboxMode.ACCEPT_EDITS,
        previous_denial="[sandbox: file access denied under accept-edits mode]",
    )
    assert isinstance(verdict, NeedsCard)
    assert verdict.grants == (GRANT,)
    assert verdict.card == ApprovalCard(
        mode=SandboxMode.ACCEPT_EDITS,
        command="cp a /data/out",
        justification="Build output goes there.",
        paths=(
            CardPath(
                path="/data/out",
                access=Access.WRITE,
                scope=GrantScope.SUBTREE,
                tier=PathTier.NORMAL,
                in_workspace=False,
            ),
        ),
        previous_denial="[sandbox: file access denied under accept-edits mode]",
    )


def test_an_escalation_card_also_shows_a_detected_danger() -> None:
    """§5 card: ``danger?`` highlights the dangerous span of the command."""
    verdict = _authorize(_bash(escalation=_escalation(), danger=DANGER))
    assert isinstance(verdict, NeedsCard)
    assert verdict.card.danger == CardDanger(key="rm_recursive_or_force", start=0, end=5)


def test_without_a_sandbox_escalation_and_danger_are_ignored() -> None:
    """§2: unavailable -> no escalation parameters, danger detection skipped, no card."""
    prepared = _bash(escalation=_escalation(justification=""), danger=DANGER)
    assert _authorize(prepared, sandbox_available=False) == Run()


# -- step 3: dangerous command -------------------------------------------------------------------


def test_a_dangerous_command_in_auto_asks_with_a_danger_card() -> None:
    """§5 step 3: dangerous bash command and mode auto -> card."""
    verdict = _authorize(_bash(danger=DANGER), previous_denial=None)
    assert verdict == NeedsCard(
        ApprovalCard(
            mode=SandboxMode.AUTO,
            command="rm -rf build",
            danger=CardDanger(key="rm_recursive_or_force", start=0, end=5),
        )
    )


def test_a_dangerous_command_in_accept_edits_runs_without_a_separate_card() -> None:
    """§5 step 3: in accept-edits no separate danger card."""
    assert _authorize(_bash(danger=DANGER), mode=SandboxMode.ACCEPT_EDITS) == Run()


def test_a_dangerous_command_in_a_non_interactive_session_is_denied() -> None:
    """§5 step 3: non-interactive -> denial."""
    verdict = _authorize(_bash(danger=DANGER), interactive=False)
    assert verdict == RuleDenial(NON_INTERACTIVE_TEXT, DenialSource.NON_INTERACTIVE)


# -- decisions ---------------------------------------------------------------------------------


def test_allow_once_runs_with_the_cards_grants_only() -> None:
    """§5: grants apply to that single call only."""
    pending = _authorize(_bash(escalation=_escalation()))
    assert isinstance(pending, NeedsCard)
    assert decide(pending, PermissionDecision.ALLOW_ONCE) == Run((GRANT,))


def test_deny_is_a_user_denial() -> None:
    """session-runtime.md §5: deny -> denied result, Turn fails permission_denied."""
    pending = _authorize(_bash(danger=DANGER))
    assert isinstance(pending, NeedsCard)
    assert decide(pending, PermissionDecision.DENY) == RuleDenial(
        USER_DENIED_TEXT, DenialSource.USER
    )


def test_the_decision_has_exactly_two_wire_values() -> None:
    """§5: ``allow_once`` | ``deny``, no session-wide approval."""
    assert [d.value for d in PermissionDecision] == ["allow_once", "deny"]


# -- wire shapes -------------------------------------------------------------------------------


def _request_json(request: PermissionRequest) -> object:
    """What a client reads in ``permission_requested`` (the one wire serializer)."""
    envelope = SessionUpdateEnvelope(
        session_id="s1",
        turn_id="t1",
        sequence=1,
        occurred_at_ms=0,
        update=PermissionRequested(request=request),
    )
    return orjson.loads(wire_json(envelope))["update"]["request"]


def _card_json(card: ApprovalCard) -> object:
    request = PermissionRequest(
        session_id="s1",
        turn_id="t1",
        tool_call_id="tc_1",
        provider_call_id="call_1",
        tool_name="bash",
        card=card,
    )
    return _request_json(request)["card"]  # type: ignore[index]


def test_the_card_json_is_camel_case_and_omits_absent_fields() -> None:
    """§5: ApprovalCard{mode, command?, justification?, paths[], danger?, previousDenial?}."""
    full = ApprovalCard(
        mode=SandboxMode.ACCEPT_EDITS,
        command="rm -rf /data/out/x",
        justification="Clean the old output.",
        paths=(
            CardPath(
                path="/data/out",
                access=Access.WRITE,
                scope=GrantScope.SUBTREE,
                tier=PathTier.NORMAL,
                in_workspace=False,
            ),
        ),
        danger=CardDanger(key="rm_recursive_or_force", start=0, end=6),
        previous_denial="[sandbox: file access denied under accept-edits mode]",
    )
    assert _card_json(full) == {
        "mode": "accept_edits",
        "command": "rm -rf /data/out/x",
        "justification": "Clean the old output.",
        "paths": [
            {
                "path": "/data/out",
                "access": "write",
                "scope": "subtree",
                "tier": "normal",
                "inWorkspace": False,
            }
        ],
        "danger": {"key": "rm_recursive_or_force", "start": 0, "end": 6},
        "previousDenial": "[sandbox: file access denied under accept-edits mode]",
    }
    assert _card_json(ApprovalCard(mode=SandboxMode.AUTO)) == {"mode": "auto", "paths": []}


def test_the_permission_request_wraps_the_card_with_the_call_ids() -> None:
    """§5: PermissionRequest{sessionId, turnId, toolCallId, providerCallId, toolName, card}."""
    request = PermissionRequest(
        session_id="s1",
        turn_id="t1",
        tool_call_id="tc_1",
        provider_call_id="call_1",
        tool_name="bash",
        card=ApprovalCard(mode=SandboxMode.AUTO, command="ls"),
    )
    assert _request_json(request) == {
        "sessionId": "s1",
        "turnId": "t1",
        "toolCallId": "tc_1",
        "providerCallId": "call_1",
        "toolName": "bash",
        "card": {"mode": "auto", "command": "ls", "paths": []},
    }


@pytest.mark.parametrize(
    ("relative", "tier", "in_workspace"),
    [
        ("home/ws/src", PathTier.NORMAL, True),
        ("home/ws/.git/hooks/pre-push", PathTier.HARD_PROTECTED, True),
        ("home/.openwork/config", PathTier.HARD_PROTECTED, False),
        ("home/.ssh/id_rsa", PathTier.CREDENTIAL, False),
        ("elsewhere/data", PathTier.NORMAL, False),
    ],
)
def test_the_session_classifier_reports_tier_and_workspace_membership(
    tmp_path: Path, relative: str, tier: PathTier, in_workspace: bool
) -> None:
    """§5 card: paths[].tier and inWorkspace from the session's canonical roots."""
    home = tmp_path / "home"
    (home / "ws").mkdir(parents=True)
    session = ToolSessionContext(
        working_directory=home / "ws",
        sandbox=SandboxStatus(available=True),
        home=home,
        protected_roots=(home / ".openwork",),
    )
    classify = session_path_classifier(session)
    assert classify((tmp_path / relative).resolve()) == PathFacts(tier, in_workspace)


# -- step 2: a grant must add something ----------------------------------------------------------


def _novelty_session(tmp_path: Path) -> ToolSessionContext:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ToolSessionContext(
        working_directory=ws,
        sandbox=SandboxStatus(available=True),
        home=tmp_path / "home",
        temp_dirs=(tmp_path / "tmp",),
    )


@pytest.mark.parametrize(
    ("where", "access", "actor", "mode", "new"),
    [
        ("ws", Access.WRITE, Actor.PROCESS, SandboxMode.AUTO, False),
        ("ws", Access.WRITE, Actor.PROCESS, SandboxMode.ACCEPT_EDITS, True),
        ("ws", Access.WRITE, Actor.FILE_TOOL, SandboxMode.ACCEPT_EDITS, False),
        ("tmp", Access.WRITE, Actor.PROCESS, SandboxMode.ACCEPT_EDITS, False),
        ("elsewhere", Access.WRITE, Actor.PROCESS, SandboxMode.AUTO, True),
        ("elsewhere", Access.READ, Actor.PROCESS, SandboxMode.AUTO, False),
        ("home/.ssh", Access.READ, Actor.FILE_TOOL, SandboxMode.AUTO, True),
    ],
)
def test_a_grant_is_new_only_when_the_mode_does_not_already_allow_it(
    tmp_path: Path, where: str, access: Access, actor: Actor, mode: SandboxMode, new: bool
) -> None:
    """permissions-sandbox.md §1, §5 step 2: reads are open but credential dirs; file tools write
    the workspace in both modes, bash only in auto; temp dirs are writable."""
    session = _novelty_session(tmp_path)
    grant = PathGrant((tmp_path / where).resolve(), access, GrantScope.SUBTREE)
    assert session_grant_novelty(session, mode)(grant, actor) is new


def test_an_escalation_that_asks_for_nothing_new_is_denied_with_the_validation_text(
    tmp_path: Path,
) -> None:
    """§5 step 2: "nothing new" is a grant validation failure → `[sandbox: <error>]`, no card."""
    session = _novelty_session(tmp_path)
    inside = PathGrant(session.working_directory, Access.WRITE, GrantScope.SUBTREE)
    prepared = _bash(
        "make",
        escalation=Escalation(grants=(inside,), justification="The build writes its output."),
    )
    verdict = authorize(
        prepared,
        mode=SandboxMode.AUTO,
        interactive=True,
        sandbox_available=True,
        previous_denial=None,
        classify=_facts,
        novelty=session_grant_novelty(session, SandboxMode.AUTO),
    )
    assert verdict == RuleDenial(grant_error_text(NOTHING_NEW_ERROR), DenialSource.BUILTIN)
    asks = authorize(
        prepared,
        mode=SandboxMode.ACCEPT_EDITS,
        interactive=True,
        sandbox_available=True,
        previous_denial=None,
        classify=_facts,
        novelty=session_grant_novelty(session, SandboxMode.ACCEPT_EDITS),
    )
    assert isinstance(asks, NeedsCard)


# -- issue 22: the network grant -------------------------------------------------------------


def _network(justification: str = "It downloads the dependencies.") -> Escalation:
    return Escalation(grants=(), justification=justification, network=True)


def test_a_network_request_asks_with_a_card_that_shows_it() -> None:
    """Issue 22 point 2: ``sandboxPermissions.network`` goes through the card like a path grant;
    the card carries ``network: true`` and no paths; allowed once, that call runs with it."""
    verdict = _authorize(_bash("pip download x", escalation=_network()))
    assert isinstance(verdict, NeedsCard)
    assert verdict.card.network is True and verdict.card.paths == ()
    assert verdict.network and verdict.grants == ()
    assert decide(verdict, PermissionDecision.ALLOW_ONCE) == Run((), network=True)
    assert _card_json(verdict.card)["network"] is True


def test_a_network_request_of_a_file_tool_asks_for_nothing_new() -> None:
    """Issue 22 point 2: only bash uses the network; write/edit asking for it is refused."""
    prepared = PreparedCall(actor=Actor.FILE_TOOL, escalation=_network())
    verdict = _authorize(prepared)
    assert verdict == RuleDenial(grant_error_text(NOTHING_NEW_ERROR), DenialSource.BUILTIN)


def test_a_network_request_nobody_can_approve_is_denied_as_non_interactive() -> None:
    """Issue 22 point 2: a sub-agent never gets the network: nobody can answer its card."""
    verdict = _authorize(_bash(escalation=_network()), interactive=False)
    assert verdict == RuleDenial(NON_INTERACTIVE_TEXT, DenialSource.NON_INTERACTIVE)


def test_a_card_without_a_network_request_omits_the_field() -> None:
    """Issue 22: the field is on the wire only when asked for (docs/api.md)."""
    verdict = _authorize(_bash("cp a /data/out", escalation=_escalation()))
    assert isinstance(verdict, NeedsCard)
    assert "network" not in _card_json(verdict.card)


def test_the_whole_git_directory_is_hard_protected_for_the_file_tools(tmp_path: Path) -> None:
    """Issue 22 point 3: ``.git/config`` (and everything under any ``.git``, the ``.git`` file
    of a checkout included) is a rule denial in every mode, like ``.git/hooks``."""
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / ".git" / "config").write_text("[core]\n")
    (ws / "sub").mkdir()
    (ws / "sub" / ".git").write_text("gitdir: ../.git/modules/sub\n")
    session = ToolSessionContext(working_directory=ws, sandbox=SandboxStatus(True), home=tmp_path)
    toolset = builtin_registry().finalize(ToolsetConfig(("write", "edit")), session)
    for given in (".git/config", ".git/info/attributes", ".git/modules/a/config", "sub/.git"):
        prepared = toolset.prepare("write", json.dumps({"path": given, "content": "x"}))
        for mode in SandboxMode:
            verdict = _authorize(prepared, mode=mode)
            assert isinstance(verdict, RuleDenial) and verdict.source is DenialSource.BUILTIN
            assert "is protected and cannot be written in any mode" in verdict.text
