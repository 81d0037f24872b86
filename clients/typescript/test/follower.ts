// Reads an UpdateStream in the background and lets a test await the update it needs (bounded).
import type { Delivered, Envelope, Update, UpdateStream } from "../src/client.js";

type Of<K extends Update["type"]> = Extract<Update, { type: K }>;

export class Follower {
  readonly seen: Delivered[] = [];
  ended = false;
  failure: unknown = null;
  private readonly waiters: Array<() => void> = [];
  readonly done: Promise<void>;

  constructor(readonly stream: UpdateStream) {
    this.done = this.pump();
  }

  private async pump(): Promise<void> {
    try {
      for await (const delivered of this.stream) {
        this.seen.push(delivered);
        this.wake();
      }
    } catch (error) {
      this.failure = error;
    } finally {
      this.ended = true;
      this.wake();
    }
  }

  private wake(): void {
    for (const waiter of this.waiters.splice(0)) waiter();
  }

  /** The first envelope of `turnId` whose update is of kind `kind`, awaited (bounded). */
  async next<K extends Update["type"]>(
    turnId: string | null,
    kind: K,
    timeoutMs = 20_000,
  ): Promise<Envelope & { update: Of<K> }> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.of(turnId, kind)[0];
      if (found !== undefined) return found;
      if (this.ended) throw new Error(`the stream ended before ${kind}: ${String(this.failure)}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`no ${kind} within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Every envelope of `turnId` (null: of any turn) whose update is of kind `kind`, in order. */
  of<K extends Update["type"]>(turnId: string | null, kind: K): Array<Envelope & { update: Of<K> }> {
    return this.seen
      .map((d) => d.envelope)
      .filter((e): e is Envelope & { update: Of<K> } => e.update.type === kind)
      .filter((e) => turnId === null || e.turnId === turnId);
  }

  envelopes(turnId: string): Envelope[] {
    return this.seen.map((d) => d.envelope).filter((e) => e.turnId === turnId);
  }

  text(turnId: string): string {
    return this.of(turnId, "text_delta")
      .map((e) => e.update.delta)
      .join("");
  }

  async stop(): Promise<void> {
    this.stream.close();
    await this.done;
  }
}
