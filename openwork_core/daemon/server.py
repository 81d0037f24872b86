"""`openwork serve`: database → migrations → restart correction → sandbox self-check →
HTTP on loopback → daemon.json; SIGTERM drains and exits 0 (daemon-api.md §1)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import signal
import socket
import sys
import threading
from collections.abc import Awaitable, Callable, Generator
from types import FrameType

import structlog
import uvicorn

from openwork_core.config import (
    ConfigError,
    OpenWorkSettings,
    config_file_path,
    default_skill_root,
    masked_settings,
    unknown_settings,
)
from openwork_core.daemon.access_log import AccessLog
from openwork_core.daemon.app import create_app
from openwork_core.daemon.home import (
    HomeInUse,
    HomeLock,
    private_home,
    remove_discovery,
    write_discovery,
)
from openwork_core.daemon.routes.providers import DaemonFacts
from openwork_core.daemon.startup import (
    BannerFacts,
    Database,
    banner_lines,
    bind_socket,
    open_database,
    provider_in_use,
    provider_warnings,
    warm_pool,
)
from openwork_core.lazy_registry import warm_up_after_listen
from openwork_core.logs import FILE_LOG, LogSetup, configure_logging
from openwork_core.service import OpenWorkCore
from openwork_core.session.ownership import daemon_identity
from openwork_core.session.registry_settings import LoadLimits
from openwork_core.storage.errors import MigrationChecksumMismatch, MigrationLayoutError
from openwork_core.storage.migrate import apply_migrations
from openwork_core.storage.postgres.store import PostgresStore
from openwork_core.version import app_version
from openwork_tools.modes import SandboxStatus
from openwork_tools.sandbox.probe import current_root_note, probe_sandbox

log = structlog.get_logger(__name__)
MIGRATION_FIX = "restore the migration files of this version, or point it at another database"


class _Server(uvicorn.Server):
    """Uvicorn without re-raising the captured signal at exit (we exit 0 after draining), and
    with a hook that ends open event streams as soon as shutdown begins: the sessions' actors
    stop first, so each session stream sends its ``stream_ended`` while its connection is open
    (issue 25 point 5), then ``shutdown`` ends the global streams."""

    def __init__(
        self,
        config: uvicorn.Config,
        shutdown: asyncio.Event,
        on_listening: Callable[[], None],
        stop_sessions: Callable[[], Awaitable[None]],
    ) -> None:
        super().__init__(config)
        self._shutdown = shutdown
        self._on_listening = on_listening
        self._stop_sessions = stop_sessions
        self._loop: asyncio.AbstractEventLoop | None = None
        self._draining: asyncio.Task[None] | None = None

    @contextlib.contextmanager
    def capture_signals(self) -> Generator[None, None, None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        original = {s: signal.signal(s, self.handle_exit) for s in (signal.SIGINT, signal.SIGTERM)}
        try:
            yield
        finally:
            for sig, handler in original.items():
                signal.signal(sig, handler)

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        super().handle_exit(sig, frame)
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self._begin_draining)

    def _begin_draining(self) -> None:
        if self._draining is None:
            self._draining = asyncio.get_running_loop().create_task(self._drain())

    async def _drain(self) -> None:
        try:
            await self._stop_sessions()
        except Exception as exc:  # the daemon's own shutdown stops them again
            log.warning("daemon.session_stop_failed", error=str(exc))
        finally:
            self._shutdown.set()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        await super().startup(sockets)
        if self.started:
            self._on_listening()


async def _warm_runtime_then_pool(core: OpenWorkCore, database: Database) -> None:
    """The session registry first: importing it declares the storage statements (``steady``)
    that the pool's connections then prepare."""
    await _build_session_runtime(core)
    await warm_pool(database)


async def _build_session_runtime(core: OpenWorkCore) -> None:
    """Once listening: the session registry built (its modules imported by the warm-up thread, on
    whose import this waits), so the first turn does not build it. Never fatal: a session
    operation builds it itself."""
    try:
        await core.warm_up()
    except Exception as exc:
        log.warning("session_runtime.build_failed", error=f"{type(exc).__name__}: {exc}")
        return
    log.info("session_runtime.ready")


async def serve(settings: OpenWorkSettings, *, allow_remote: bool = False) -> int:
    """Run until SIGTERM/SIGINT. A setting that prevents the start raises ``ConfigError``."""
    home = settings.home
    lock = HomeLock(home)
    try:
        private_home(home)
        lock.acquire()
    except OSError as exc:
        raise ConfigError(
            "OPENWORK_HOME",
            f"cannot use {home} ({exc.strerror or exc})",
            "point it at a folder this user can create and write",
        ) from None
    except HomeInUse as in_use:  # touch nothing of the running daemon (its daemon.json included)
        print(f"openwork: {in_use}", file=sys.stderr)
        return 1
    try:
        logging_setup = configure_logging(settings.log_format, log_dir=home / "logs")
        try:
            return await _serve(settings, allow_remote or settings.allow_remote, logging_setup)
        finally:
            logging_setup.close()
    finally:
        lock.release()


async def _serve(settings: OpenWorkSettings, allow_remote: bool, logging_setup: LogSetup) -> int:
    sock, url = bind_socket(settings, allow_remote=allow_remote)  # a taken port fails first
    probing = asyncio.create_task(probe_sandbox())  # bwrap's self-check runs beside the database's
    try:
        return await _serve_on(settings, allow_remote, logging_setup, sock, url, probing)
    finally:
        probing.cancel()  # done unless the start failed before it was read
        sock.close()


async def _serve_on(
    settings: OpenWorkSettings,
    allow_remote: bool,
    logging_setup: LogSetup,
    sock: socket.socket,
    url: str,
    probing: asyncio.Task[SandboxStatus],
) -> int:
    home = settings.home
    async with open_database(settings) as database:
        async with database.pool.acquire() as conn:
            try:
                await apply_migrations(conn)
            except (MigrationChecksumMismatch, MigrationLayoutError) as exc:
                raise ConfigError("OPENWORK_DATABASE_URL", str(exc), MIGRATION_FIX) from None
        log.info("database.ready", database=database.display)
        store = PostgresStore(database.pool)
        default_provider = settings.default_provider()
        if default_provider is not None:
            await store.upsert_provider(default_provider)
        sandbox = await probing
        root_note = await asyncio.to_thread(current_root_note)
        log.info(
            "sandbox.probed", available=sandbox.available, reason=sandbox.reason, root=root_note
        )
        core = OpenWorkCore(
            store=store,
            home=home,
            sandbox=sandbox,
            app_version=app_version(),
            skill_root=default_skill_root(),
            identity=daemon_identity(url, home),
            lease_seconds=settings.session_lease_seconds,
            load_limits=LoadLimits(
                idle_seconds=settings.session_idle_seconds,
                max_loaded=settings.max_loaded_sessions,
            ),
            sandbox_settings=settings.sandbox_settings,
            mcp_servers=settings.mcp_servers,
        )
        await core.start()
        token = settings.token or secrets.token_urlsafe(32)
        shutdown = asyncio.Event()
        app = create_app(
            core,
            token=token,
            allowed_origins=settings.origins,
            allow_remote=allow_remote,
            version=app_version(),
            shutdown=shutdown,
            max_body_bytes=settings.max_body_bytes,
            max_input_chars=settings.max_input_chars,
            facts=DaemonFacts(
                database_location=database.display,
                config_file=str(config_file_path()) if config_file_path().is_file() else None,
                settings=masked_settings(settings),
            ),
        )
        providers = await store.list_providers()
        used = provider_in_use(default_provider, providers)
        key_set = used is not None and core.providers.has_key(used)
        warnings = [
            *unknown_settings(),
            *provider_warnings(default_provider, providers, settings.provider_api_key is not None),
        ]

        warming: list[asyncio.Task[None]] = []

        def on_listening() -> None:
            path = write_discovery(home, url, token, app_version())
            facts = BannerFacts(
                version=app_version(),
                url=url,
                discovery=path,
                database=database.display,
                provider=used,
                provider_stored=used is not None and used is not default_provider,
                key_set=key_set,
                sandbox=sandbox,
                config_file=config_file_path() if config_file_path().is_file() else None,
                log_file=logging_setup.file,
                warnings=tuple(warnings),
                root_note=root_note,
            )
            warned = log
            if logging_setup.stderr_json:  # keep a JSON stderr pure: the banner as one event
                log.info("daemon.banner", lines=banner_lines(facts))
            else:  # the banner said each warning once; the file still gets them as events
                print("\n".join(banner_lines(facts)), file=sys.stderr, flush=True)
                warned = structlog.get_logger(FILE_LOG)
            for warning in warnings:
                warned.warning("daemon.configuration_warning", warning=warning)
            log.info("daemon.listening", url=url, pid=os.getpid())
            loop = asyncio.get_running_loop()
            warming.append(loop.create_task(_warm_runtime_then_pool(core, database)))
            threading.Thread(  # the first session's and model call's costs, off the event loop
                target=warm_up_after_listen,
                args=([p.kind for p in providers],),
                kwargs={"sandbox_available": sandbox.available},
                name="sdk-warm-up",
                daemon=True,
            ).start()

        config = uvicorn.Config(
            AccessLog(app),
            log_config=None,
            access_log=False,
            http="h11",  # what "auto" picks without httptools, named: nothing probed at start
            ws="none",  # the API has no WebSocket route (events are SSE)
            lifespan="off",
            timeout_graceful_shutdown=5,
        )
        server = _Server(config, shutdown, on_listening, core.stop_sessions)
        try:
            await server.serve(sockets=[sock])
        finally:
            shutdown.set()
            for task in warming:
                task.cancel()
            log.info("daemon.draining")
            await core.shutdown()
            remove_discovery(home, url)
    log.info("daemon.stopped")
    return 0
