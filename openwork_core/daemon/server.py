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
from collections.abc import Callable, Generator
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from types import FrameType

import structlog
import uvicorn

from openwork_core.config import OpenWorkSettings, default_skill_root
from openwork_core.daemon.app import create_app
from openwork_core.daemon.embedded_pg import EmbeddedPostgres, start_embedded_postgres
from openwork_core.daemon.home import HomeInUse, HomeLock, remove_discovery, write_discovery
from openwork_core.logs import configure_logging
from openwork_core.models.adapters import model_port_for
from openwork_core.service import OpenWorkCore
from openwork_core.session.ownership import daemon_identity
from openwork_core.session.registry import LoadLimits
from openwork_core.storage import PostgresStore, apply_migrations, create_pool
from openwork_tools.sandbox import probe_sandbox

log = structlog.get_logger(__name__)


def app_version() -> str:
    try:
        return version("openwork-core")
    except PackageNotFoundError:
        return "0.0.0"


class _Server(uvicorn.Server):
    """Uvicorn without re-raising the captured signal at exit (we exit 0 after draining), and
    with a hook that ends open event streams as soon as shutdown begins."""

    def __init__(
        self, config: uvicorn.Config, shutdown: asyncio.Event, on_listening: Callable[[], None]
    ) -> None:
        super().__init__(config)
        self._shutdown = shutdown
        self._on_listening = on_listening
        self._loop: asyncio.AbstractEventLoop | None = None

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
            self._loop.call_soon_threadsafe(self._shutdown.set)

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        self._loop = asyncio.get_running_loop()
        await super().startup(sockets)
        if self.started:
            self._on_listening()


async def serve(settings: OpenWorkSettings, *, allow_remote: bool = False) -> int:
    configure_logging(settings.log_format)
    home = settings.home
    home.mkdir(parents=True, exist_ok=True)
    lock = HomeLock(home)
    try:
        lock.acquire()
    except HomeInUse as in_use:  # touch nothing of the running daemon (its daemon.json included)
        print(f"openwork: {in_use}", file=sys.stderr)
        return 1
    try:
        return await _serve_locked(settings, home, allow_remote=allow_remote)
    finally:
        lock.release()


async def _serve_locked(settings: OpenWorkSettings, home: Path, *, allow_remote: bool) -> int:
    embedded: EmbeddedPostgres | None = None
    database_url = settings.database_url
    if database_url is None:
        embedded = await asyncio.to_thread(start_embedded_postgres, home)
        database_url = embedded.url
        log.info("database.embedded", data_dir=str(home / "pgdata"))
    pool = await create_pool(database_url)
    try:
        async with pool.acquire() as conn:
            await apply_migrations(conn)
        store = PostgresStore(pool)
        default_provider = settings.default_provider()
        if default_provider is not None:
            await store.upsert_provider(default_provider)
        sandbox = await probe_sandbox()
        log.info("sandbox.probed", available=sandbox.available, reason=sandbox.reason)
        token = settings.token or secrets.token_urlsafe(32)
        host, port = settings.listen_host_port
        if not allow_remote and host not in ("127.0.0.1", "::1", "localhost"):
            raise SystemExit(f"refusing to listen on {host} without --allow-remote")
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        bound_port = sock.getsockname()[1]
        url = f"http://{'[' + host + ']' if family == socket.AF_INET6 else host}:{bound_port}"
        core = OpenWorkCore(
            store=store,
            home=home,
            sandbox=sandbox,
            model_ports=model_port_for,
            app_version=app_version(),
            skill_root=default_skill_root(),
            identity=daemon_identity(url, home),
            lease_seconds=settings.session_lease_seconds,
            load_limits=LoadLimits(
                idle_seconds=settings.session_idle_seconds,
                max_loaded=settings.max_loaded_sessions,
            ),
        )
        await core.start()
        shutdown = asyncio.Event()
        app = create_app(
            core,
            token=token,
            allowed_origins=settings.origins,
            allow_remote=allow_remote,
            version=app_version(),
            shutdown=shutdown,
        )

        def on_listening() -> None:
            write_discovery(home, url, token, app_version())
            log.info("daemon.listening", url=url, pid=os.getpid())

        config = uvicorn.Config(
            app,
            log_config=None,
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=5,
        )
        server = _Server(config, shutdown, on_listening)
        try:
            await server.serve(sockets=[sock])
        finally:
            shutdown.set()
            log.info("daemon.draining")
            await core.shutdown()
            remove_discovery(home, url)
    finally:
        await pool.close()
        if embedded is not None:
            await asyncio.to_thread(embedded.stop)
    log.info("daemon.stopped")
    return 0
