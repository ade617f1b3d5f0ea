/**
 * Time for every piece of logic that schedules: politeness gaps, revisit sweeps, request timeouts,
 * and the simulated web's page changes. Processors read time from their context, never from
 * Date.now(), so tests and benchmarks can run days of crawl time in seconds.
 */
export interface Clock {
  /** Milliseconds since the Unix epoch, in this clock's time. */
  now(): number;
  /** Resolves after `ms` of this clock's time has passed. */
  sleep(ms: number): Promise<void>;
  /**
   * Clock milliseconds per wall millisecond (absent: 1). Durations measured in wall time, such as
   * a download's, are multiplied by it, so they compare with intervals on this clock.
   */
  readonly speed?: number;
}

/** A wall-clock duration in the clock's milliseconds. */
export function clockDuration(clock: Clock, wallMs: number): number {
  return wallMs * (clock.speed ?? 1);
}

/** Wall-clock time. */
export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: (ms) => new Promise((resolve) => setTimeout(resolve, Math.max(0, ms))),
};

/**
 * A clock that runs `speed` times faster than wall time from `startMs`; speed 86400 runs a day per
 * second. Sleeping is scaled the same way, so real I/O and simulated time stay consistent.
 */
export class ScaledClock implements Clock {
  /**
   * `wallStartMs` is the wall time at which this clock reads `startMs` (default: now). Processes
   * that give the same start and wall start share one clock, e.g. a crawler and the simulated web.
   */
  constructor(
    readonly startMs: number,
    readonly speed: number,
    private readonly wallStart = Date.now(),
  ) {
    if (!(speed > 0)) throw new RangeError(`clock speed must be > 0, got ${speed}`);
  }
  now(): number {
    // Whole milliseconds, like Date.now(): record timestamps and schema times are integers.
    return Math.floor(this.startMs + (Date.now() - this.wallStart) * this.speed);
  }
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms / this.speed)));
  }
}

/** A clock that only moves when told to; for unit tests of time-dependent logic. */
export class ManualClock implements Clock {
  private waiters: { at: number; resolve: () => void }[] = [];
  constructor(private current = 0) {}
  now(): number {
    return this.current;
  }
  sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.waiters.push({ at: this.current + Math.max(0, ms), resolve });
    });
  }
  /** Moves time forward and wakes every sleeper whose time has come. */
  advance(ms: number): void {
    this.current += ms;
    const due = this.waiters.filter((w) => w.at <= this.current);
    this.waiters = this.waiters.filter((w) => w.at > this.current);
    for (const w of due) w.resolve();
  }
}
