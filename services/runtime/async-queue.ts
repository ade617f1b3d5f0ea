/** A minimal async channel: producers push, one consumer iterates with `for await`. */
export class AsyncQueue<T> implements AsyncIterable<T> {
  private items: T[] = [];
  private waiting: (() => void) | undefined;
  private drainWaiters: (() => void)[] = [];
  private ended = false;
  private error: unknown;

  constructor(private readonly highWaterMark = 16) {}

  push(item: T): void {
    if (this.ended) return;
    this.items.push(item);
    this.wake();
  }

  end(): void {
    this.ended = true;
    this.wake();
  }

  fail(err: unknown): void {
    this.error = err;
    this.end();
  }

  /** Resolves when the queue is below its high-water mark (back-pressure for producers). */
  drained(): Promise<void> {
    if (this.items.length < this.highWaterMark || this.ended) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  private wake(): void {
    const w = this.waiting;
    this.waiting = undefined;
    w?.();
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    while (true) {
      const item = this.items.shift();
      if (item !== undefined) {
        if (this.items.length < this.highWaterMark) {
          const waiters = this.drainWaiters;
          this.drainWaiters = [];
          for (const d of waiters) d();
        }
        yield item;
        continue;
      }
      if (this.error !== undefined) throw this.error;
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.waiting = resolve));
    }
  }
}
