"""The database per model call (issue 13, point 2): statements, transactions and pool resets per
steady model call, and the storage path's time against raw asyncpg writes of the same rows.

Run: ``.venv/bin/python bench/turn_overhead.py``. In one process, on a fresh database of the local
PostgreSQL: a real ``OpenWorkCore`` (the tests' runtime harness) with a scripted in-process model
that answers every call with one ``read`` tool call until the last. Every pool connection carries
an asyncpg query logger, so every round trip to the server is counted (statements, ``BEGIN`` /
``COMMIT``, the pool's reset query), including the trace writer's. A steady call is what a
20-call turn costs beyond a 2-call turn, ÷ 18 (the turn's start and end cancel out).

Printed per steady call:

* round trips, of which data statements, transaction control and pool resets; transactions (an
  explicit ``BEGIN`` or a statement outside one), the session's (goal 1) and the trace writer's
  (its own connection, batched) apart;
* storage path: the wall time the turn spends inside the session storage port
  (``PostgresSessionStorage``) ÷ raw asyncpg writes of the same rows in the same transaction
  shape as the runtime's steady path (a response of effect-free ``read`` calls) — one
  statement writing the assistant message, its tool result, the submission's usage row and the
  turn's counters with the next submission's, fenced by the lease row ``FOR SHARE`` as the
  runtime's is (``_raw_sql``). Goal ≤ 2.0. Two raw references, both printed:

  - *beside* (``_Beside``): each steady step's rows written raw on a connection of its own,
    into a session of its own, right before or after (alternately) the turn's own write — the
    same moment of the same process, so both meet the same machine (a server backend idle since
    the previous call, the loop's other tasks, cold caches). Its time is taken out of the
    turn's wall time;
  - *back to back*: the same rows read back from the turn and written one after the other once
    it ended — server and client hot, nothing else running: a lower bound no write inside a
    turn meets (a write between 3 ms of Python work takes about twice as long on 2 cores).

  The same ratio against the back-to-back writes without the fence is printed too. Every raw
  connection carries the same query logger as the pool's, so instrumentation costs both alike;
* the whole runtime per call (prepare, tool, Chat State, storage) ÷ the same raw writes, for
  scale (no goal).

Nothing is asserted; the figures are medians of ``ROUNDS`` turns.
"""

from __future__ import annotations

import asyncio
import functools
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import asyncpg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from openwork_core.models.adapters.scripted import ScriptedModel, ScriptedResponse
from openwork_core.session.storage import OutgoingMessage
from openwork_core.storage.codec import new_message
from openwork_core.storage.postgres import session_storage
from openwork_core.storage.postgres.connection import create_pool
from openwork_core.storage.postgres.store import PostgresStore
from tests.support.postgres import find_cluster
from tests.support.runtime import runtime

LONG = 20
SHORT = 2
ROUNDS = 9
POOL = 6


@dataclass
class Tally:
    counts: Counter[str] = field(default_factory=Counter)
    storage_s: float = 0.0
    beside_s: float = 0.0
    """The raw writes made beside the turn's own (``_Beside``)."""
    in_xact: set[int] = field(default_factory=set)

    def log(self, conn_no: int, query: str, trace: bool) -> None:
        key, head = _classified(query)
        self.counts[key] += 1
        c = self.counts
        c["round_trips"] += 1
        if trace:
            c["trace_round_trips"] += 1
        if "pg_advisory_unlock_all" in query:
            c["resets"] += 1
        elif head in ("BEGIN", "START"):
            c["control"] += 1
            c["transactions"] += 1
            self.in_xact.add(conn_no)
        elif head in ("COMMIT", "ROLLBACK", "END"):
            c["control"] += 1
            self.in_xact.discard(conn_no)
        else:
            c["statements"] += 1
            if conn_no not in self.in_xact:
                c["transactions"] += 1
                if trace:
                    c["trace_transactions"] += 1


@functools.lru_cache(maxsize=1024)
def _classified(query: str) -> tuple[str, str]:
    """The query's key in the by-query listing and its first keyword (once per query text: the
    logger runs on the event loop inside the timed storage calls, so it must stay cheap)."""
    head = query.lstrip().split(None, 1)[0].upper().rstrip(";") if query.strip() else ""
    return "q:" + " ".join(query.split())[:90], head


TALLY = Tally()
RAW_TALLY = Tally()
"""The raw writes' round trips: counted the same way (the same logger cost as the pool's
connections), reported nowhere."""


def _attach(pool: asyncpg.Pool) -> None:
    for number, holder in enumerate(pool._holders):
        con = holder._con
        assert con is not None

        def record(logged: Any, number: int = number) -> None:
            TALLY.log(number, logged.query, "trace_spans" in logged.query)

        con.add_query_logger(record)


def _time_storage() -> None:
    """Wrap every coroutine method of the storage port (class level, bench only)."""
    cls = session_storage.PostgresSessionStorage
    for name in list(vars(cls)):
        method = getattr(cls, name)
        if name.startswith("_") or not asyncio.iscoroutinefunction(method):
            continue

        def wrap(m: Callable[..., Awaitable[Any]]) -> Callable[..., Awaitable[Any]]:
            @functools.wraps(m)
            async def timed(*args: Any, **kwargs: Any) -> Any:
                step = args[2] if m.__name__ == "append" else None
                steady = step is not None and step.response is not None and len(step.messages) > 1
                beside = BESIDE if steady else None
                first = beside is not None and beside.turn_first()
                if beside is not None and first:
                    await beside.write(step.messages)
                start = time.perf_counter()
                try:
                    result = await m(*args, **kwargs)
                finally:
                    TALLY.storage_s += time.perf_counter() - start
                if beside is not None and not first:
                    await beside.write(step.messages)
                return result

            return timed

        setattr(cls, name, wrap(method))


def _script(calls: int, tag: str) -> list[ScriptedResponse]:
    steps = [
        ScriptedResponse(tool_calls=((f"call-{tag}-{i}", "read", {"path": f"notes-{i}.txt"}),))
        for i in range(calls - 1)
    ]
    return [*steps, ScriptedResponse(text="done")]


@dataclass(frozen=True)
class TurnCost:
    counts: Counter[str]
    storage_s: float
    beside_s: float
    wall_s: float
    """Without the raw writes beside the turn's."""


async def _settled(rt: Any) -> None:
    """The trace writer has written what the turn queued, and asyncpg's query-logger callbacks
    (scheduled with ``call_soon``) have run."""
    await rt.core.trace.flushed()
    for _ in range(3):
        await asyncio.sleep(0)


async def _turn(rt: Any, model: ScriptedModel, sid: str, calls: int, tag: str) -> TurnCost:
    model.push(*_script(calls, tag))
    await _settled(rt)
    before, storage_before = Counter(TALLY.counts), TALLY.storage_s
    beside_before = TALLY.beside_s
    start = time.perf_counter()
    _, updates = await rt.run_turn(sid, f"turn {tag}", client_request_id=tag, timeout=60)
    outcome = updates[-1].update.outcome
    if outcome.status != "completed":
        raise RuntimeError(f"turn {tag} ended {outcome}")
    beside = TALLY.beside_s - beside_before
    wall = time.perf_counter() - start - beside
    await _settled(rt)
    return TurnCost(TALLY.counts - before, TALLY.storage_s - storage_before, beside, wall)


def _raw_sql(*, fenced: bool) -> str:
    """The steady path's shape, raw: one statement (its own implicit transaction) inserting the
    assistant message and its tool result, the submission's ``model_call_usage`` row, and adding
    the turn's counters (tokens, tool calls, the next submission); ``fenced``: the lease row
    ``FOR SHARE`` and the writes conditioned on it."""
    lease = (
        "lease AS (SELECT 1 FROM session_leases WHERE session_id = $2 FOR SHARE)," if fenced else ""
    )
    guard = "WHERE EXISTS (SELECT 1 FROM lease)" if fenced else ""
    also = "AND EXISTS (SELECT 1 FROM lease)" if fenced else ""
    return f"""WITH {lease}
        ins AS (
            INSERT INTO messages (id, session_id, turn_id, sequence, role, content,
                                  provider_call_id, tool_name, message_kind)
            SELECT v.id, $2, $3, v.sequence, v.role, v.content::jsonb, v.call_id, v.tool_name,
                   'normal'
            FROM (VALUES ($1, $4::bigint, $5, $6, $7, $8),
                         ($9, $4::bigint + 1, $10, $11, $12, $13))
                 AS v(id, sequence, role, content, call_id, tool_name) {guard}),
        upd AS (
            UPDATE turns SET input_tokens = COALESCE(input_tokens, 0) + 1,
                   output_tokens = COALESCE(output_tokens, 0) + 1,
                   tool_call_count = tool_call_count + 1,
                   model_call_count = GREATEST(model_call_count, 1),
                   model_submission_count = model_submission_count + 1, updated_at = now()
            WHERE id = $3 {also}),
        usage AS (
            INSERT INTO model_call_usage (session_id, turn_id, model_call, submission,
                   message_id, provider_id, model_name, input_tokens, output_tokens,
                   estimated_input_tokens, stable_prefix_hash, request_bytes,
                   shared_prefix_bytes)
            SELECT $2, $3, $14, 1, $1, 'default', 'scripted-model', 1, 1, 5000,
                   'raw', 20000, 19000 {guard})
        SELECT 1"""


def _fields(
    prefix: str, role: str, content: str, call_id: str | None, tool: str | None
) -> tuple[object, ...]:
    return (role, content, None if call_id is None else f"{prefix}{call_id}", tool)


_COLUMNS = ("role", "content", "provider_call_id", "tool_name")


async def _raw_connection(url: str) -> asyncpg.Connection:
    """A connection of its own, with the same query logger as the pool's (into ``RAW_TALLY``),
    so the instrumentation costs both sides alike."""
    conn = await asyncpg.connect(url)
    conn.add_query_logger(
        lambda logged: RAW_TALLY.log(0, logged.query, "trace_spans" in logged.query)
    )
    return conn


async def _raw_writes(
    url: str, rows: list[asyncpg.Record], turn_id: str, sid: str, *, fenced: bool
) -> float:
    """The same rows written back to back after the turn (``_raw_sql``): the server and the
    client hot, nothing else running — the fastest these writes can be."""
    prefix = "rawf-" if fenced else "raw-"
    sql = _raw_sql(fenced=fenced)
    conn = await _raw_connection(url)
    try:
        base = await conn.fetchval(
            "SELECT COALESCE(MAX(sequence), 0) FROM messages WHERE session_id = $1", sid
        )
        start = time.perf_counter()
        for n in range(0, len(rows), 2):
            assistant, result = rows[n], rows[n + 1]
            await conn.execute(
                sql,
                f"{prefix}{assistant['id']}",
                sid,
                turn_id,
                base + n + 1,
                *_fields(prefix, *(assistant[k] for k in _COLUMNS)),
                f"{prefix}{result['id']}",
                *_fields(prefix, *(result[k] for k in _COLUMNS)),
                # model_call numbers the real turn did not use (raw and fenced runs apart)
                (2_000 if fenced else 1_000) + n,
            )
        return time.perf_counter() - start
    finally:
        await conn.close()


@dataclass
class _Beside:
    """The raw fenced write of each steady step's rows made *beside* the turn's own, right before
    or after it, on a connection of its own into a session of its own (its lease, turn and sequences):
    the same moment of the same process, so both writes meet the same state of the machine (a
    server backend idle since the previous call, the loop's other tasks, the caches). A write
    between 3 ms of Python work takes about twice as long as the same write back to back on
    2 cores (measured while writing this bench), which the back-to-back figure does not see."""

    conn: asyncpg.Connection
    sid: str
    turn_id: str
    sequence: int
    model_call: int = 10_000
    writes: int = 0

    def turn_first(self) -> bool:
        """Every other step the raw write goes first: the second of two writes meets a server
        the first just woke, so neither side always gets that."""
        self.writes += 1
        return self.writes % 2 == 0

    async def write(self, messages: Sequence[OutgoingMessage]) -> None:
        """A steady step's rows: the response and its one result."""
        message, result = messages
        rows = [new_message(r.id, r.message, r.kind, r.artifacts) for r in (message, result)]
        self.model_call += 1
        start = time.perf_counter()
        await self.conn.execute(
            _BESIDE_SQL,
            f"beside-{rows[0].id}",
            self.sid,
            self.turn_id,
            self.sequence + 1,
            *_fields("beside-", rows[0].role.value, rows[0].content, None, None),
            f"beside-{rows[1].id}",
            *_fields(
                "beside-",
                rows[1].role.value,
                rows[1].content,
                rows[1].provider_call_id,
                rows[1].tool_name,
            ),
            self.model_call,
        )
        TALLY.beside_s += time.perf_counter() - start
        self.sequence += 2


_BESIDE_SQL = _raw_sql(fenced=True)
BESIDE: _Beside | None = None


async def _beside(rt: Any, model: ScriptedModel, pool: asyncpg.Pool, url: str) -> _Beside:
    """A session loaded by one turn (so it has its lease and a turn row) for the raw writes."""
    sid = await rt.new_session()
    await _turn(rt, model, sid, 1, "beside")
    async with pool.acquire() as conn:
        turn_id = await conn.fetchval("SELECT id FROM turns WHERE session_id = $1", sid)
        sequence = await conn.fetchval(
            "SELECT MAX(sequence) FROM messages WHERE session_id = $1", sid
        )
    return _Beside(await _raw_connection(url), sid, turn_id, sequence)


async def main() -> None:
    cluster = await find_cluster()
    await cluster.create_template()
    url = await cluster.new_database()
    _time_storage()
    pool = await create_pool(url, min_size=POOL, max_size=POOL)
    _attach(pool)
    store = PostgresStore(pool)
    model = ScriptedModel([])
    long_costs: list[TurnCost] = []
    short_costs: list[TurnCost] = []
    raw: list[float] = []
    raw_fenced: list[float] = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            async with runtime(store, Path(tmp), model) as rt:
                for i in range(LONG):
                    (rt.workspace / f"notes-{i}.txt").write_text(f"some notes {i}\n" * 20)
                global BESIDE
                BESIDE = await _beside(rt, model, pool, url)
                for r in range(ROUNDS + 1):
                    sid = await rt.new_session()
                    await _turn(rt, model, sid, 1, f"load-{r}")  # the session's load and lease
                    short = await _turn(rt, model, sid, SHORT, f"short-{r}")
                    long = await _turn(rt, model, sid, LONG, f"long-{r}")
                    if r == 0:
                        continue  # warm-up
                    short_costs.append(short)
                    long_costs.append(long)
                    async with pool.acquire() as conn:
                        turn_id = await conn.fetchval(
                            "SELECT id FROM turns WHERE client_request_id = $1", f"long-{r}"
                        )
                        rows = await conn.fetch(
                            """SELECT id, role, content::text AS content, provider_call_id,
                                      tool_name FROM messages
                               WHERE turn_id = $1 AND role IN ('assistant', 'tool')
                               ORDER BY sequence""",
                            turn_id,
                        )
                    steady_rows = rows[2 : 2 + 2 * (LONG - SHORT)]
                    raw.append(await _raw_writes(url, steady_rows, turn_id, sid, fenced=False))
                    raw_fenced.append(
                        await _raw_writes(url, steady_rows, turn_id, sid, fenced=True)
                    )
    finally:
        if BESIDE is not None:
            await BESIDE.conn.close()
        await pool.close()
        await cluster.drop_all()

    steady = LONG - SHORT

    def per_call(key: str) -> float:
        return statistics.median(
            (lc.counts[key] - sc.counts[key]) / steady
            for lc, sc in zip(long_costs, short_costs, strict=True)
        )

    storage = statistics.median(
        (lc.storage_s - sc.storage_s) / steady
        for lc, sc in zip(long_costs, short_costs, strict=True)
    )
    wall = statistics.median(
        (lc.wall_s - sc.wall_s) / steady for lc, sc in zip(long_costs, short_costs, strict=True)
    )
    raw_call = statistics.median(raw) / steady
    fenced_call = statistics.median(raw_fenced) / steady
    print(f"per steady model call ({LONG}-call turn minus {SHORT}-call turn, ÷ {steady}):")
    print(f"  round trips          {per_call('round_trips'):7.2f}")
    print(f"    data statements    {per_call('statements'):7.2f}   (goal ≤ 3)")
    print(f"    BEGIN/COMMIT       {per_call('control'):7.2f}")
    print(f"    pool resets        {per_call('resets'):7.2f}   (goal 0)")
    print(f"    of them trace_spans{per_call('trace_round_trips'):7.2f}   (off the hot path)")
    print(f"  transactions         {per_call('transactions'):7.2f}")
    business = per_call("transactions") - per_call("trace_transactions")
    print(f"    the session's      {business:7.2f}   (goal 1)")
    print(
        f"    trace_spans        {per_call('trace_transactions'):7.2f}   (own connection, batched)"
    )
    print(f"  raw writes           {raw_call * 1000:7.3f} ms   (no fence)")
    print(f"  raw fenced writes    {fenced_call * 1000:7.3f} ms   (+ the lease row FOR SHARE)")
    print(f"  storage path         {storage * 1000:7.3f} ms")
    beside = statistics.median(
        (lc.beside_s - sc.beside_s) / steady for lc, sc in zip(long_costs, short_costs, strict=True)
    )
    print(f"  raw fenced, beside   {beside * 1000:7.3f} ms   (the same write at the same moment)")
    print(f"  storage ÷ raw fenced {storage / fenced_call:7.2f}   (same shape, back to back)")
    print(f"  storage ÷ beside     {storage / beside:7.2f}   (goal ≤ 2.0: same shape, same moment)")
    print(f"  storage ÷ raw        {storage / raw_call:7.2f}   (without the fence)")
    print(f"  whole runtime        {wall * 1000:7.3f} ms")
    if "--queries" in sys.argv:
        print("  round trips by query (per steady call):")
        keys = {k for lc in long_costs for k in lc.counts if k.startswith("q:")}
        for key in sorted(keys, key=lambda k: -per_call(k)):
            if per_call(key) > 0:
                print(f"    {per_call(key):6.2f}  {key[2:]}")
    print(f"  runtime ÷ raw        {wall / raw_call:7.2f}   (for scale)")


if __name__ == "__main__":
    asyncio.run(main())
