"""A local model server's own endpoints on loopback (issue 14 point 8): Ollama ``POST
/api/show``, llama.cpp ``GET /props``, vLLM ``GET /v1/models``, LM Studio ``GET
/api/v0/models`` — each answering the window it serves in that server's real shape; every other
path is 404. ``hold`` keeps every answer back until ``release()`` (a slow server)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Literal

Server = Literal["ollama", "llama.cpp", "vllm", "lm-studio"]

HOLD_LIMIT_S = 30.0


def _answers(server: Server, model: str, window: int) -> dict[tuple[str, str], object]:
    if server == "ollama":
        return {
            ("POST", "/api/show"): {
                "parameters": f'num_ctx                        {window}\nstop "<|im_end|>"',
                "model_info": {"general.architecture": "qwen2", "qwen2.context_length": 32768},
            }
        }
    if server == "llama.cpp":
        return {
            ("GET", "/props"): {
                "default_generation_settings": {"n_ctx": window, "params": {}},
                "total_slots": 4,
                "model_path": f"/models/{model}.gguf",
            }
        }
    if server == "vllm":
        return {
            ("GET", "/v1/models"): {
                "object": "list",
                "data": [{"id": model, "object": "model", "root": model, "max_model_len": window}],
            }
        }
    return {
        ("GET", "/api/v0/models"): {
            "object": "list",
            "data": [
                {
                    "id": model,
                    "object": "model",
                    "type": "llm",
                    "state": "loaded",
                    "max_context_length": 131072,
                    "loaded_context_length": window,
                }
            ],
        }
    }


class FakeLocalServer:
    def __init__(self, server: Server, *, model: str, window: int, hold: bool = False) -> None:
        answers = _answers(server, model, window)
        self.asked: list[tuple[str, str, object]] = []
        self._released = threading.Event()
        if not hold:
            self._released.set()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self, method: str) -> None:
                length = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(length)) if length else None
                path = self.path.split("?", 1)[0]
                outer.asked.append((method, path, body))
                outer._released.wait(HOLD_LIMIT_S)
                found = answers.get((method, path))
                data = json.dumps(found if found is not None else {"error": "not found"})
                self.send_response(200 if found is not None else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data.encode())

            def do_GET(self) -> None:
                self._answer("GET")

            def do_POST(self) -> None:
                self._answer("POST")

            def log_message(self, format: str, *args: object) -> None:
                pass

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._http.daemon_threads = True
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}"

    def release(self) -> None:
        self._released.set()

    def __enter__(self) -> FakeLocalServer:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._released.set()
        self._http.shutdown()
        self._http.server_close()
        self._thread.join(timeout=10)
