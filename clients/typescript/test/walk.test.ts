// The developer's walk (issue 25 point 4), as a desktop app would do it with this client alone:
// discover, create, stream a turn, approve a card, stream bash progress, cancel, reconnect
// without loss or duplicates, list, rename, delete. Run under Node by
// tests/e2e/test_typescript_walk.py against a real `openwork serve` whose fake provider is
// scripted in the order of the steps below (they run in order and share the session).
import assert from "node:assert/strict";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";

import { OpenWorkClient, OpenWorkError, type Envelope } from "../src/client.js";
import { connect, discover, NoDaemon, type DaemonInfo } from "../src/discovery.js";
import { Follower } from "./follower.js";
import { BreakableProxy } from "./proxy.js";

const HOME = required("OPENWORK_HOME");
const WORKSPACE = required("WALK_WORKSPACE");
export const LONG_TEXT = required("WALK_LONG_TEXT");

let info: DaemonInfo;
let client: OpenWorkClient;
let sid: string;
const followers: Follower[] = [];

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set (tests/e2e/test_typescript_walk.py sets it)`);
  return value;
}

/** The session's updates after `last` (default: the snapshot's last sequence, desktop-protocol
 * §4: nothing between the snapshot and the stream is missed). */
async function follow(through: OpenWorkClient = client, last?: number): Promise<Follower> {
  const after = last ?? (await client.getSession(sid)).snapshot.lastUpdateSequence;
  const follower = new Follower(through.events(sid, { lastEventId: String(after) }));
  followers.push(follower);
  return follower;
}

function assertContiguous(envelopes: Envelope[]): void {
  const sequences = envelopes.map((e) => e.sequence);
  const first = sequences[0] ?? 0;
  assert.deepEqual(
    sequences,
    sequences.map((_, i) => first + i),
    "each update once, none missing",
  );
}

before(async () => {
  ({ info, client } = await connect(HOME));
});

after(async () => {
  await Promise.all(followers.map((f) => f.stop()));
});

test("discover: daemon.json names the daemon, its token works, a wrong home says so", async () => {
  assert.match(info.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  const health = await client.health();
  assert.equal(health.status, "ok");
  assert.equal(health.version, info.version);
  await assert.rejects(discover(join(HOME, "no-such-home")), NoDaemon);
  await assert.rejects(new OpenWorkClient(info.url, "wrong").getSession("ses_x"), (e: unknown) => {
    assert.ok(e instanceof OpenWorkError);
    assert.equal(e.status, 401);
    return true;
  });
});

test("create: a session in the workspace", async () => {
  const created = await client.createSession({ workspace: WORKSPACE }); // the rest defaults
  assert.equal(created.workspace, WORKSPACE);
  sid = created.session_id;
});

test("stream a turn: its text arrives as deltas, then turn_finished completed", async () => {
  const events = await follow();
  const { turn_id } = await client.startTurn(sid, "Say hello");
  const finished = await events.next(turn_id, "turn_finished");
  assert.equal(events.text(turn_id), "Hello from the fake provider.");
  assert.deepEqual(finished.update.outcome, {
    status: "completed",
    finalText: "Hello from the fake provider.",
  });
  const started = await events.next(turn_id, "turn_started");
  assert.ok(started.sequence < finished.sequence);
  assertContiguous(events.envelopes(turn_id));
  assert.equal((await client.getTurn(sid, turn_id)).status, "completed");
});

test("approve a card and stream bash progress: the command runs once allowed", async () => {
  mkdirSync(join(WORKSPACE, "build"), { recursive: true });
  const events = await follow();
  const { turn_id } = await client.startTurn(sid, "Clean up the build");
  const asked = await events.next(turn_id, "permission_requested");
  const { request } = asked.update;
  assert.equal(request.toolName, "bash");
  assert.equal(request.card.command, "echo removing; rm -rf build; echo removed");
  assert.equal(request.card.danger?.key, "rm_recursive_or_force");
  assert.ok(existsSync(join(WORKSPACE, "build")), "nothing runs before the approval");
  await client.resolvePermission(
    { sid, tid: turn_id, tool_call_id: request.toolCallId },
    "allow_once",
  );
  const finished = await events.next(turn_id, "turn_finished");
  assert.equal(finished.update.outcome.status, "completed");
  const resolved = await events.next(turn_id, "permission_resolved");
  assert.equal(resolved.update.decision, "allow_once");
  const progress = events.of(turn_id, "tool_call_progress");
  const output = progress.map((e) => e.update.progress.chunk ?? "").join("");
  assert.equal(output, "removing\nremoved\n");
  const done = await events.next(turn_id, "tool_call_finished");
  assert.ok(progress.every((e) => e.sequence < done.sequence), "live output before the result");
  assert.equal(done.update.status, "succeeded");
  assert.equal(done.update.isError, false);
  assert.ok(!existsSync(join(WORKSPACE, "build")));
  assert.equal(events.text(turn_id), "Removed the build folder.");
  assertContiguous(events.envelopes(turn_id));
});

test("cancel: a running command is stopped and the turn ends cancelled", async () => {
  const events = await follow();
  const { turn_id } = await client.startTurn(sid, "Run the long job");
  const first = await events.next(turn_id, "tool_call_progress");
  assert.equal(first.update.progress.chunk, "started\n");
  const cancelled = await client.cancelTurn(sid, turn_id);
  assert.equal(cancelled.turn_id, turn_id);
  const finished = await events.next(turn_id, "turn_finished");
  assert.deepEqual(finished.update.outcome, { status: "cancelled" });
  assert.equal((await client.getTurn(sid, turn_id)).status, "cancelled");
  await assert.rejects(client.cancelTurn(sid, turn_id), (e: unknown) => {
    assert.ok(e instanceof OpenWorkError);
    assert.equal(e.status, 409);
    assert.equal(e.error.code, "turn_not_active");
    return true;
  });
});

test("reconnect: after a broken connection every update arrives once, none lost", async () => {
  mkdirSync(join(WORKSPACE, "build2"), { recursive: true });
  const proxy = await BreakableProxy.start(info.url);
  try {
    const viaProxy = new OpenWorkClient(proxy.url, info.token);
    const events = await follow(viaProxy);
    const { turn_id } = await client.startTurn(sid, "Clean up again and tell me a story");
    const asked = await events.next(turn_id, "permission_requested");

    // The network fails; while the client retries (refused), the turn runs to its end.
    proxy.refuse();
    proxy.cut();
    const direct = await follow(client, asked.sequence);
    await client.resolvePermission(
      { sid, tid: turn_id, tool_call_id: asked.update.request.toolCallId },
      "allow_once",
    );
    await direct.next(turn_id, "turn_finished");
    await proxy.until(() => proxy.refused >= 2);
    proxy.admit();

    const finished = await events.next(turn_id, "turn_finished");
    assert.equal(finished.update.outcome.status, "completed");
    const mine = events.envelopes(turn_id);
    assertContiguous(mine);
    const after = (list: Envelope[]): string[] =>
      list.filter((e) => e.sequence > asked.sequence).map((e) => `${e.sequence} ${e.update.type}`);
    assert.deepEqual(after(mine), after(direct.envelopes(turn_id)), "what was missed, replayed");
    assert.equal(events.text(turn_id), LONG_TEXT);
    assert.ok(events.stream.reconnects >= 3, `reconnects: ${events.stream.reconnects}`);
    // every retry resumed after the last update the broken connection delivered
    const resolved = await events.next(turn_id, "permission_resolved");
    const resumed = proxy.requests.filter((r) => r.line.includes("/events")).slice(1);
    assert.ok(resumed.length >= 1);
    const ids = new Set(resumed.map((r) => Number(r.lastEventId)));
    assert.equal(ids.size, 1, `one Last-Event-ID: ${[...ids]}`);
    const [resumedAfter = 0] = ids;
    assert.ok(asked.sequence <= resumedAfter && resumedAfter < resolved.sequence);
    assert.ok(!existsSync(join(WORKSPACE, "build2")));
  } finally {
    await proxy.close();
  }
});

test("list and rename: the session is listed with its title, then with the new one", async () => {
  const listed = [];
  for await (const session of client.allSessions({ workspace: WORKSPACE, limit: 1 })) {
    listed.push(session);
  }
  assert.deepEqual(
    listed.map((s) => [s.session_id, s.title, s.status, s.turn_count]),
    [[sid, "Say hello", "idle", 4]],
  );
  const renamed = await client.rename(sid, "The developer's walk");
  assert.equal(renamed.title, "The developer's walk");
  assert.equal(renamed.title_is_derived, false);
  const again = [];
  for await (const session of client.allSessions({ workspace: WORKSPACE })) again.push(session);
  assert.deepEqual(
    again.map((s) => s.title),
    ["The developer's walk"],
  );
});

test("delete: the session's stream ends with stream_ended, its routes answer 404", async () => {
  const events = await follow();
  await client.deleteSession(sid);
  const ended = await events.next(null, "stream_ended");
  assert.equal(ended.update.reason, "deleted");
  await events.done;
  assert.equal(events.failure, null, "the stream ended, it did not fail");
  assert.equal(events.seen.at(-1)?.envelope.update.type, "stream_ended");
  await assert.rejects(client.getSession(sid), (e: unknown) => {
    assert.ok(e instanceof OpenWorkError);
    assert.equal(e.status, 404);
    assert.equal(e.error.code, "not_found");
    return true;
  });
  const left = [];
  for await (const session of client.allSessions({ workspace: WORKSPACE })) left.push(session);
  assert.deepEqual(left, []);
});
