// A small client written against the types openapi-typescript generates from docs/openapi.json
// (issue 16 point 3). `npm run generate && npm run check` type-checks it; nothing here is run.
import type { components, operations } from "./openapi";

type Schemas = components["schemas"];
export type Session = Schemas["SessionSummaryBody"];
export type SessionPage = Schemas["SessionPageBody"];
export type TurnPage = Schemas["TurnPageBody"];
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

export class OpenWorkClient {
  constructor(private readonly baseUrl: string, private readonly token: string) {}

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const init: RequestInit = {
      method,
      headers: { Authorization: `Bearer ${this.token}`, "Content-Type": "application/json" },
    };
    if (body !== undefined) init.body = JSON.stringify(body);
    const response = await fetch(this.baseUrl + path, init);
    if (!response.ok) {
      const envelope = (await response.json()) as Schemas["ErrorEnvelope"];
      throw new OpenWorkError(response.status, envelope.error);
    }
    return (response.status === 204 ? undefined : await response.json()) as T;
  }

  createSession(
    body: JsonBody<operations["createSession"]>,
  ): Promise<Answer<operations["createSession"], 201>> {
    return this.call("POST", "/v1/sessions", body);
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
      if (cursor) params.set("cursor", cursor);
      const page: SessionPage = await this.call("GET", `/v1/sessions?${params}`);
      yield* page.sessions;
      cursor = page.next_cursor;
    } while (cursor);
  }

  rename(sid: string, title: string | null): Promise<Answer<operations["updateSession"], 200>> {
    const body: JsonBody<operations["updateSession"]> = { title };
    return this.call("PATCH", `/v1/sessions/${encodeURIComponent(sid)}`, body);
  }

  deleteSession(sid: string): Promise<void> {
    return this.call("DELETE", `/v1/sessions/${encodeURIComponent(sid)}`);
  }

  startTurn(sid: string, text: string): Promise<Answer<operations["startTurn"], 202>> {
    const body: JsonBody<operations["startTurn"]> = {
      client_request_id: crypto.randomUUID(),
      input: [{ type: "text", text }],
    };
    return this.call("POST", `/v1/sessions/${encodeURIComponent(sid)}/turns`, body);
  }

  turns(sid: string): Promise<TurnPage> {
    return this.call("GET", `/v1/sessions/${encodeURIComponent(sid)}/turns`);
  }

  overview(sid: string): Promise<Answer<operations["getContextOverview"], 200>> {
    return this.call("GET", `/v1/sessions/${encodeURIComponent(sid)}/context/overview`);
  }
}

/** One line per update kind; the `never` makes a new, unhandled kind a type error. */
export function describe(update: Update): string {
  switch (update.type) {
    case "turn_started":
      return `turn started (${update.clientRequestId})`;
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
