"""A request body serialized once, sent through the official SDKs' own request machinery.

The SDKs' typed ``create`` methods walk the whole request on every call (the openai SDK's
``async_maybe_transform`` visits every message and content part; both then re-encode it with
``json.dumps``): on a long session that costs hundreds of times one ``orjson.dumps`` of the same
request. Here the adapter's encoded request is dumped once with orjson and handed to the SDK's
public ``post(path, content=bytes, stream=True, ...)``, which sends the bytes as they are and
keeps the SDK's request side: headers and authentication, retries with backoff (the bytes are
re-sent unchanged) and status-error classes. The accepted stream's body is read by ``sse``.

The bytes are what the SDK itself would have sent, modulo the JSON text form: compact
separators and UTF-8 (no ``\\u`` escapes), like the SDK's ``openapi_dumps``.

``ConfiguredClients`` keeps the client configured for a call's retries and timeout: the SDKs'
``with_options`` copies the whole client, and each copy looks its platform headers up again on
a worker thread before its first request — once per model call if made per call.
"""

from __future__ import annotations

import weakref
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Generic, TypeVar

import orjson

from openwork_chat_state.messages import Message
from openwork_core.models.port import ModelCallOptions, ModelError

ClientT = TypeVar("ClientT")


class ConfiguredClients(Generic[ClientT]):
    """An adapter's SDK client with the retries and timeout of each call's options, made once
    per distinct pair (``configure(max_retries, timeout_s)``, e.g. ``with_options``) and kept:
    the pair comes from the provider's settings, so a daemon sees very few."""

    LIMIT = 8

    def __init__(self, configure: Callable[[int, float], ClientT]) -> None:
        self._configure = configure
        self._clients: dict[tuple[int, float], ClientT] = {}

    def get(self, options: ModelCallOptions) -> ClientT:
        key = (max(0, options.max_transport_attempts - 1), options.idle_timeout_s)
        client = self._clients.get(key)
        if client is None:
            if len(self._clients) >= self.LIMIT:
                self._clients.clear()
            client = self._clients[key] = self._configure(*key)
        return client


def dump_body(fields: object) -> bytes:
    """The request body as JSON bytes, one orjson pass. A value JSON cannot carry (a lone
    surrogate, a non-string key) is ``invalid_request`` before anything is sent."""
    try:
        return orjson.dumps(fields)
    except (TypeError, orjson.JSONEncodeError) as exc:
        raise ModelError.invalid_request(f"the request is not valid JSON: {exc}") from exc


def kept_bytes(data: bytes) -> bytes:
    """``data`` at its exact size, for bytes kept beyond the call that made them. An
    ``orjson.dumps`` result holds on to its whole write buffer — at least 4 KiB even for a
    30-byte message, some 64 KiB for a 5 KB one — and ``b",".join`` of one part returns that
    part itself; a cached fragment would keep all of it for its message's life."""
    return memoryview(data).tobytes()


@dataclass(frozen=True, slots=True)
class _Run:
    """A history already joined: the ids of its messages (all alive while ``deaths`` is
    current, so an equal id is the same object) and their fragments joined with commas."""

    ids: tuple[int, ...]
    joined: bytes
    deaths: int


class MessageFragments:
    """The JSON array an encoder makes of a history, one message's fragment at a time.

    For encoders that map each message on its own (``encode(history)`` is the concatenation
    of ``encode((message,))`` over the history — OpenAI Chat Completions and Responses): each
    message's encoded items are dumped once and kept while the ``Message`` object lives (a weak
    reference; a session's messages keep their identity from one call to the next). The last
    few joined histories are kept too: a call whose history extends one of them (the same
    message objects first) joins only the fragments of the new messages to it. The result is
    byte for byte ``orjson.dumps(encode(history))``. One per adapter, shared by its sessions;
    a message's death forgets its fragment and every joined history.
    """

    RUNS = 4

    def __init__(self, encode: Callable[[Sequence[Message]], Sequence[object]]) -> None:
        self._encode = encode
        self._fragments: dict[int, tuple[weakref.ref[Message], bytes]] = {}
        self._runs: list[_Run] = []
        self._deaths = 0

    def __len__(self) -> int:
        return len(self._fragments)

    def array(self, messages: Sequence[Message]) -> orjson.Fragment:
        """``encode(messages)`` as a JSON array, ready to embed in ``dump_body``. Encoding
        errors (``invalid_request``) surface as from the encoder itself."""
        deaths = self._deaths  # before anything: a death during this call voids the new run
        ids = tuple(map(id, messages))
        base = self._longest_run(ids)
        parts: list[bytes] = [base.joined] if base is not None and base.joined else []
        fragments = self._fragments
        for message in messages[len(base.ids) if base is not None else 0 :]:
            key = id(message)
            entry = fragments.get(key)
            if entry is None or entry[0]() is not message:
                entry = (weakref.ref(message, self._forgetter(key)), self._dump(message))
                fragments[key] = entry
            if entry[1]:
                parts.append(entry[1])
        joined = b",".join(parts)
        runs = [r for r in self._runs if r is not base and r.deaths == deaths]
        self._runs = [_Run(ids, joined, deaths), *runs][: self.RUNS]
        return orjson.Fragment(b"[" + joined + b"]")

    def _longest_run(self, ids: tuple[int, ...]) -> _Run | None:
        best: _Run | None = None
        for run in self._runs:
            size = len(run.ids)
            if (
                run.deaths == self._deaths
                and size <= len(ids)
                and (best is None or size > len(best.ids))
                and ids[:size] == run.ids
            ):
                best = run
        return best

    def _dump(self, message: Message) -> bytes:
        return kept_bytes(b",".join([dump_body(item) for item in self._encode((message,))]))

    def _forgetter(self, key: int) -> Callable[[weakref.ref[Message]], None]:
        def forget(ref: weakref.ref[Message]) -> None:
            """The message died: ``key`` may name another object from now on."""
            self._deaths += 1
            self._runs = []
            entry = self._fragments.get(key)
            if entry is not None and entry[0] is ref:  # not a newer message at the same id
                del self._fragments[key]

        return forget


def add_openai_tail(
    fields: dict[str, object], *, temperature: float | None, tools: object, top_p: float | None
) -> dict[str, object]:
    """The last fields of both OpenAI bodies, in the SDK's (alphabetical) key order: sampling
    only when the request sets it, tools only when there are any."""
    if temperature is not None:
        fields["temperature"] = temperature
    if tools:
        fields["tools"] = tools
    if top_p is not None:
        fields["top_p"] = top_p
    return fields
