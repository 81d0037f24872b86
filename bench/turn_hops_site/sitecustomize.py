"""The profile hook ``bench/turn_hops.py`` loads into a daemon (this directory first on its
``PYTHONPATH``): on the main thread, it records the stack at the turn's handoff to the session
(``route``), where each task is created (for ``actor``) and at the deepest frame passed the model
request's first bytes (``socket``), writes them to ``$TURN_HOPS_OUT`` and removes itself. Inert
without that variable."""

import asyncio
import json
import os
import sys
import traceback
import weakref
from types import FrameType
from typing import Any

OUT = os.environ.get("TURN_HOPS_OUT")
ADD = weakref.WeakSet.add.__code__  # every new asyncio task registers itself here
found: dict[str, Any] = {}
made: dict[int, tuple[asyncio.Task[Any], dict[str, Any]]] = {}
deepest: list[FrameType] = []
SENDS = ("send", "sendmsg", "sendall", "write")


def record(frame: FrameType) -> dict[str, Any]:
    """The stack at ``frame`` and how many of its frames belong to the running task."""
    task = asyncio.current_task()
    root = getattr(task.get_coro(), "cr_frame", None) if task else None
    depth = 0
    f: FrameType | None = frame
    while f is not None and f is not root:
        depth, f = depth + 1, f.f_back
    stack = [[s.filename, s.name] for s in traceback.extract_stack(frame)]
    frames = depth + 1 if f else len(stack)
    return {"task": task and task.get_name(), "stack": stack, "task_frames": frames}


def head(value: object) -> bool:
    """The first bytes of the model request."""
    if not isinstance(value, bytes | bytearray | memoryview):
        return False
    start = bytes(value[:300])
    return start.startswith(b"POST ") and b"/chat/completions" in start


def finish(frame: FrameType, extra: list[list[str]]) -> None:
    sys.setprofile(None)
    found["socket"]["stack"] += extra
    found["socket"]["task_frames"] += len(extra)
    current = asyncio.current_task()
    found["actor"] = next((r for t, r in made.values() if t is current), None)
    owner = frame.f_locals.get("self")
    transport = getattr(owner, "_transport", owner)
    found["transport"] = f"{type(transport).__module__}.{type(transport).__qualname__}"
    peer = getattr(transport, "get_extra_info", None)
    found["peer"] = peer("peername") if peer else None
    write(found)


def write(value: object) -> None:
    assert OUT is not None
    with open(OUT + ".part", "w") as out:
        json.dump(value, out)
    os.replace(OUT + ".part", OUT)


def look(frame: FrameType, event: str, arg: Any) -> None:
    if event == "call":
        code = frame.f_code
        if "route" not in found:
            command = frame.f_locals.get("command")
            if (
                code.co_name == "ask"
                and code.co_filename.endswith("commands.py")
                and type(command).__name__ == "StartTurn"
            ):
                found["route"] = record(frame)
        elif code is ADD:
            task = frame.f_locals.get("item")
            if isinstance(task, asyncio.Task) and frame.f_back is not None:
                made[id(task)] = (task, record(frame.f_back))
        elif code.co_argcount + code.co_kwonlyargcount and any(
            head(v) for v in frame.f_locals.values()
        ):
            found["socket"] = record(frame)
            deepest[:] = [frame]
    elif deepest and frame is deepest[0]:
        if event == "c_call" and getattr(arg, "__name__", "") in SENDS:
            finish(frame, [["<C>", getattr(arg, "__qualname__", arg.__name__)]])
        elif event == "return":
            finish(frame, [])


def hook(frame: FrameType, event: str, arg: Any) -> None:
    try:
        look(frame, event, arg)
    except Exception as exc:
        sys.setprofile(None)
        write({"error": repr(exc)})


if OUT:
    sys.setprofile(hook)
