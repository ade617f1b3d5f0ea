/**
 * Concurrency caps: at most K requests in flight per server IP (politeness across every host that
 * shares a machine) and at most N in total. Waiters are served first come, first served. Acquire
 * returns `true` synchronously when a slot is free, so the common case allocates no promise.
 */

type Waiter = (granted: boolean) => void;

/** A FIFO of waiters with amortised O(1) shift. */
class WaitQueue {
  private items: Waiter[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(w: Waiter): void {
    this.items.push(w);
  }

  shift(): Waiter | undefined {
    if (this.head >= this.items.length) return undefined;
    const w = this.items[this.head];
    this.items[this.head++] = undefined as unknown as Waiter;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return w;
  }

  drain(): Waiter[] {
    const rest = this.items.slice(this.head);
    this.items = [];
    this.head = 0;
    return rest;
  }
}

class Slots {
  active = 0;
  readonly waiters = new WaitQueue();
}

export interface LimiterStats {
  inFlight: number;
  waitingGlobal: number;
  waitingPerIp: number;
  busyIps: number;
}

export class Limiter {
  private readonly perIp = new Map<string, Slots>();
  private readonly global = new Slots();
  private closed = false;

  constructor(
    readonly perIpLimit: number,
    readonly globalLimit: number,
  ) {
    if (!(Number.isInteger(perIpLimit) && perIpLimit >= 1)) throw new RangeError(`perIpConcurrency must be an integer >= 1, got ${perIpLimit}`);
    if (!(Number.isInteger(globalLimit) && globalLimit >= 1)) throw new RangeError(`maxConcurrency must be an integer >= 1, got ${globalLimit}`);
  }

  /**
   * Takes a slot for `ip`. Resolves false when the limiter closed while waiting. The IP slot is
   * taken before the global one so requests queued behind a busy IP never hold global slots.
   */
  acquire(ip: string): true | Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    let s = this.perIp.get(ip);
    if (s === undefined) {
      s = new Slots();
      this.perIp.set(ip, s);
    }
    if (s.active < this.perIpLimit && s.waiters.length === 0) {
      s.active++;
      return this.acquireGlobal(ip);
    }
    const slots = s;
    return new Promise<boolean>((resolve) => {
      slots.waiters.push((granted) => {
        if (!granted) return resolve(false);
        const g = this.acquireGlobal(ip);
        if (g === true) resolve(true);
        else void g.then(resolve);
      });
    });
  }

  private acquireGlobal(ip: string): true | Promise<boolean> {
    if (this.closed) {
      this.releaseIp(ip);
      return Promise.resolve(false);
    }
    const g = this.global;
    if (g.active < this.globalLimit && g.waiters.length === 0) {
      g.active++;
      return true;
    }
    return new Promise<boolean>((resolve) => {
      g.waiters.push((granted) => {
        if (!granted) this.releaseIp(ip);
        resolve(granted);
      });
    });
  }

  release(ip: string): void {
    const g = this.global;
    const next = g.waiters.shift();
    if (next !== undefined) next(true);
    else g.active--;
    this.releaseIp(ip);
  }

  private releaseIp(ip: string): void {
    const s = this.perIp.get(ip);
    if (s === undefined) return;
    const next = s.waiters.shift();
    if (next !== undefined) {
      next(true);
      return;
    }
    s.active--;
    if (s.active <= 0) this.perIp.delete(ip);
  }

  /** Active requests for one IP (tests, diagnostics). */
  activeFor(ip: string): number {
    return this.perIp.get(ip)?.active ?? 0;
  }

  stats(): LimiterStats {
    let waitingPerIp = 0;
    for (const s of this.perIp.values()) waitingPerIp += s.waiters.length;
    return { inFlight: this.global.active, waitingGlobal: this.global.waiters.length, waitingPerIp, busyIps: this.perIp.size };
  }

  /** Wakes every waiter with `false`; later acquires fail at once. */
  close(): void {
    this.closed = true;
    // Per-IP waiters first: a global waiter's refusal releases its IP slot, which must not hand
    // the slot to a per-IP waiter that would then queue again.
    for (const s of this.perIp.values()) for (const w of s.waiters.drain()) w(false);
    for (const w of this.global.waiters.drain()) w(false);
  }
}
