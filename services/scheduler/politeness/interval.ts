/**
 * The host interval: the gap between the end of one request to a host and the start of the next,
 * as the maximum of every rule that bounds it from below.
 */
import type { PolitenessConfig } from './config.ts';
import type { PolitenessState } from './state.ts';
import { RING_SIZE, ringError, ringErrorCount, ringSpeedBytesPerS } from './state.ts';

/** What the scheduler knows about a host and the crawl that the stored state does not hold. */
export interface PolitenessContext {
  /** Crawl-delay of the host's robots.txt group, ms. */
  crawlDelayMs?: number;
  /** S: servers (hosts) being crawled. */
  servers?: number;
  /** C: parallel connections of the crawl. */
  connections?: number;
}

export type IntervalRule = 'min' | 'crawl-delay' | 'dynamic' | 'k-e' | 'keep-alive';

export interface HostInterval {
  ms: number;
  /** The rule that gave the maximum. */
  rule: IntervalRule;
  parts: { floorMs: number; crawlDelayMs: number; dynamicMs: number; kEMs: number };
}

/**
 * Muraoka et al., Table 2:
 *   interval = minInterval + maxDelay1·max(0, 1 − speed/targetSpeed) + maxDelay2·errors/10
 * An unknown speed (nothing measured yet) adds no speed delay; k × e and the floor still apply.
 */
export function dynamicIntervalMs(
  minIntervalMs: number,
  speedBytesPerS: number | undefined,
  errors: number,
  config: Pick<PolitenessConfig, 'maxDelay1Ms' | 'maxDelay2Ms' | 'targetSpeedBytesPerS'>,
): number {
  const slow = speedBytesPerS === undefined ? 0 : Math.max(0, 1 - speedBytesPerS / config.targetSpeedBytesPerS);
  const bad = Math.min(RING_SIZE, Math.max(0, errors)) / RING_SIZE;
  return Math.round(minIntervalMs + config.maxDelay1Ms * slow + config.maxDelay2Ms * bad);
}

/** k of the k × e rule: S/C when both are known (the incremental archive crawler paper, eq. 10), else the configured k (≥ 10). */
export function kFor(config: Pick<PolitenessConfig, 'kFactor'>, ctx: PolitenessContext = {}): number {
  if (ctx.servers !== undefined && ctx.connections !== undefined && ctx.servers > 0 && ctx.connections > 0) return ctx.servers / ctx.connections;
  return config.kFactor;
}

/** The incremental archive crawler paper / Najork: wait k times the download time e. */
export function kTimesEMs(k: number, fetchMs: number | undefined): number {
  return fetchMs === undefined ? 0 : Math.round(k * fetchMs);
}

/**
 * e of the k × e rule: the shorter of the last two error-free download times. A single slow
 * download does not multiply the interval by k: on a busy crawler it is mostly the crawler's own
 * pause (a GC, a full event loop), which lengthens every fetch in flight at once; a server that
 * stays slow is caught on its second slow answer.
 */
export function recentFetchMs(state: PolitenessState): number | undefined {
  let shortest: number | undefined;
  let seen = 0;
  for (let i = state.t.length - 1; i >= 0 && seen < 2; i--) {
    if (ringError(state, i)) continue;
    const t = state.t[i] ?? 0;
    shortest = shortest === undefined ? t : Math.min(shortest, t);
    seen++;
  }
  return shortest;
}

/**
 * Host interval = max(configured minimum, robots Crawl-delay, dynamic interval, k·e).
 * In keep-alive mode the floor (and the formula's minInterval) is keepAliveIntervalMs and k·e is
 * not applied: the host is crawled in bursts over one connection and rests when it is closed.
 */
export function hostInterval(state: PolitenessState, config: PolitenessConfig, ctx: PolitenessContext = {}): HostInterval {
  const floorMs = config.keepAliveMode ? config.keepAliveIntervalMs : config.minIntervalMs;
  const crawlDelayMs = Math.max(0, ctx.crawlDelayMs ?? 0);
  const dynamicMs = dynamicIntervalMs(floorMs, ringSpeedBytesPerS(state), ringErrorCount(state), config);
  const kEMs = config.keepAliveMode ? 0 : kTimesEMs(kFor(config, ctx), recentFetchMs(state));
  let ms = floorMs;
  let rule: IntervalRule = config.keepAliveMode ? 'keep-alive' : 'min';
  // Strictly greater: on a tie the simpler rule is reported.
  if (crawlDelayMs > ms) [ms, rule] = [crawlDelayMs, 'crawl-delay'];
  if (dynamicMs > ms) [ms, rule] = [dynamicMs, 'dynamic'];
  if (kEMs > ms) [ms, rule] = [kEMs, 'k-e'];
  return { ms, rule, parts: { floorMs, crawlDelayMs, dynamicMs, kEMs } };
}
