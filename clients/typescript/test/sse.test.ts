// The SSE parser and the back-off policy (pure; run by tests/unit/daemon/test_typescript_client.py).
import assert from "node:assert/strict";
import { test } from "node:test";

import { backoffMs, SseParser } from "../src/sse.js";

test("events split across chunks come out whole, with their id and name", () => {
  const parser = new SseParser();
  assert.deepEqual(parser.feed('id: 7\ndata: {"a"'), []);
  assert.deepEqual(parser.feed(": 1\n\n"), [{ id: "7", event: "message", data: '{"a": 1' }]);
  assert.deepEqual(parser.feed("event: resync\r\ndata: {}\r\n\r\n"), [
    { id: null, event: "resync", data: "{}" },
  ]);
});

test("comments and blocks without data yield nothing; data lines join with newlines", () => {
  const parser = new SseParser();
  assert.deepEqual(parser.feed(": ping\n\nid: 3\n\n"), []);
  assert.deepEqual(parser.feed("data: one\ndata:two\n\n"), [
    { id: null, event: "message", data: "one\ntwo" },
  ]);
});

test("the back-off doubles from 250 ms and stops at 5 s", () => {
  assert.deepEqual(
    [0, 1, 2, 3, 4, 5, 6, 20].map(backoffMs),
    [250, 500, 1000, 2000, 4000, 5000, 5000, 5000],
  );
});
