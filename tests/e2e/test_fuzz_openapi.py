"""Fuzzing the served OpenAPI document (issue 12 point 5, docs/reliability.md "Fuzzing"):
schemathesis generates up to 50 requests per operation, valid and invalid, against a real
``openwork serve`` on real PostgreSQL. Every answer must be documented, in the documented
content type and schema, and never a server error (daemon-api.md §2: "never a 500 for bad
input")."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import (
    content_type_conformance,
    not_a_server_error,
    response_schema_conformance,
    status_code_conformance,
)

from tests.support.daemon import TOKEN
from tests.support.postgres import PgCluster

AUTH = {"Authorization": f"Bearer {TOKEN}"}
MAX_EXAMPLES = 25
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


@pytest.fixture(scope="module")
def daemon_url(pg_cluster: PgCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """One daemon for the module, started and stopped as a real process (SIGTERM → exit 0)."""
    home = tmp_path_factory.mktemp("fuzz-home")
    database_url = asyncio.run(pg_cluster.new_database())
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENWORK_")} | {
        "OPENWORK_HOME": str(home),
        "OPENWORK_LISTEN": "127.0.0.1:0",
        "OPENWORK_TOKEN": TOKEN,
        "OPENWORK_LOG_FORMAT": "json",
        "OPENWORK_DATABASE_URL": database_url,
        "HOME": str(home / "user-home"),
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "openwork_core.daemon", "serve"],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    listening = threading.Event()
    found: list[str] = []
    log: list[str] = []

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            log.append(line)
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if event.get("event") == "daemon.listening":
                found.append(event["url"])
                listening.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert listening.wait(60), "".join(log[-30:])
        yield found[0]
    finally:
        process.terminate()
        assert process.wait(30) == 0
        reader.join(10)
    unhandled = [line for line in log if "request.unhandled" in line]
    assert unhandled == []


def _fuzz(operation: schemathesis.APIOperation, mode: GenerationMode) -> None:
    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=MAX_EXAMPLES,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=True,
        database=None,
    )
    def run(case: schemathesis.Case) -> None:
        case.call_and_validate(headers=AUTH, checks=CHECKS, timeout=20)

    run()


@pytest.mark.slow
@pytest.mark.timeout(
    360
)  # 25 examples per operation and mode; CPU-bound, it shares the cores with the workers
def test_no_generated_request_gets_a_server_error_or_an_undocumented_answer(
    daemon_url: str,
) -> None:
    """Every operation but the Core-wide stream (it never ends by itself; its auth and envelope
    are covered by the e2e tests) and the writes of MCP servers (a generated valid one would
    run the command it names and connect to the URL it names: any program, any host; their
    validation is tests/unit/mcp_servers/test_config.py), with valid and with invalid data."""
    schema = schemathesis.openapi.from_url(f"{daemon_url}/v1/openapi.json", headers=AUTH)
    failures: list[str] = []
    fuzzed = 0
    operations = schema.exclude(path="/v1/events").exclude(path_regex="^/v1/mcp/servers/")
    for result in operations.get_all_operations():
        operation = result.ok()
        for mode in (GenerationMode.POSITIVE, GenerationMode.NEGATIVE):
            try:
                _fuzz(operation, mode)
                fuzzed += 1
            except Unsatisfiable:  # nothing in the schema to break (e.g. no parameters at all)
                assert mode is GenerationMode.NEGATIVE, operation.label
            except (Exception, BaseExceptionGroup) as exc:  # keep going: report every operation
                failures.append(f"{operation.label} [{mode.value}]: {str(exc)[:1500]}")
    assert failures == [], "\n\n".join(failures)
    assert fuzzed >= 30  # 20 operations × positive, and most of them × negative
