/**
 * When a host's queue waits on a retry rather than on the crawl: what `--until-idle` may leave
 * behind. A host is waiting on a retry while its robots.txt is unreachable (the whole host is
 * disallowed until it answers), while it is parked after repeated failures, and while it backs off
 * after a failure — exponential back-off or the server's own Retry-After (429/503). Its plain
 * interval, Crawl-delay and suspension windows are ordinary politeness, never a retry.
 */
import type { HostState } from './state.ts';

/** Time the host's next request waits for as a retry; 0 when it is not waiting on one. */
export function retryWaitUntil(state: Pick<HostState, 'robotsParked' | 'robotsDueAt' | 'pol' | 'nextAt'>): number {
  if (state.robotsParked === true) return state.robotsDueAt ?? Infinity;
  let until = state.pol?.p ?? 0;
  // Consecutive failures: nextAt holds the back-off or the Retry-After, whichever is later.
  if ((state.pol?.f ?? 0) > 0) until = Math.max(until, state.nextAt);
  return until;
}

/** The host counts as parked for `--until-idle`: its retry is more than `idleParkedMs` away. */
export function parkedForIdle(state: Pick<HostState, 'robotsParked' | 'robotsDueAt' | 'pol' | 'nextAt'>, now: number, idleParkedMs: number): boolean {
  return retryWaitUntil(state) - now > idleParkedMs;
}
