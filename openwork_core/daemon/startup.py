"""What ``openwork serve``, ``migrate`` and ``doctor`` share before serving: opening the database
(a URL or the embedded server), binding the socket, and the start-up banner and warnings (pure
functions of values). Every failure here is a ``ConfigError`` naming the setting to change."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import socket
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path

import asyncpg
import structlog

from openwork_core.config import (
    DEFAULT_PROVIDER_ID,
    ConfigError,
    OpenWorkSettings,
    redact_database_url,
)
from openwork_core.daemon.embedded_pg import EmbeddedPostgres, start_embedded_postgres
from openwork_core.daemon.home import HomeInUse, HomeLock
from openwork_core.storage.postgres.connection import PoolWarmth, create_pool
from openwork_core.storage.records import ProviderKind, ProviderRecord
from openwork_tools.modes import SandboxStatus

log = structlog.get_logger(__name__)

CONNECT_TIMEOUT_S = 15.0
DATABASE_FIX = "check that PostgreSQL runs there and the URL is right, or unset it to use the embedded database"


@dataclass(frozen=True, slots=True)
class Database:
    pool: asyncpg.Pool
    display: str
    """``postgresql://user@host:5432/db`` (no password) or ``embedded (<data dir>)``."""
    embedded: bool
    warmth: PoolWarmth
    """Primes the pool's connections with the steady path's statements once the daemon listens."""


@contextlib.asynccontextmanager
async def open_database(settings: OpenWorkSettings) -> AsyncIterator[Database]:
    """A pool on ``OPENWORK_DATABASE_URL``, or on the embedded server under the home."""
    embedded: EmbeddedPostgres | None = None
    url = settings.database_url
    if url is None:
        try:
            embedded = await asyncio.to_thread(start_embedded_postgres, settings.home)
        except Exception as exc:
            raise ConfigError(
                "OPENWORK_DATABASE_URL",
                f"unset, and the embedded PostgreSQL could not start ({_one_line(exc)})",
                "set it to a PostgreSQL server",
            ) from None
        url = embedded.url
        display = f"embedded ({settings.home / 'pgdata'})"
    else:
        display = redact_database_url(url)
    try:
        try:
            async with asyncio.timeout(CONNECT_TIMEOUT_S):
                warmth = PoolWarmth()
                pool = await create_pool(url, warmth=warmth)
        except (OSError, TimeoutError, asyncpg.PostgresError, ValueError) as exc:
            problem = f"cannot connect to {display} ({_one_line(exc) or 'timed out'})"
            raise ConfigError("OPENWORK_DATABASE_URL", problem, DATABASE_FIX) from None
        try:
            yield Database(pool, display, embedded is not None, warmth)
        finally:
            await pool.close()
    finally:
        if embedded is not None:
            await asyncio.to_thread(embedded.stop)


async def warm_pool(database: Database) -> None:
    """Once the daemon listens: prime the pool's connections with the steady path's statements
    (``PoolWarmth``). Never fatal: a turn on an unprimed connection prepares what it runs."""
    started = time.perf_counter()
    try:
        primed = await database.warmth.warm(database.pool)
    except Exception as exc:  # e.g. the database went away: the turns will say so themselves
        log.warning("storage.warm_up_failed", error=_one_line(exc))
        return
    log.info(
        "storage.warmed_up",
        connections=primed,
        statements=len(database.warmth.statements),
        duration_ms=round((time.perf_counter() - started) * 1000, 1),
    )


def _one_line(exc: BaseException) -> str:
    return " ".join(str(exc).split())


LOOPBACK_HOSTS = ("127.0.0.1", "::1", "localhost")


def bind_socket(settings: OpenWorkSettings, *, allow_remote: bool) -> tuple[socket.socket, str]:
    """The listening socket and the daemon's URL."""
    host, port = settings.listen_host_port
    if host not in LOOPBACK_HOSTS and not allow_remote:
        raise ConfigError(
            "OPENWORK_LISTEN",
            f"{host} is not a loopback address",
            "set OPENWORK_ALLOW_REMOTE=true (or pass --allow-remote) together with OPENWORK_TOKEN "
            "to listen beyond loopback",
        )
    if allow_remote and not settings.token:
        raise ConfigError(
            "OPENWORK_TOKEN",
            "unset while listening beyond loopback",
            "set it to a long random secret that clients send as the bearer token",
        )
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise ConfigError(
                "OPENWORK_LISTEN",
                f"{settings.listen} is already in use",
                "stop the other process (`openwork status` shows a running daemon) or choose "
                "another port (port 0 picks a free one)",
            ) from None
        raise ConfigError(
            "OPENWORK_LISTEN",
            f"cannot listen on {settings.listen} ({exc.strerror or exc})",
            "choose an address of this machine",
        ) from None
    bound_port = sock.getsockname()[1]
    shown = f"[{host}]" if family == socket.AF_INET6 else host
    return sock, f"http://{shown}:{bound_port}"


# -- the banner --------------------------------------------------------------------------------
def key_required(provider: ProviderRecord) -> bool:
    """Hosted endpoints need a key; a local OpenAI-compatible server (a base URL) may not."""
    return provider.kind is not ProviderKind.OPENAI_CHAT or provider.base_url is None


def provider_warnings(
    default: ProviderRecord | None, stored: list[ProviderRecord], key_set: bool
) -> list[str]:
    """What would make the first turn fail, said at start."""
    if default is None:
        if stored:
            return []
        return [
            "no model provider: set OPENWORK_PROVIDER (openai-chat, openai-responses or "
            "anthropic), OPENWORK_PROVIDER_BASE_URL and OPENWORK_MODEL, or PUT /v1/providers/"
            "{id}; until then a turn fails with no_provider"
        ]
    warnings: list[str] = []
    if not default.models:
        warnings.append(
            "no model: set OPENWORK_MODEL (and OPENWORK_MODEL_CONTEXT_WINDOW); until then a turn "
            "on the default provider fails"
        )
    if not key_set and key_required(default):
        warnings.append(
            f"no API key: {default.kind.value} needs OPENWORK_PROVIDER_API_KEY; the provider "
            "will refuse the requests"
        )
    return warnings


def provider_in_use(
    default: ProviderRecord | None, stored: list[ProviderRecord]
) -> ProviderRecord | None:
    """The provider a new session gets (issue 24 point 5): the environment's ``default``, else
    the stored ``default`` (a PUT, or an earlier start's environment), else none."""
    if default is not None:
        return default
    return next((p for p in stored if p.id == DEFAULT_PROVIDER_ID), None)


@dataclass(frozen=True, slots=True)
class BannerFacts:
    version: str
    url: str
    discovery: Path
    database: str
    provider: ProviderRecord | None
    key_set: bool
    sandbox: SandboxStatus
    config_file: Path | None
    log_file: Path | None
    warnings: tuple[str, ...]
    provider_stored: bool = False
    """``provider`` is the stored one (no OPENWORK_PROVIDER in this environment)."""
    root_note: str | None = None
    """What running as root means for the sandbox (``probe.root_note``), when it does."""


def banner_lines(facts: BannerFacts) -> list[str]:
    provider = facts.provider
    if provider is None:
        provider_line = "none (OPENWORK_PROVIDER unset)"
    else:
        model = provider.models[0].name if provider.models else "no model"
        where = f" at {provider.base_url}" if provider.base_url else ""
        key = "key set" if facts.key_set else "no key"
        stored = " (stored)" if facts.provider_stored else ""
        provider_line = f"{provider.kind.value}{where}, model {model}, {key}{stored}"
    sandbox = (
        "available (bubblewrap)"
        if facts.sandbox.available
        else f"unavailable: {facts.sandbox.reason or 'unknown'} (bash cannot run commands)"
    )
    lines = [
        f"OpenWork {facts.version} listening on {facts.url}",
        f"  daemon.json  {facts.discovery} (URL and bearer token, mode 0600)",
        f"  database     {facts.database}",
        f"  provider     {provider_line}",
        f"  sandbox      {sandbox}",
        *([f"  as root      {facts.root_note}"] if facts.root_note else []),
        f"  config       {facts.config_file or 'no file (environment only)'}",
        f"  logs         {facts.log_file or 'stderr only'}",
    ]
    lines.extend(f"warning: {w}" for w in facts.warnings)
    return lines


@contextlib.contextmanager
def embedded_home_guard(settings: OpenWorkSettings) -> Iterator[HomeInUse | None]:
    """For ``migrate`` and ``doctor``: with the embedded database, hold the home's lock while
    using it, so that no daemon starts meanwhile — and when a daemon already runs, yield its
    ``HomeInUse`` instead: starting the embedded server would stop the daemon's (an orphan to
    it). With ``OPENWORK_DATABASE_URL`` there is nothing to guard."""
    if settings.database_url is not None:
        yield None
        return
    settings.home.mkdir(parents=True, exist_ok=True)
    lock = HomeLock(settings.home)
    try:
        lock.acquire()
    except HomeInUse as running:
        yield running
        return
    try:
        yield None
    finally:
        lock.release()
