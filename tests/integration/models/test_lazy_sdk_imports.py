"""The provider SDKs are part of the session runtime, imported after the daemon listens (issue 23
point 3: the one deferred import), each with the first adapter of its kind, and the warm-up pays
their first-call costs off the event loop (issue 13 §3: the first model call no slower than the
second). Each check runs in a fresh
interpreter, so nothing here is cached."""

from __future__ import annotations

import json
import subprocess
import sys

SDKS = ("openai", "anthropic", "httpx2")


def _run(code: str) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert isinstance(result, dict)
    return result


def test_importing_the_daemon_imports_no_provider_sdk() -> None:
    """The daemon's start path (its server module) leaves the SDKs to the session runtime."""
    loaded = _run(
        "import json, sys\n"
        "import openwork_core.daemon.server\n"
        f"print(json.dumps({{m: m in sys.modules for m in {SDKS!r}}}))"
    )
    assert loaded == dict.fromkeys(SDKS, False)


def test_the_session_runtime_loads_only_the_sdk_of_the_kind_it_builds() -> None:
    """Importing the runtime loads no SDK; building an ``openai-chat`` port loads ``openai`` and
    never ``anthropic`` (a daemon pays only for the kinds it serves)."""
    loaded = _run(
        "import json, sys\n"
        "import openwork_core.runtime\n"
        f"before = {{m: m in sys.modules for m in {SDKS!r}}}\n"
        "from openwork_core.models.adapters import build_model_port\n"
        "build_model_port('openai-chat', 'http://127.0.0.1:9/v1', 'k')\n"
        f"after = {{m: m in sys.modules for m in {SDKS!r}}}\n"
        "print(json.dumps({'before': before, 'after': after}))"
    )
    assert loaded["before"] == dict.fromkeys(SDKS, False)
    after = loaded["after"]
    assert isinstance(after, dict)
    assert (after["openai"], after["anthropic"]) == (True, False)


def test_the_warm_up_runs_one_canned_call_per_kind_over_loopback() -> None:
    """Every kind's adapter completes a streaming call against the private loopback server
    (the SDK's connection backend and stream-event models are then ready); nothing fails."""
    loaded = _run(
        "import json, sys, logging\n"
        "import structlog\n"
        "events = []\n"
        "structlog.configure(processors=[lambda _l, _m, e: events.append(e) or ''],"
        " logger_factory=structlog.ReturnLoggerFactory())\n"
        "from openwork_core.models.adapters.warm_up import warm_up\n"
        "from openwork_core.storage.records import ProviderKind\n"
        "warm_up(list(ProviderKind))\n"
        "print(json.dumps({'events': [e['event'] for e in events],"
        " 'kinds': [e.get('kinds') for e in events],"
        " 'backend': 'anyio._backends._asyncio' in sys.modules}))"
    )
    assert loaded["events"] == ["models.warmed_up"]
    assert loaded["kinds"] == [["openai-chat", "openai-responses", "anthropic"]]
    assert loaded["backend"] is True
