/**
 * When a host's queue waits on a retry rather than on the crawl: what `--until-idle` may leave
 * behind. A host is waiting on a retry while its robots.txt is unreachable (the whole host is
 * disallowed until it answers), while it is parked after repeated failures, and while it backs off
 * after a failure — exponential back-off or the server's own Retry-After (429/503). Its plain
 * interval, Crawl-delay and suspension windows are ordinary politeness, never a retry.
 */
import type { HostState } from './state.ts';

/** Time the host's next request waits for as a retry; 0 when it is not waiting on one. */
export function retryWaitUntil(state: Pick<HostState, 'robotsParked' | 'robotsDueAt' | 'politeness' | 'nextAt'>): number {
  if (state.robotsParked === true) return state.robotsDueAt ?? Infinity;
  let until = state.politeness?.p ?? 0;
  // Consecutive failures: nextAt holds the back-off or the Retry-After, whichever is later.
  if ((state.politeness?.f ?? 0) > 0) until = Math.max(until, state.nextAt);
  return until;
}

/** The host counts as parked for `--until-idle`: its retry is more than `idleParkedMs` away. */
export function parkedForIdle(state: Pick<HostState, 'robotsParked' | 'robotsDueAt' | 'politeness' | 'nextAt'>, now: number, idleParkedMs: number): boolean {
  return retryWaitUntil(state) - now > idleParkedMs;
}

/**
 * The partition's parked hosts (parkedForIdle) and the URLs queued on them: work that waits on a
 * retry, not on the crawl, which `--until-idle` does not wait for. Short waits (the first
 * robots.txt retry, a brief back-off) are waited for like any other work.
 */
export class ParkedHosts {
  private readonly hosts = new Set<string>();
  private countedAt = -Infinity;
  /** URLs queued on parked hosts when last counted (at most once a second). */
  queued = 0;

  constructor(private readonly idleParkedMs: number) {}

  /** Notes whether the host counts as parked now, after its state changed. */
  track(host: string, state: HostState, now: number): void {
    if (parkedForIdle(state, now, this.idleParkedMs)) this.hosts.add(host);
    else this.hosts.delete(host);
  }

  /** Counts the URLs queued on parked hosts again, a second after the last count. */
  async count(now: number, stateOf: (host: string) => Promise<HostState | undefined>): Promise<void> {
    if (now - this.countedAt < 1000) return;
    this.countedAt = now;
    let queued = 0;
    for (const host of this.hosts) {
      const state = await stateOf(host);
      if (!state) this.hosts.delete(host);
      else {
        this.track(host, state, now);
        if (this.hosts.has(host)) queued += state.queued;
      }
    }
    this.queued = queued;
  }
}
