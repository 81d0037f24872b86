"""``openwork doctor``: what would stop the first turn, checked without spending tokens. With a
daemon running it asks that daemon (``doctor_daemon``: its providers and what their servers
serve, database, sandbox, effective settings); only without one does it judge this shell's own
environment: configuration, database and migrations, provider (reachable, key set), model
capabilities, sandbox self-check, skills; then the effective configuration with secrets masked.
Exit 1 when a check fails (it would block a turn); warnings do not fail."""

from __future__ import annotations

import asyncio
import logging
import os
import socket
from urllib.parse import urlsplit

import typer

from openwork_core.cli.client import DaemonClient, Discovery, process_alive, read_discovery
from openwork_core.cli.doctor_checks import Check, Verdict
from openwork_core.cli.doctor_daemon import daemon_checks
from openwork_core.cli.errors import CliError
from openwork_core.cli.output import console, print_json
from openwork_core.config import (
    DEFAULT_PROVIDER_ID,
    ENV_PREFIX,
    ConfigError,
    OpenWorkSettings,
    config_file_path,
    default_skill_root,
    load_settings,
    masked_settings,
    unknown_settings,
)
from openwork_core.context.limits import ModelContextLimits
from openwork_core.daemon.home import HomeInUse
from openwork_core.daemon.startup import embedded_home_guard, key_required, open_database
from openwork_core.logs import configure_logging
from openwork_core.models.capabilities import CapabilityError, resolve_capabilities
from openwork_core.skills.discovery import discover_skills
from openwork_core.storage.migrate import discover_migrations
from openwork_core.storage.postgres.store import PostgresStore
from openwork_core.storage.records import ProviderKind, ProviderRecord
from openwork_tools.sandbox.cgroup import find_parents
from openwork_tools.sandbox.probe import probe_sandbox, root_note

REACH_TIMEOUT_S = 5.0

_HOSTED = {
    ProviderKind.OPENAI_CHAT: "https://api.openai.com/v1",
    ProviderKind.OPENAI_RESPONSES: "https://api.openai.com/v1",
    ProviderKind.ANTHROPIC: "https://api.anthropic.com",
}


def register(app: typer.Typer) -> None:
    app.command()(doctor)


def reachable(base_url: str) -> str | None:
    """None when a TCP connection to the URL's host and port opens, else why not."""
    parts = urlsplit(base_url)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    if not parts.hostname:
        return f"no host in {base_url}"
    try:
        with socket.create_connection((parts.hostname, port), timeout=REACH_TIMEOUT_S):
            return None
    except OSError as exc:
        return exc.strerror or str(exc)


def provider_checks(provider: ProviderRecord | None, key_value: str | None) -> list[Check]:
    if provider is None:
        return [
            Check(
                "provider",
                Verdict.FAIL,
                "no provider 'default': set OPENWORK_PROVIDER, OPENWORK_PROVIDER_BASE_URL and "
                "OPENWORK_MODEL (a turn fails with no_provider)",
            )
        ]
    base_url = provider.base_url or _HOSTED[provider.kind]
    problem = reachable(base_url)
    checks = [
        Check(
            "provider",
            Verdict.OK if problem is None else Verdict.FAIL,
            f"{provider.kind.value} at {base_url}"
            + (" reachable" if problem is None else f" not reachable ({problem})"),
        )
    ]
    if key_value:
        checks.append(Check("api key", Verdict.OK, f"{provider.api_key_env} is set"))
    elif key_required(provider):
        checks.append(
            Check(
                "api key",
                Verdict.FAIL,
                f"{provider.kind.value} needs a key: set {ENV_PREFIX}PROVIDER_API_KEY",
            )
        )
    else:
        checks.append(Check("api key", Verdict.OK, "none (a local server may not need one)"))
    if not provider.models:
        checks.append(Check("model", Verdict.FAIL, "no model: set OPENWORK_MODEL"))
        return checks
    model = provider.models[0]
    try:
        capabilities = resolve_capabilities(model, provider.settings).capabilities
        limits = ModelContextLimits.from_capabilities(capabilities)
    except CapabilityError as exc:
        checks.append(Check("model", Verdict.FAIL, f"{model.name}: {exc}"))
        return checks
    checks.append(
        Check(
            "model",
            Verdict.OK,
            f"{model.name}: window {limits.context_window}, "
            f"output {capabilities.max_output_tokens}, "
            f"reasoning {model.max_reasoning_tokens}, input {limits.effective_input_tokens}, "
            f"auto-compact at {limits.compaction_threshold}",
        )
    )
    return checks


async def _database_checks(settings: OpenWorkSettings) -> tuple[list[Check], ProviderRecord | None]:
    checks: list[Check] = []
    stored: ProviderRecord | None = None
    try:
        async with open_database(settings) as database:
            checks.append(Check("database", Verdict.OK, f"{database.display} reachable"))
            known = discover_migrations()
            async with database.pool.acquire() as conn:
                exists = await conn.fetchval("SELECT to_regclass('schema_migrations') IS NOT NULL")
                rows = (
                    await conn.fetch("SELECT version, checksum FROM schema_migrations")
                    if exists
                    else []
                )
            applied = {int(r["version"]): str(r["checksum"]) for r in rows}
            changed = [
                m.name for m in known if m.version in applied and applied[m.version] != m.checksum
            ]
            pending = [m.name for m in known if m.version not in applied]
            if changed:
                checks.append(
                    Check(
                        "migrations",
                        Verdict.FAIL,
                        f"changed after being applied: {', '.join(changed)}",
                    )
                )
            elif pending:
                checks.append(
                    Check(
                        "migrations",
                        Verdict.WARN,
                        f"{len(pending)} pending ({pending[0]}…): `openwork migrate` or the next "
                        "start applies them",
                    )
                )
            else:
                checks.append(Check("migrations", Verdict.OK, f"current ({len(known)} applied)"))
            if exists and not pending:
                for provider in await PostgresStore(database.pool).list_providers():
                    if provider.id == DEFAULT_PROVIDER_ID:
                        stored = provider
    except ConfigError as exc:
        checks.append(Check("database", Verdict.FAIL, str(exc)))
    return checks, stored


def _through_the_daemon(settings: OpenWorkSettings, running: HomeInUse) -> list[Check]:
    """The embedded database belongs to the running daemon: ask it, never start a second
    server on its data (that would stop the daemon's)."""
    try:
        with DaemonClient.connect(settings.home) as client:
            health = client.get("/v1/health")
    except CliError as exc:
        return [
            Check(
                "database", Verdict.FAIL, f"embedded, owned by the daemon pid {running.pid}: {exc}"
            )
        ]
    ok = isinstance(health, dict) and health.get("database") == "ok"
    return [
        Check(
            "database",
            Verdict.OK if ok else Verdict.FAIL,
            f"embedded ({settings.home / 'pgdata'}), reachable through the running daemon"
            if ok
            else f"the running daemon reports its database as {health}",
        ),
        Check(
            "migrations",
            Verdict.OK if ok else Verdict.WARN,
            "applied by the running daemon at its start",
        ),
    ]


async def run_checks(settings: OpenWorkSettings) -> list[Check]:
    with embedded_home_guard(settings) as running:
        if running is None:
            checks, stored = await _database_checks(settings)
        else:
            checks, stored = await asyncio.to_thread(_through_the_daemon, settings, running), None
    provider = settings.default_provider() or stored
    key_env = provider.api_key_env if provider is not None else None
    key_value = (
        settings.provider_api_key if provider is not None and provider is not stored else None
    )
    if key_value is None and key_env:
        key_value = os.environ.get(key_env)
    checks.extend(await asyncio.to_thread(provider_checks, provider, key_value))
    sandbox = await probe_sandbox()
    checks.append(
        Check(
            "sandbox",
            Verdict.OK if sandbox.available else Verdict.WARN,
            "bubblewrap self-check passed"
            if sandbox.available
            else f"unavailable: {sandbox.reason} (bash cannot run commands; file tools work)",
        )
    )
    bounded = await asyncio.to_thread(find_parents) is not None
    root = root_note(os.geteuid(), bounded)
    if root is not None:
        checks.append(Check("sandbox as root", Verdict.OK if bounded else Verdict.WARN, root))
    discovery = await asyncio.to_thread(discover_skills, default_skill_root())
    checks.append(Check("skills", Verdict.OK, f"{len(discovery.skills)} found"))
    checks.extend(Check("skill", Verdict.WARN, f"{w.path}: {w.reason}") for w in discovery.warnings)
    try:
        found = read_discovery(settings.home)
        alive = process_alive(found.pid)
        checks.append(
            Check(
                "daemon",
                Verdict.OK if alive else Verdict.WARN,
                f"running at {found.url} (pid {found.pid})"
                if alive
                else f"stale {found.path} (pid {found.pid} is gone)",
            )
        )
    except CliError:
        checks.append(Check("daemon", Verdict.OK, "not running (`openwork serve` starts it)"))
    return checks


def running_daemon(settings: OpenWorkSettings) -> Discovery | None:
    """The daemon of this home, when its discovery file names a live process."""
    try:
        found = read_discovery(settings.home)
    except CliError:
        return None
    return found if process_alive(found.pid) else None


def doctor(json_output: bool = typer.Option(False, "--json", help="Print JSON.")) -> None:
    """Check what a turn needs; exit 1 when something would block one."""
    try:
        settings = load_settings()
    except ConfigError as exc:
        checks = [Check("configuration", Verdict.FAIL, str(exc))]
        effective: dict[str, str] = {}
    else:
        file = config_file_path()
        checks = [
            Check(
                "configuration",
                Verdict.OK,
                f"file {file}" if file.is_file() else "environment only",
            )
        ]
        checks.extend(Check("configuration", Verdict.WARN, w) for w in unknown_settings())
        found = running_daemon(settings)
        asked = None
        if found is not None:
            try:
                asked = daemon_checks(found)
            except CliError as exc:
                checks.append(Check("daemon", Verdict.WARN, f"running, but not answering ({exc})"))
        if asked is not None:
            daemon, effective = asked
            checks.extend(daemon)
        else:
            logging_setup = configure_logging(settings.log_format, level=logging.WARNING)
            try:
                checks.extend(asyncio.run(run_checks(settings)))
            finally:
                logging_setup.close()
            effective = masked_settings(settings)
    failed = any(c.verdict is Verdict.FAIL for c in checks)
    if json_output:
        print_json(
            {
                "ok": not failed,
                "checks": [c.to_json() for c in checks],
                "configuration": dict(effective),
            }
        )
    else:
        out = console()
        for check in checks:
            out.print(f"{check.verdict:<4}  {check.name:<13} {check.detail}", markup=False)
        if effective:
            out.print("effective configuration:", markup=False)
            for name, value in effective.items():
                out.print(f"  {name}={value}", markup=False)
    if failed:
        raise typer.Exit(1)
