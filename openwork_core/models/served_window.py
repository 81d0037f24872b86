"""The window a local server really serves (issue 14 point 8), read from its own answers. Pure
parsers; the requests are made by ``window_probe``.

- Ollama ``POST /api/show {"model": …}``: ``num_ctx`` in ``parameters`` (what a request gets)
  wins over ``model_info["<arch>.context_length"]`` (what the model was trained for).
- llama.cpp ``GET /props``: ``default_generation_settings.n_ctx`` is one slot's window; an older
  server reporting the total ``n_ctx`` with ``total_slots`` > 1 (``--parallel``) is divided.
- vLLM ``GET /v1/models``: ``max_model_len`` of the model's entry.
- LM Studio ``GET /api/v0/models``: ``loaded_context_length`` of the loaded model's entry.

Whether the model's chat template renders tools (issue 24 point 4), where the server says it:
llama.cpp ``chat_template_caps.supports_tools``; Ollama's ``capabilities`` list (``"tools"``);
LM Studio's entry ``capabilities`` (``"tool_use"``). vLLM does not say: ``None``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal, TypeAlias

ServerKind: TypeAlias = Literal["ollama", "llama.cpp", "vllm", "lm-studio"]


@dataclass(frozen=True, slots=True)
class ServedWindow:
    server: ServerKind
    tokens: int
    supports_tools: bool | None = None
    """``None``: the server does not say."""
    probed_at: datetime = field(default_factory=lambda: datetime.now(UTC))


def _positive(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    number = int(value)
    return number if 0 < number < 2**31 else None


def _num_ctx(parameters: str) -> int | None:
    """The first ``num_ctx <digits>`` line of Ollama's parameters. Read line by line: the
    regular expression it was (``^\\s*num_ctx\\s+(\\d+)\\s*$``, multi-line) backtracked over
    every run of blank lines — 80 000 newlines in a server's answer took 12 s on the event loop,
    a megabyte half an hour."""
    for line in parameters.splitlines():
        words = line.split()
        if len(words) == 2 and words[0] == "num_ctx" and words[1].isdecimal():
            return int(words[1])
    return None


def ollama_window(show: object) -> int | None:
    if not isinstance(show, Mapping):
        return None
    parameters = show.get("parameters")
    if isinstance(parameters, str):
        served = _num_ctx(parameters)
        if served is not None:
            return _positive(served)
    info = show.get("model_info")
    if isinstance(info, Mapping):
        for key, value in info.items():
            if isinstance(key, str) and key.endswith(".context_length"):
                found = _positive(value)
                if found is not None:
                    return found
    return None


def llamacpp_window(props: object) -> int | None:
    if not isinstance(props, Mapping):
        return None
    settings = props.get("default_generation_settings")
    slot = _positive(settings.get("n_ctx")) if isinstance(settings, Mapping) else None
    total = _positive(props.get("n_ctx"))
    slots = _positive(props.get("total_slots")) or 1
    if slot is None and total is not None:
        return max(1, total // slots)
    if slot is not None and total is not None and slots > 1 and slot == total:
        return max(1, total // slots)
    return slot


def _entries(listing: object) -> Sequence[Mapping[str, object]]:
    if not isinstance(listing, Mapping):
        return ()
    data = listing.get("data")
    if not isinstance(data, list):
        return ()
    return [entry for entry in data if isinstance(entry, Mapping)]


def vllm_window(models: object, model: str) -> int | None:
    for entry in _entries(models):
        if entry.get("id") == model or entry.get("root") == model:
            return _positive(entry.get("max_model_len"))
    return None


def lmstudio_window(models: object, model: str) -> int | None:
    for entry in _entries(models):
        if entry.get("id") == model and entry.get("state", "loaded") == "loaded":
            return _positive(entry.get("loaded_context_length"))
    return None


def _listed(value: object, wanted: str) -> bool | None:
    if not isinstance(value, list):
        return None
    return wanted in value


def llamacpp_tools(props: object) -> bool | None:
    if not isinstance(props, Mapping):
        return None
    caps = props.get("chat_template_caps")
    found = caps.get("supports_tools") if isinstance(caps, Mapping) else None
    return found if isinstance(found, bool) else None


def ollama_tools(show: object) -> bool | None:
    return _listed(show.get("capabilities"), "tools") if isinstance(show, Mapping) else None


def lmstudio_tools(models: object, model: str) -> bool | None:
    for entry in _entries(models):
        if entry.get("id") == model:
            return _listed(entry.get("capabilities"), "tool_use")
    return None
