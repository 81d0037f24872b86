"""The session runtime: the daemon's one deferred import (issue 23 point 3; docs/performance.md
"Start"), and the composition root that gives the session registry its PostgreSQL storage: it
lives outside ``session/``, which imports only its storage ports (issue 23 point 6,
``tests/unit/test_storage_seam.py``).

What only a running session needs — the session registry and what it builds (the actor, the
sub-agent host, the session's Postgres storage and steers), the context engine and the summary
settings every session shares, the context page's overview and the model adapters' factory — is
imported here, at the top of this module, and this module is imported once, after the daemon
listens (``lazy_registry.py``: by the warm-up thread, or by the first operation that needs a
session, whichever comes first). Every other module imports at its top; nothing else defers an
import. What it imports is this module's own import list: no other list names the runtime. Part
of it: a provider kind's SDK adapter is imported by the first ``build_model_port`` of that kind
(``models/adapters/__init__.py``), so a daemon loads only the SDKs of the kinds it serves.

``warm_up_first_use`` pays, in that thread, what the first session and model call would otherwise
pay on the event loop (issue 13 §3: the first model call no slower than the second): the tool
definitions a root session advertises (pydantic schema generation, once per process) and the
SDKs' first-call costs (``models.adapters.warm_up``). Nothing here is needed for correctness: a
session that comes first builds what it needs itself."""

from __future__ import annotations

from collections.abc import Iterable

import structlog

from openwork_core.agents.tools import agent_tool_definitions
from openwork_core.context.engine import ContextEngine
from openwork_core.desktop.context_overview import context_overview
from openwork_core.models.adapters import model_port_for
from openwork_core.models.adapters.warm_up import warm_up
from openwork_core.plan.tool import update_plan_definition
from openwork_core.session.build import SessionDeps
from openwork_core.session.compaction.generation import SummarySettings
from openwork_core.session.registry import SessionRegistry
from openwork_core.session.runner.context import TurnSpec
from openwork_core.session.runner.steering import steer_of
from openwork_core.session.sub_agent_host import SubAgentModeFixed
from openwork_core.storage.postgres.session_storage import PostgresSessionStorage
from openwork_core.storage.postgres.steers import PostgresSteers
from openwork_core.storage.records import ProviderKind
from openwork_tools.builtin.registry import builtin_registry

log = structlog.get_logger(__name__)

__all__ = [
    "ContextEngine",
    "PostgresSessionStorage",
    "PostgresSteers",
    "SessionDeps",
    "SessionRegistry",
    "SubAgentModeFixed",
    "SummarySettings",
    "TurnSpec",
    "builtin_registry",
    "context_overview",
    "model_port_for",
    "steer_of",
    "warm_up_first_use",
]


def warm_up_first_use(kinds: Iterable[ProviderKind], *, sandbox_available: bool) -> None:
    """Blocking: run it in a thread, after this module is imported. Logs ``models.warmed_up``
    when the SDKs are done."""
    try:
        builtin_registry().definitions(sandbox_available=sandbox_available)
        update_plan_definition()
        agent_tool_definitions()
    except Exception as exc:  # never fatal: the first session builds them itself
        log.warning("tools.warm_up_failed", error=f"{type(exc).__name__}: {exc}")
    warm_up(kinds)
