/**
 * The two calls the scheduler makes: `beforeRequest` (may this host be asked now?) and
 * `afterOutcome` (when may it be asked next, and why). Pure: time comes in as `now`.
 */
import type { OutcomeLink } from '../../../schemas/index.ts';
import type { PolitenessConfig } from './config.ts';
import { hostInterval } from './interval.ts';
import type { IntervalRule, PolitenessContext } from './interval.ts';
import { pushRing } from './state.ts';
import type { PolitenessState } from './state.ts';
import { mayStartOnIp } from './caps.ts';

/** The parts of an outcome record the policy reads (an OutcomeLink fits as is). */
export type PolitenessOutcome = Pick<OutcomeLink, 'status' | 'result' | 'retryAfterMs' | 'errorCode'> & {
  fetch: Pick<OutcomeLink['fetch'], 'totalMs' | 'bytes' | 'connectionClosed'>;
};

export type NextReason = IntervalRule | 'backoff' | 'retry-after' | 'suspend' | 'keep-alive-closed' | 'parked';

export interface AfterOutcome {
  state: PolitenessState;
  /** Earliest start of the next request to the host (every rule included). */
  nextAt: number;
  parkedUntil?: number;
  suspendedUntil?: number;
  /** The rule that set nextAt. */
  reason: NextReason;
  /** The host interval alone (before back-off, Retry-After, suspension and parking). */
  intervalMs: number;
}

/** A failure of the host rather than of one page: 429, 5xx, or a transport error. */
export function isHostFailure(outcome: PolitenessOutcome, config: Pick<PolitenessConfig, 'failureErrorCodes'>): boolean {
  if (outcome.status === 429 || (outcome.status >= 500 && outcome.status < 600)) return true;
  if (outcome.result === 'server-error') return true;
  return outcome.errorCode !== undefined && config.failureErrorCodes.includes(outcome.errorCode);
}

/** Gap after the n-th consecutive failure (n ≥ 1): base·factor^(n−1), capped. */
export function backoffMs(failures: number, config: Pick<PolitenessConfig, 'backoffBaseMs' | 'backoffFactor' | 'backoffMaxMs'>): number {
  if (failures <= 0) return 0;
  return Math.round(Math.min(config.backoffMaxMs, config.backoffBaseMs * config.backoffFactor ** (failures - 1)));
}

/** Parking time of the n-th parking since the last success (n ≥ 1): base·factor^(n−1), capped. */
export function parkMs(parkings: number, config: Pick<PolitenessConfig, 'parkBaseMs' | 'parkFactor' | 'parkMaxMs'>): number {
  if (parkings <= 0) return 0;
  return Math.round(Math.min(config.parkMaxMs, config.parkBaseMs * config.parkFactor ** (parkings - 1)));
}

/**
 * Folds one outcome into the host's state and decides when the host may be asked next:
 *   nextAt = max(now + host interval, now + back-off, now + Retry-After, suspension end, parking end)
 * `now` is when the outcome arrived (≈ the end of the request).
 */
export function afterOutcome(
  state: PolitenessState,
  outcome: PolitenessOutcome,
  now: number,
  config: PolitenessConfig,
  ctx: PolitenessContext = {},
): AfterOutcome {
  const durationMs = Math.max(0, Math.round(outcome.fetch.totalMs));
  const transportError = outcome.errorCode !== undefined && config.ringErrorCodes.includes(outcome.errorCode);
  const s = pushRing(state, outcome.fetch.bytes, durationMs, transportError);
  delete s.p;
  delete s.s;

  // Fetch-time statistics for the load report: only answered requests (a timeout is not a fetch time).
  if (outcome.result !== 'error') {
    s.fn = (s.fn ?? 0) + 1;
    s.fs = (s.fs ?? 0) + durationMs;
    s.fx = Math.max(s.fx ?? 0, durationMs);
  }

  const failed = isHostFailure(outcome, config);
  if (failed) s.f = s.f + 1;
  else {
    s.f = 0;
    delete s.pc;
  }

  const interval = hostInterval(s, config, ctx);
  let nextAt = now + interval.ms;
  let reason: NextReason = interval.rule;
  const later = (at: number, why: NextReason) => {
    if (at > nextAt) [nextAt, reason] = [at, why];
  };

  if (failed) later(now + backoffMs(s.f, config), 'backoff');
  if (outcome.retryAfterMs !== undefined) later(now + Math.min(outcome.retryAfterMs, config.maxRetryAfterMs), 'retry-after');

  // Continuous crawling (Muraoka et al., Table 1): a run starts with the first request after an idle gap
  // of at least U; once it has lasted T the host rests for U.
  let suspendedUntil: number | undefined;
  if (config.suspendEnabled) {
    if (s.c === undefined || s.w === undefined || now - s.w >= config.suspendForMs) s.c = now - durationMs;
    if (now - s.c >= config.suspendAfterMs) {
      suspendedUntil = now + config.suspendForMs;
      later(suspendedUntil, 'suspend');
    }
  }
  // Keep-alive mode: the server ending the connection ends the burst.
  if (config.keepAliveMode && outcome.fetch.connectionClosed === true) {
    const until = now + config.keepAliveSuspendMs;
    suspendedUntil = Math.max(suspendedUntil ?? 0, until);
    later(until, 'keep-alive-closed');
  }
  s.w = now;
  if (suspendedUntil !== undefined) {
    s.s = suspendedUntil;
    delete s.c;
  }

  let parkedUntil: number | undefined;
  if (failed && s.f >= config.parkAfterFailures) {
    s.pc = (s.pc ?? 0) + 1;
    parkedUntil = now + parkMs(s.pc, config);
    s.p = parkedUntil;
    later(parkedUntil, 'parked');
  }

  s.n = nextAt;
  return {
    state: s,
    nextAt,
    reason,
    intervalMs: interval.ms,
    ...(parkedUntil !== undefined ? { parkedUntil } : {}),
    ...(suspendedUntil !== undefined ? { suspendedUntil } : {}),
  };
}

export type WaitReason = 'parked' | 'suspended' | 'not-yet' | 'ip-busy';

export type BeforeRequest = { ok: true } | { ok: false; reason: WaitReason; retryAt: number };

/** The per-IP part of a request check: the host's address and the crawl's in-flight count per IP. */
export interface IpContext {
  ip: string | undefined;
  inflightByIp: ReadonlyMap<string, number>;
}

/**
 * May a request to the host start at `now`? If not: why, and when to look again. Parking and
 * suspension are reported before the plain interval so logs show the stronger reason.
 */
export function beforeRequest(state: PolitenessState, now: number, config: PolitenessConfig, ip?: IpContext): BeforeRequest {
  if (state.p !== undefined && now < state.p) return { ok: false, reason: 'parked', retryAt: state.p };
  if (state.s !== undefined && now < state.s) return { ok: false, reason: 'suspended', retryAt: state.s };
  if (now < state.n) return { ok: false, reason: 'not-yet', retryAt: state.n };
  if (ip && !mayStartOnIp(ip.inflightByIp, ip.ip, config)) return { ok: false, reason: 'ip-busy', retryAt: now + config.ipBusyRetryMs };
  return { ok: true };
}
