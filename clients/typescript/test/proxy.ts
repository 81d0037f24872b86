// A TCP proxy in front of the daemon that the walk can break: `cut()` destroys every open
// connection (a network failure the client did not ask for), `refuse()` makes new connections
// close at once until `admit()`. It records each request line with its Last-Event-ID header
// (bodiless requests only: the walk sends only its event streams through it).
import { createConnection, createServer, type Server, type Socket } from "node:net";

export interface SeenRequest {
  line: string;
  lastEventId: string | null;
}

export class BreakableProxy {
  readonly requests: SeenRequest[] = [];
  refused = 0;
  private refusing = false;
  private readonly open = new Set<Socket>();
  private readonly waiters: Array<() => void> = [];

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(target: string): Promise<BreakableProxy> {
    const upstream = new URL(target);
    let proxy: BreakableProxy | null = null;
    const server = createServer((client) => proxy?.accept(client, upstream));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const address = server.address();
    if (address === null || typeof address === "string") throw new Error("no port");
    proxy = new BreakableProxy(server, `http://127.0.0.1:${address.port}`);
    return proxy;
  }

  private accept(client: Socket, upstream: URL): void {
    if (this.refusing) {
      this.refused += 1;
      client.destroy();
      this.wake();
      return;
    }
    const server = createConnection(Number(upstream.port), upstream.hostname);
    this.open.add(client);
    this.open.add(server);
    let sent = ""; // what the client sent and was not yet read as a request head (GETs only)
    client.on("data", (chunk: Buffer) => {
      sent += chunk.toString("latin1");
      for (let end = sent.indexOf("\r\n\r\n"); end >= 0; end = sent.indexOf("\r\n\r\n")) {
        this.record(sent.slice(0, end));
        sent = sent.slice(end + 4);
      }
      server.write(chunk);
    });
    server.on("data", (chunk: Buffer) => client.write(chunk));
    const close = (): void => {
      client.destroy();
      server.destroy();
      this.open.delete(client);
      this.open.delete(server);
    };
    client.on("close", close).on("error", close);
    server.on("close", close).on("error", close);
  }

  private record(head: string): void {
    const [line = "", ...headers] = head.split("\r\n");
    const last = headers.find((h) => h.toLowerCase().startsWith("last-event-id:"));
    this.requests.push({ line, lastEventId: last ? last.slice(last.indexOf(":") + 1).trim() : null });
    this.wake();
  }

  private wake(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }

  /** Resolves once `done()` holds, re-checked after each recorded connection. */
  async until(done: () => boolean, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!done()) {
      const left = deadline - Date.now();
      if (left <= 0) throw new Error("the proxy did not see what was awaited in time");
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  cut(): void {
    for (const socket of this.open) socket.destroy();
    this.open.clear();
  }

  refuse(): void {
    this.refusing = true;
  }

  admit(): void {
    this.refusing = false;
  }

  async close(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
