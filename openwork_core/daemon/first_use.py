"""What the daemon's first session and first model call would otherwise pay on the event loop
(issue 13 §3: the first model call no slower than the second), paid once after the daemon
listens, in a background thread: the session runtime's modules (``session/lazy_registry.py``:
the runner, context engine, tools, compaction — nothing before the first session needs them, so
the daemon listens without them), the tool definitions a root session advertises (pydantic schema
generation, once per process: the built-in tools, ``update_plan`` and the agent tools) and the
SDKs' first-call costs (``models.adapters.warm_up``, which also builds the SDKs' shared TLS
context). Nothing here is needed for correctness: a session that comes first builds what it
needs itself. (The HTTP routes need no warm-up: they are built once, when the app is created.)"""

from __future__ import annotations

from collections.abc import Iterable

import structlog

from openwork_core.session.lazy_registry import import_session_runtime
from openwork_core.storage.records import ProviderKind

log = structlog.get_logger(__name__)


def warm_up_first_use(kinds: Iterable[ProviderKind], *, sandbox_available: bool) -> None:
    """Blocking: run it in a thread. Logs ``session_runtime.imported`` when the session runtime
    is (first: a session that comes earlier waits for it), ``models.warmed_up`` when the SDKs
    are done (last)."""
    try:
        import_session_runtime()
    except Exception as exc:  # a bug: the first session fails on it the same way
        log.error("session_runtime.import_failed", error=f"{type(exc).__name__}: {exc}")
        return
    log.info("session_runtime.imported")
    from openwork_core.agents.tools import agent_tool_definitions
    from openwork_core.models.adapters import warm_up
    from openwork_core.plan.tool import update_plan_definition
    from openwork_tools.builtin.registry import builtin_registry

    try:
        builtin_registry().definitions(sandbox_available=sandbox_available)
        update_plan_definition()
        agent_tool_definitions()
    except Exception as exc:  # never fatal: the first session builds them itself
        log.warning("tools.warm_up_failed", error=f"{type(exc).__name__}: {exc}")
    warm_up(kinds)
