"""The CLI's HTTP + SSE client of a running daemon, found through ``OPENWORK_HOME/daemon.json``
(daemon-api.md §1 discovery)."""

from __future__ import annotations

import json
import os
import queue
import threading
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType

import httpx
from pydantic import JsonValue

from openwork_core.cli.errors import CliError, ExitStatus
from openwork_core.config import load_settings
from openwork_core.daemon.home import discovery_path

TIMEOUT_S = 30.0


class DaemonNotRunning(CliError):
    exit_code = ExitStatus.NO_DAEMON

    def __init__(self, detail: str) -> None:
        super().__init__(f"{detail}; start it with `openwork serve`", "daemon_not_running")


class ApiError(CliError):
    """A non-2xx answer: the daemon's error envelope ``{"error": {"code", "message"}}``."""

    def __init__(self, status: int, code: str, message: str, body: JsonValue) -> None:
        super().__init__(f"{code}: {message} (HTTP {status})", code)
        self.status = status
        self.body = body


@dataclass(frozen=True, slots=True)
class Discovery:
    url: str
    token: str
    pid: int
    version: str
    path: Path


def read_discovery(home: Path) -> Discovery:
    path = discovery_path(home)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DaemonNotRunning(f"no daemon is running for {home} ({path} does not exist)") from None
    except (OSError, ValueError) as exc:
        raise DaemonNotRunning(f"cannot read {path} ({exc})") from None
    try:
        return Discovery(
            url=str(data["url"]),
            token=str(data["token"]),
            pid=int(data["pid"]),
            version=str(data.get("version", "")),
            path=path,
        )
    except (KeyError, TypeError, ValueError):
        raise DaemonNotRunning(f"{path} is not a daemon discovery file") from None


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _error_of(response: httpx.Response) -> ApiError:
    try:
        body: JsonValue = response.json()
    except ValueError:
        body = response.text
    code, message = "http_error", response.text[:200]
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        error = body["error"]
        assert isinstance(error, dict)
        code = str(error.get("code", code))
        message = str(error.get("message", message))
    return ApiError(response.status_code, code, message, body)


class DaemonClient:
    """Synchronous; one ``httpx.Client`` for requests and one per event stream."""

    def __init__(self, discovery: Discovery) -> None:
        self.discovery = discovery
        self._headers = {"Authorization": f"Bearer {discovery.token}"}
        self._http = httpx.Client(base_url=discovery.url, headers=self._headers, timeout=TIMEOUT_S)

    @classmethod
    def connect(cls, home: Path) -> DaemonClient:
        return cls(read_discovery(home))

    def __enter__(self) -> DaemonClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def request(self, method: str, path: str, body: JsonValue = None) -> JsonValue:
        try:
            response = self._http.request(
                method, path, json=body if method in ("POST", "PUT", "PATCH") else None
            )
        except httpx.ConnectError:
            raise DaemonNotRunning(
                f"the daemon at {self.discovery.url} does not answer (stale {self.discovery.path}?)"
            ) from None
        except httpx.HTTPError as exc:
            raise CliError(f"the request to the daemon failed: {exc}", "http_error") from None
        if response.status_code >= 400:
            raise _error_of(response)
        if not response.content:
            return None
        result: JsonValue = response.json()
        return result

    def get(self, path: str) -> JsonValue:
        return self.request("GET", path)

    def post(self, path: str, body: JsonValue) -> JsonValue:
        return self.request("POST", path, body)

    def events(self, session_id: str, inbox: Inbox, after: int | None = None) -> EventStream:
        """The session's updates into ``inbox``, after sequence ``after`` when given."""
        headers = self._headers if after is None else self._headers | {"Last-Event-ID": str(after)}
        return EventStream(self.discovery, headers, f"/v1/sessions/{session_id}/events", inbox)


class StreamEnded:
    """Put in the inbox when the event stream ends; ``error`` when it broke."""

    def __init__(self, error: CliError | None) -> None:
        self.error = error


Inbox = queue.SimpleQueue[object]
"""What a turn waits on: envelopes (dicts) and ``StreamEnded`` from the stream's thread, and
whatever else the caller puts there (typed lines, Ctrl-C). ``SimpleQueue.put`` is reentrant, so
a signal handler may put too."""


class EventStream:
    """A session's Server-Sent Events read on a background thread into the caller's inbox, so
    the main thread stays free for Ctrl-C, typed input and approval prompts between events."""

    def __init__(
        self, discovery: Discovery, headers: dict[str, str], path: str, inbox: Inbox
    ) -> None:
        self._client = httpx.Client(
            base_url=discovery.url, headers=headers, timeout=httpx.Timeout(TIMEOUT_S, read=None)
        )
        self._path = path
        self._inbox = inbox
        self._connected = threading.Event()
        self._refused: CliError | None = None
        self._closed = threading.Event()
        self._thread = threading.Thread(target=self._read, name="openwork-events", daemon=True)

    def open(self, timeout: float = TIMEOUT_S) -> EventStream:
        """Connected (or refused: the error is raised here) within ``timeout``."""
        self._thread.start()
        if not self._connected.wait(timeout):
            raise CliError("the daemon's event stream did not open", "events_unavailable")
        if self._refused is not None:
            raise self._refused
        return self

    def _read(self) -> None:
        error: CliError | None = None
        try:
            with self._client.stream("GET", self._path) as response:
                if response.status_code >= 400:
                    response.read()
                    self._refused = _error_of(response)
                    return
                self._connected.set()
                for line in response.iter_lines():
                    if self._closed.is_set():
                        return
                    if line.startswith("data:"):
                        self._inbox.put(json.loads(line[5:].strip()))
        except httpx.ConnectError:
            self._refused = DaemonNotRunning("the daemon does not answer")
        except Exception as exc:
            error = CliError(f"the event stream broke: {exc}", "events_broken")
        finally:
            if not self._connected.is_set():
                self._connected.set()
            elif not self._closed.is_set():
                self._inbox.put(StreamEnded(error))

    def close(self) -> None:
        self._closed.set()
        self._client.close()


def home() -> Path:
    """OPENWORK_HOME as the daemon sees it (environment, then the config file)."""
    return load_settings().home


def connect() -> DaemonClient:
    return DaemonClient.connect(home())


def objects(value: JsonValue, key: str) -> list[dict[str, JsonValue]]:
    """The JSON objects in ``value[key]`` (an answer's list), others skipped."""
    items = value.get(key) if isinstance(value, dict) else None
    return [item for item in items if isinstance(item, dict)] if isinstance(items, list) else []
