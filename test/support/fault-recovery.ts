/**
 * How a crawl came back from a fault, as pure functions of what it left behind: the fetch times the
 * simulated web logged (recovery time against the rate before the fault) and the services' logs
 * (restores, generations lost). docs/reliability.md explains each figure.
 */

/** A fault from its first action to the moment it ended (broker back, process started again). */
export interface FaultWindow {
  readonly startMs: number;
  readonly endMs: number;
}

/** The rate before a fault is measured over this long, and the rate after over RATE_WINDOW_MS. */
const BEFORE_MS = 30_000;
const RATE_WINDOW_MS = 10_000;

/**
 * Milliseconds from the fault's end until the fetch rate over RATE_WINDOW_MS is back to `share` of
 * the rate over the BEFORE_MS before the fault. A crawl that runs out of work first (its last
 * fetch falls inside the window) counts as recovered when it did, so a crawl that only crawled on
 * slowly to its end shows the whole time. Undefined when nothing was fetched before the fault (no
 * rate to come back to) or after it.
 */
export function recoveryMs(fetchTimes: readonly number[], fault: FaultWindow, share = 0.9): number | undefined {
  const times = [...fetchTimes].sort((a, b) => a - b);
  if (times.length === 0) return undefined;
  const last = times[times.length - 1]!;
  const count = (from: number, to: number): number => upperBound(times, to) - upperBound(times, from);
  const before = count(fault.startMs - BEFORE_MS, fault.startMs) / BEFORE_MS;
  if (before <= 0 || last < fault.endMs) return undefined;
  for (let t = fault.endMs; t <= last; t += 500) {
    if (t + RATE_WINDOW_MS > last) return Math.max(0, last - fault.endMs);
    if (count(t, t + RATE_WINDOW_MS) / RATE_WINDOW_MS >= share * before) return t - fault.endMs;
  }
  return undefined;
}

/** Index of the first element greater than x (sorted ascending). */
function upperBound(sorted: readonly number[], x: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid]! <= x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export interface LogEvents {
  /** Stores restored from their changelogs with records to replay (an open with a current store replays none). */
  readonly restores: number;
  /** Changelog records those restores replayed. */
  readonly restoredRecords: number;
  /** Times a member found its group generation lost (every task migrated). */
  readonly generationsLost: number;
  /** Rebalances members were told of (kafkajs: "The group is rebalancing"). */
  readonly rebalances: number;
}

/** Counts the events in services' pino logs (one JSON object per line), from `sinceMs` on. */
export function logEvents(logs: readonly string[], sinceMs = 0): LogEvents {
  let restores = 0;
  let restoredRecords = 0;
  let generationsLost = 0;
  let rebalances = 0;
  for (const log of logs) {
    for (const line of log.split('\n')) {
      if (sinceMs > 0 && Number(/"time":(\d+)/.exec(line)?.[1] ?? 0) < sinceMs) continue;
      if (line.includes('The group is rebalancing')) rebalances++;
      if (line.includes('store restored from changelog')) {
        const records = Number(/"records":(\d+)/.exec(line)?.[1] ?? 0);
        if (records > 0) restores++;
        restoredRecords += records;
      } else if (line.includes('group generation lost')) {
        generationsLost++;
      }
    }
  }
  return { restores, restoredRecords, generationsLost, rebalances };
}
