// Server-Sent Events over fetch (EventSource cannot send the bearer header): a parser for the
// text/event-stream format and a reader that reconnects with `Last-Event-ID` after a back-off.

/** One event of a text/event-stream (https://html.spec.whatwg.org/multipage/server-sent-events.html). */
export interface SseEvent {
  id: string | null;
  event: string;
  data: string;
}

/** Splits a text/event-stream into events; feed it text as it arrives. Comments (`: ping`) and
 * blocks without `data:` yield nothing. */
export class SseParser {
  private buffer = "";

  feed(text: string): SseEvent[] {
    this.buffer += text;
    const events: SseEvent[] = [];
    for (;;) {
      const match = /\r\n\r\n|\n\n|\r\r/.exec(this.buffer);
      if (match === null) return events;
      const block = this.buffer.slice(0, match.index);
      this.buffer = this.buffer.slice(match.index + match[0].length);
      const event = parseBlock(block);
      if (event !== null) events.push(event);
    }
  }
}

function parseBlock(block: string): SseEvent | null {
  let id: string | null = null;
  let event = "message";
  const data: string[] = [];
  for (const line of block.split(/\r\n|\n|\r/)) {
    if (line === "" || line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "id") id = value;
    else if (field === "event") event = value;
    else if (field === "data") data.push(value);
  }
  return data.length ? { id, event, data: data.join("\n") } : null;
}

/** Milliseconds to wait before reconnect attempt `attempt` (0 = the first after a break):
 * 250 ms, doubling, at most 5 s. */
export function backoffMs(attempt: number): number {
  return Math.min(5_000, 250 * 2 ** Math.max(0, attempt));
}

/** A failed answer that retrying cannot fix (a 4xx: wrong token, unknown session). */
export class StreamRefused extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
  ) {
    super(`the event stream was refused: HTTP ${status} ${body}`);
  }
}

export interface ReconnectingOptions {
  /** Resume after this event id (the last one a previous reader saw). */
  lastEventId?: string | null;
  backoff?: (attempt: number) => number;
  /** Called before each connection attempt with the `Last-Event-ID` it sends (null: none). */
  onConnect?: (lastEventId: string | null) => void;
}

/** A stream of parsed events that survives broken connections: after a break it waits
 * `backoff(attempt)` and reconnects with `Last-Event-ID`; an event whose numeric id is not above
 * the last one seen is dropped (a duplicate); `resync` resets that mark (the server says: read
 * the snapshot, numbering may have started over). Ends when `close()` is called, when the
 * consumer stops iterating, or with `StreamRefused` on a 4xx. */
export class ReconnectingEventSource implements AsyncIterable<SseEvent> {
  private readonly controller = new AbortController();
  private lastId: number | null;
  /** Connections opened after the first one. */
  reconnects = 0;

  constructor(
    private readonly url: string,
    private readonly headers: Record<string, string>,
    private readonly options: ReconnectingOptions = {},
  ) {
    const start = options.lastEventId;
    this.lastId = start === undefined || start === null ? null : Number(start);
  }

  get lastEventId(): string | null {
    return this.lastId === null ? null : String(this.lastId);
  }

  close(): void {
    this.controller.abort();
  }

  get closed(): boolean {
    return this.controller.signal.aborted;
  }

  async *[Symbol.asyncIterator](): AsyncGenerator<SseEvent> {
    const backoff = this.options.backoff ?? backoffMs;
    let attempt = 0;
    let connections = 0;
    try {
      while (!this.closed) {
        try {
          if (connections++ > 0) this.reconnects += 1;
          for await (const event of this.connectOnce(() => (attempt = 0))) {
            yield event;
          }
        } catch (error) {
          if (this.closed || error instanceof StreamRefused) throw error;
        }
        if (this.closed) return;
        await sleep(backoff(attempt++), this.controller.signal);
      }
    } catch (error) {
      if (!this.closed) throw error;
    } finally {
      this.close();
    }
  }

  private async *connectOnce(opened: () => void): AsyncGenerator<SseEvent> {
    const headers: Record<string, string> = { ...this.headers, Accept: "text/event-stream" };
    const resumeFrom = this.lastEventId;
    if (resumeFrom !== null) headers["Last-Event-ID"] = resumeFrom;
    this.options.onConnect?.(resumeFrom);
    const response = await fetch(this.url, { headers, signal: this.controller.signal });
    if (response.status >= 400 && response.status < 500) {
      throw new StreamRefused(response.status, await response.text());
    }
    if (!response.ok || response.body === null) {
      throw new Error(`the event stream answered HTTP ${response.status}`);
    }
    opened();
    const parser = new SseParser();
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        for (const event of parser.feed(value)) {
          if (event.event === "resync") {
            this.lastId = event.id === null ? null : Number(event.id);
            yield event;
            continue;
          }
          if (event.id !== null) {
            const id = Number(event.id);
            if (this.lastId !== null && id <= this.lastId) continue;
            this.lastId = id;
          }
          yield event;
        }
      }
    } finally {
      reader.cancel().catch(() => undefined);
    }
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
  });
}
