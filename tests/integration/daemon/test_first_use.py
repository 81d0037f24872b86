"""The first request, first session and first model call cost what later ones do (issue 13 §3):
routes are built with the app, and the daemon's warm-up pays the rest in a background thread
after it listens."""

from __future__ import annotations

import asyncio
import json
import ssl
import subprocess
import sys
from typing import cast

import httpx
import pydantic
import pytest

from openwork_core.daemon.app import create_app
from openwork_core.models.adapters import build_model_port
from openwork_core.service import OpenWorkCore
from tests.unit.daemon.test_error_envelope import TOKEN


class _Core:
    """Any facade call is a failure: preparing the routes runs no endpoint."""

    def __getattr__(self, name: str) -> object:
        raise AssertionError(f"the core was called: {name}")


def _app(core: object) -> object:
    return create_app(
        cast(OpenWorkCore, core),
        token=TOKEN,
        allowed_origins=frozenset(),
        allow_remote=False,
        version="0.0.0",
        shutdown=asyncio.Event(),
    )


@pytest.fixture
def validators_built(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """Every pydantic ``TypeAdapter`` built meanwhile (FastAPI builds one per route field)."""
    built: list[object] = []
    original = pydantic.TypeAdapter.__init__

    def counting(self: pydantic.TypeAdapter[object], *args: object, **kwargs: object) -> None:
        built.append(args[0] if args else None)
        original(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(pydantic.TypeAdapter, "__init__", counting)
    return built


async def test_the_first_request_into_a_route_builds_no_validator(
    validators_built: list[object],
) -> None:
    """Routes are built once, with the app (not again at their first match, as FastAPI does for
    an included router): a body the route's validator refuses (422) reaches no endpoint."""
    app = _app(_Core())
    validators_built.clear()
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app),  # type: ignore[arg-type]
        base_url="http://127.0.0.1",
        headers={"Authorization": f"Bearer {TOKEN}"},
    ) as client:
        for method, path in (
            ("POST", "/v1/sessions"),
            ("POST", "/v1/sessions/s/turns"),
            ("PUT", "/v1/sessions/s/permission-mode"),
        ):
            response = await client.request(method, path, json={"workspace": 7, "mode": 7})
            assert response.status_code == 422, response.text
    assert validators_built == []


def test_the_warm_up_builds_the_tool_definitions_a_root_session_advertises() -> None:
    """In a fresh interpreter: after the warm-up, building a root session's definitions (the
    built-in tools with the sandbox as probed, update_plan, the agent tools) misses no cache."""
    code = (
        "import json\n"
        "from openwork_core.runtime import warm_up_first_use\n"
        "from openwork_core.agents.tools import agent_tool_definition, agent_tool_definitions\n"
        "from openwork_core.plan.tool import update_plan_definition\n"
        "from openwork_tools.builtin.registry import builtin_registry\n"
        "from openwork_tools.definition import _definition\n"
        "warm_up_first_use([], sandbox_available=True)\n"
        "caches = (_definition, agent_tool_definition, update_plan_definition)\n"
        "before = [c.cache_info().misses for c in caches]\n"
        "builtin_registry().definitions(sandbox_available=True)\n"
        "update_plan_definition(); agent_tool_definitions()\n"
        "after = [c.cache_info().misses for c in caches]\n"
        "print(json.dumps({'before': before, 'after': after}))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    misses = json.loads(done.stdout.strip().splitlines()[-1])
    assert all(n > 0 for n in misses["before"])
    assert misses["after"] == misses["before"]


def test_sdk_clients_share_one_tls_context(monkeypatch: pytest.MonkeyPatch) -> None:
    """Building a model port after the first loads no CA bundle (20-50 ms on the event loop)."""
    build_model_port("openai-chat", "https://example.invalid/v1", "k")
    build_model_port("anthropic", "https://example.invalid", "k")
    loaded: list[object] = []
    original = ssl.create_default_context

    def counting(*args: object, **kwargs: object) -> ssl.SSLContext:
        loaded.append(args)
        return original(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(ssl, "create_default_context", counting)
    for kind in ("openai-chat", "openai-responses", "anthropic"):
        build_model_port(kind, "https://example.invalid/v1", "k")  # type: ignore[arg-type]
    assert loaded == []
