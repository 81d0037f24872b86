// A small fetch client of the daemon, written against the types openapi-typescript generates
// from docs/openapi.json (`npm run generate`). The suite type-checks it and runs it under Node
// against a real daemon (test/walk.test.ts, driven by tests/e2e/test_typescript_walk.py).
import type { components, operations } from "./openapi.js";
import { ReconnectingEventSource, type ReconnectingOptions } from "./sse.js";

type Schemas = components["schemas"];
export type Session = Schemas["SessionSummary"];
export type SessionPage = Schemas["SessionPage"];
export type TurnPage = Schemas["TurnPage"];
export type Envelope = Schemas["SessionUpdateEnvelopeBody"];
export type Update = Envelope["update"];
export type ApiError = Schemas["ErrorEnvelope"]["error"];

type JsonBody<Op> = Op extends { requestBody: { content: { "application/json": infer B } } }
  ? B
  : never;
type Answer<Op, Status extends number> = Op extends {
  responses: { [S in Status]: { content: { "application/json": infer R } } };
}
  ? R
  : never;

export class OpenWorkError extends Error {
  constructor(readonly status: number, readonly error: ApiError) {
    super(`${status} ${error.code}: ${error.message}`);
  }
}

/** One session update as the event streams deliver it, with the SSE id it came with. */
export interface Delivered {
  id: string | null;
  envelope: Envelope;
}

/** Typed session updates over a reconnecting SSE connection (see ReconnectingEventSource). It
 * ends after `stream_ended` with reason `deleted`; after `unloaded` it connects again (which
 * loads the session). */
export class UpdateStream implements AsyncIterable<Delivered> {
  constructor(private readonly source: ReconnectingEventSource) {}

  get lastEventId(): string | null {
    return this.source.lastEventId;
  }

  get reconnects(): number {
    return this.source.reconnects;
  }

  close(): void {
    this.source.close();
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<Delivered> {
    for await (const event of this.source) {
      const envelope = JSON.parse(event.data) as Envelope;
      yield { id: event.id, envelope };
      if (envelope.update.type === "stream_ended" && envelope.update.reason === "deleted") {
        this.close();
        return;
      }
    }
  }
}

type Path<Op> = Op extends { parameters: { path: infer P } } ? P : never;
type Decision = JsonBody<operations["resolvePermission"]>["decision"];
const seg = encodeURIComponent;

export class OpenWorkClient {
  constructor(
    readonly baseUrl: string,
    private readonly token: string,
  ) {}

  private get auth(): Record<string, string> {
    return { Authorization: `Bearer ${this.token}` };
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const init: RequestInit = { method, headers: { ...this.auth } };
    if (body !== undefined) {
      init.body = JSON.stringify(body);
      init.headers = { ...this.auth, "Content-Type": "application/json" };
    }
    const response = await fetch(this.baseUrl + path, init);
    if (!response.ok) {
      const envelope = (await response.json()) as Schemas["ErrorEnvelope"];
      throw new OpenWorkError(response.status, envelope.error);
    }
    return (response.status === 204 ? undefined : await response.json()) as T;
  }

  health(): Promise<Answer<operations["getHealth"], 200>> {
    return this.call("GET", "/v1/health");
  }

  createSession(
    body: JsonBody<operations["createSession"]>,
  ): Promise<Answer<operations["createSession"], 201>> {
    return this.call("POST", "/v1/sessions", body);
  }

  getSession(sid: string): Promise<Answer<operations["getSession"], 200>> {
    return this.call("GET", `/v1/sessions/${seg(sid)}`);
  }

  async *allSessions(
    query: NonNullable<operations["listSessions"]["parameters"]["query"]> = {},
  ): AsyncGenerator<Session> {
    let cursor: string | null = null;
    do {
      const params = new URLSearchParams();
      if (query.workspace) params.set("workspace", query.workspace);
      if (query.archived !== undefined && query.archived !== null) {
        params.set("archived", String(query.archived));
      }
      if (query.limit !== undefined && query.limit !== null) params.set("limit", String(query.limit));
      if (cursor) params.set("cursor", cursor);
      const page: SessionPage = await this.call("GET", `/v1/sessions?${params}`);
      yield* page.sessions;
      cursor = page.next_cursor;
    } while (cursor);
  }

  rename(sid: string, title: string | null): Promise<Answer<operations["updateSession"], 200>> {
    const body: JsonBody<operations["updateSession"]> = { title };
    return this.call("PATCH", `/v1/sessions/${seg(sid)}`, body);
  }

  deleteSession(sid: string): Promise<void> {
    return this.call("DELETE", `/v1/sessions/${seg(sid)}`);
  }

  startTurn(
    sid: string,
    text: string,
    clientRequestId: string = crypto.randomUUID(),
  ): Promise<Answer<operations["startTurn"], 202>> {
    const body: JsonBody<operations["startTurn"]> = {
      client_request_id: clientRequestId,
      input: [{ type: "text", text }],
    };
    return this.call("POST", `/v1/sessions/${seg(sid)}/turns`, body);
  }

  getTurn(sid: string, tid: string): Promise<Answer<operations["getTurn"], 200>> {
    return this.call("GET", `/v1/sessions/${seg(sid)}/turns/${seg(tid)}`);
  }

  cancelTurn(sid: string, tid: string): Promise<Answer<operations["cancelTurn"], 202>> {
    return this.call("POST", `/v1/sessions/${seg(sid)}/turns/${seg(tid)}/cancel`);
  }

  resolvePermission(
    where: Path<operations["resolvePermission"]>,
    decision: Decision,
  ): Promise<Answer<operations["resolvePermission"], 202>> {
    const body: JsonBody<operations["resolvePermission"]> = { decision };
    const { sid, tid, tool_call_id } = where;
    return this.call(
      "POST",
      `/v1/sessions/${seg(sid)}/turns/${seg(tid)}/permissions/${seg(tool_call_id)}`,
      body,
    );
  }

  turns(sid: string): Promise<TurnPage> {
    return this.call("GET", `/v1/sessions/${seg(sid)}/turns`);
  }

  inspect(sid: string): Promise<Answer<operations["inspectContext"], 200>> {
    return this.call("GET", `/v1/sessions/${seg(sid)}/context`);
  }

  overview(sid: string): Promise<Answer<operations["getContextOverview"], 200>> {
    return this.call("GET", `/v1/sessions/${seg(sid)}/context/overview`);
  }

  /** The session's updates: replayed after `options.lastEventId`, then live, reconnecting. */
  events(sid: string, options: ReconnectingOptions = {}): UpdateStream {
    const url = `${this.baseUrl}/v1/sessions/${seg(sid)}/events`;
    return new UpdateStream(new ReconnectingEventSource(url, this.auth, options));
  }

  /** Every session's updates (the global stream; its ids are the broadcast's own). */
  allEvents(options: ReconnectingOptions = {}): UpdateStream {
    return new UpdateStream(
      new ReconnectingEventSource(`${this.baseUrl}/v1/events`, this.auth, options),
    );
  }
}

/** One line per update kind; the `never` makes a new, unhandled kind a type error. */
export function describe(update: Update): string {
  switch (update.type) {
    case "turn_started":
      return `turn started (${update.clientRequestId})`;
    case "turn_steered":
      return `steered: ${update.text}`;
    case "phase_changed":
      return `phase ${update.phase}`;
    case "text_delta":
    case "reasoning_delta":
      return update.delta;
    case "draft_cleared":
      return "draft cleared";
    case "tool_call_started":
      return `${update.toolCall.name} started`;
    case "tool_call_progress":
      return update.progress.chunk ?? update.progress.message ?? "";
    case "tool_call_finished":
      return `${update.toolName} ${update.status}${update.isError ? " (error)" : ""}`;
    case "permission_requested":
      return "permission requested";
    case "permission_resolved":
      return `permission ${update.decision}`;
    case "plan_updated":
      return `plan: ${update.plan.length} steps`;
    case "context_updated":
      return `${update.estimatedInputTokens} input tokens, ${update.autoCompactPercent}% to compaction`;
    case "warning":
      return `warning ${update.code}: ${update.message}`;
    case "turn_finished":
      return "turn finished";
    case "resync":
      return "resync: read the snapshot";
    case "stream_ended":
      return `stream ended (${update.reason})`;
    default: {
      const unhandled: never = update;
      return unhandled;
    }
  }
}

export function windowShare(overview: Schemas["ContextOverviewBody"]): Record<string, number> {
  const shares: Record<string, number> = {};
  for (const segment of overview.bar.segments) {
    shares[segment.region] = segment.tokens / overview.bar.context_window;
  }
  return shares;
}
