import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  afterOutcome,
  backoffMs,
  beforeRequest,
  changePageInterval,
  dynamicIntervalMs,
  emptyPoliteness,
  hostInterval,
  ipFinished,
  ipStarted,
  isHostFailure,
  kFor,
  kTimesEMs,
  lastFetchMs,
  linkCapExceeded,
  loadIndex,
  loadReport,
  mayStartOnIp,
  parkMs,
  politenessConfig,
  politenessFromSchedulerOptions,
  pushRing,
  ringErrorCount,
  ringSpeedBytesPerS,
  topByLoad,
  underPageCap,
} from '../../services/scheduler/politeness/index.ts';
import type { PolitenessConfigInput, PolitenessOutcome, PolitenessState } from '../../services/scheduler/politeness/index.ts';
import type { OutcomeLink } from '../../schemas/index.ts';
import { schedulerOptionsSchema } from '../../services/scheduler/options.ts';
import { recentFetchMs } from '../../services/scheduler/politeness/interval.ts';

const T0 = 1_700_000_000_000;
const MIN = 60_000;
const HOUR = 60 * MIN;

function ok(bytes: number, totalMs: number, extra: Partial<PolitenessOutcome> = {}): PolitenessOutcome {
  return { status: 200, result: 'ok', fetch: { totalMs, bytes }, ...extra };
}

function timeout(): PolitenessOutcome {
  return { status: 0, result: 'error', errorCode: 'MEGURI_ERR_TIMEOUT', fetch: { totalMs: 120_000, bytes: 0 } };
}

function ringOf(entries: Array<[bytes: number, ms: number, error?: boolean]>): PolitenessState {
  let s = emptyPoliteness();
  for (const [b, t, e] of entries) s = pushRing(s, b, t, e ?? false);
  return s;
}

/** Config for tests of one rule: the other rules switched off unless asked for. */
function cfg(input: PolitenessConfigInput = {}) {
  return politenessConfig({ suspendEnabled: false, ...input });
}

// ---------------------------------------------------------------------------------------------
// Formulas with hand-computed numbers

test('dynamic interval: minInterval + maxDelay1·(1 − speed/target) + maxDelay2·errors/10', () => {
  const c = cfg(); // 10 s, 20 s, 30 s, 25 000 B/s
  // 10 000 + 20 000·(1 − 12 500/25 000) + 30 000·3/10 = 10 000 + 10 000 + 9 000
  assert.equal(dynamicIntervalMs(10_000, 12_500, 3, c), 29_000);
  // faster than the target: the speed term is clamped at 0
  assert.equal(dynamicIntervalMs(10_000, 50_000, 0, c), 10_000);
  // dead line (0 B/s) and every request an error: the full delays
  assert.equal(dynamicIntervalMs(10_000, 0, 10, c), 60_000);
  // nothing measured yet: no speed delay
  assert.equal(dynamicIntervalMs(10_000, undefined, 0, c), 10_000);
});

test('ring keeps the last 10 requests: speed = bytes/time of error-free ones, errors counted', () => {
  // 25 000 B in 2 s ten times → 12 500 B/s
  const s = ringOf(Array.from({ length: 10 }, () => [25_000, 2_000] as [number, number]));
  assert.equal(ringSpeedBytesPerS(s), 12_500);
  assert.equal(ringErrorCount(s), 0);
  // two errors (not part of the speed) and one very fast request
  const e = ringOf([[0, 120_000, true], [10_000, 1_000], [0, 5_000, true], [30_000, 1_000]]);
  assert.equal(ringErrorCount(e), 2);
  assert.equal(ringSpeedBytesPerS(e), 20_000); // 40 000 B / 2 s
  assert.equal(lastFetchMs(e), 1_000);
  // the error falls out of the ring after 10 newer requests
  let r = ringOf([[0, 1, true]]);
  for (let i = 0; i < 10; i++) r = pushRing(r, 1_000, 100, false);
  assert.equal(r.t.length, 10);
  assert.equal(ringErrorCount(r), 0);
  assert.equal(ringSpeedBytesPerS(emptyPoliteness()), undefined);
});

test('k × e: k = S/C when known, else the configured 10', () => {
  const c = cfg();
  assert.equal(kFor(c), 10);
  assert.equal(kFor(c, { servers: 3_200_000, connections: 32_000 }), 100);
  assert.equal(kTimesEMs(10, 845), 8_450); // the incremental archive crawler paper: mean fetch 0.845 s
  assert.equal(kTimesEMs(100, 845), 84_500);
  assert.equal(kTimesEMs(10, undefined), 0);
});

test('host interval = max(minimum, crawl-delay, dynamic, k·e) and names the rule', () => {
  const c = cfg();
  // 37 500 B in 3 s → 12 500 B/s → dynamic 20 000; k·e = 10·3 000 = 30 000
  const slow = ringOf([[37_500, 3_000]]);
  assert.deepEqual(hostInterval(slow, c), { ms: 30_000, rule: 'k-e', parts: { floorMs: 10_000, crawlDelayMs: 0, dynamicMs: 20_000, kEMs: 30_000 } });
  assert.equal(hostInterval(slow, c, { crawlDelayMs: 45_000 }).rule, 'crawl-delay');
  assert.equal(hostInterval(slow, c, { crawlDelayMs: 45_000 }).ms, 45_000);
  // fast host: 1 MB/s, e = 0.1 s → k·e 1 s, dynamic 10 s → the configured minimum
  const fast = ringOf([[100_000, 100]]);
  assert.equal(hostInterval(fast, c).ms, 10_000);
  assert.equal(hostInterval(fast, c).rule, 'min');
  // 12 500 B/s but e = 1 s: dynamic 20 s beats k·e 10 s
  const dyn = ringOf([[12_500, 1_000]]);
  assert.equal(hostInterval(dyn, c).ms, 20_000);
  assert.equal(hostInterval(dyn, c).rule, 'dynamic');
  // a raised minimum wins over everything smaller
  assert.equal(hostInterval(fast, cfg({ minIntervalMs: 60_000 })).ms, 60_000);
});

test('k × e: e is the shorter of the last two error-free downloads, so one slow download is not multiplied', () => {
  assert.equal(recentFetchMs(emptyPoliteness()), undefined);
  assert.equal(recentFetchMs(ringOf([[20_000, 300]])), 300, 'one download: that one');
  assert.equal(recentFetchMs(ringOf([[20_000, 5], [20_000, 500]])), 5);
  assert.equal(recentFetchMs(ringOf([[20_000, 400], [20_000, 500]])), 400);
  // errors are not download times and are skipped
  assert.equal(recentFetchMs(ringOf([[20_000, 400], [20_000, 600], [0, 120_000, true]])), 400);
  assert.equal(recentFetchMs(ringOf([[0, 120_000, true]])), undefined);

  // A 1 s host answering in 5 ms; one 500 ms download (the crawler paused) leaves the interval at
  // 1 s; a second one in a row gives k·e = 5 s.
  const c = cfg({ minIntervalMs: 1_000 });
  let s = emptyPoliteness();
  let now = T0;
  for (let i = 0; i < 5; i++) s = afterOutcome(s, ok(20_000, 5), (now += 1_000), c).state;
  const once = afterOutcome(s, ok(20_000, 500), (now += 1_000), c);
  assert.equal(once.intervalMs, 1_000);
  assert.equal(once.reason, 'min');
  const twice = afterOutcome(once.state, ok(20_000, 500), (now += 1_000), c);
  assert.equal(twice.intervalMs, 5_000);
  assert.equal(twice.reason, 'k-e');
  assert.equal(twice.nextAt, now + 5_000);
});

// ---------------------------------------------------------------------------------------------
// afterOutcome / beforeRequest

test('small responses (robots.txt, 304s) do not count as line speed', () => {
  const c = cfg({ kFactor: 0 });
  const r = afterOutcome(emptyPoliteness(), ok(300, 50), T0, c);
  assert.equal(r.intervalMs, 10_000, 'a 300-byte robots.txt in 50 ms adds no speed delay');
});

test('a host that slows down gets a longer interval, step by step, per the dynamic formula', () => {
  const c = cfg({ kFactor: 0 });
  let s = emptyPoliteness();
  let now = T0;
  for (let i = 0; i < 10; i++) s = afterOutcome(s, ok(100_000, 100), (now += 10_000), c).state;
  assert.equal(afterOutcome(s, ok(100_000, 100), now, c).intervalMs, 10_000);
  const seen: number[] = [];
  for (let i = 1; i <= 10; i++) {
    // 10 000 B in 2 s = 5 000 B/s replaces one fast request at a time
    const r = afterOutcome(s, ok(10_000, 2_000), (now += 30_000), c);
    s = r.state;
    const bytes = (10 - i) * 100_000 + i * 10_000;
    const secs = ((10 - i) * 100 + i * 2_000) / 1000;
    const expected = Math.round(10_000 + 20_000 * Math.max(0, 1 - bytes / secs / 25_000));
    assert.equal(r.intervalMs, expected, `step ${i}`);
    assert.equal(r.nextAt, now + expected);
    seen.push(r.intervalMs);
  }
  for (let i = 1; i < seen.length; i++) assert.ok(seen[i]! >= seen[i - 1]!, `grows at step ${i}: ${seen.join(',')}`);
  // all ten slow: 10 000 + 20 000·(1 − 5 000/25 000) = 26 000
  assert.equal(seen.at(-1), 26_000);
});

test('503 with Retry-After: the host is not asked before that time', () => {
  const c = cfg();
  const r = afterOutcome(emptyPoliteness(), { status: 503, result: 'server-error', retryAfterMs: 120_000, fetch: { totalMs: 50, bytes: 0 } }, T0, c);
  assert.equal(r.nextAt, T0 + 120_000);
  assert.equal(r.reason, 'retry-after');
  assert.deepEqual(beforeRequest(r.state, T0 + 119_999, c), { ok: false, reason: 'not-yet', retryAt: T0 + 120_000 });
  assert.deepEqual(beforeRequest(r.state, T0 + 120_000, c), { ok: true });
  // 429 the same; an absurd Retry-After is clamped to maxRetryAfterMs (7 days)
  const far = afterOutcome(emptyPoliteness(), { status: 429, result: 'client-error', retryAfterMs: 30 * 24 * HOUR, fetch: { totalMs: 10, bytes: 0 } }, T0, c);
  assert.equal(far.nextAt, T0 + 7 * 24 * HOUR);
  // a short Retry-After never shortens the interval
  const short = afterOutcome(emptyPoliteness(), { status: 503, result: 'server-error', retryAfterMs: 1_000, fetch: { totalMs: 10, bytes: 0 } }, T0, c);
  assert.ok(short.nextAt >= T0 + 30_000);
});

test('consecutive failures grow the gap exponentially up to the cap', () => {
  assert.deepEqual([1, 2, 3, 4, 7, 20].map((n) => backoffMs(n, cfg())), [30_000, 60_000, 120_000, 240_000, 1_800_000, 1_800_000]);
  assert.equal(backoffMs(0, cfg()), 0);
  const c = cfg({ parkAfterFailures: 100 });
  let s = emptyPoliteness();
  const gaps: number[] = [];
  for (let i = 0; i < 8; i++) {
    const r = afterOutcome(s, timeout(), T0, c);
    s = r.state;
    gaps.push(r.nextAt - T0);
    assert.equal(r.reason, 'backoff');
  }
  assert.deepEqual(gaps, [30_000, 60_000, 120_000, 240_000, 480_000, 960_000, 1_800_000, 1_800_000]);
  assert.equal(s.f, 8);
});

test('a host failing N times in a row is parked, longer each time; a success resets', () => {
  const c = cfg(); // park after 5, 1 h, ×2, cap 24 h
  let s = emptyPoliteness();
  let now = T0;
  for (let i = 1; i <= 4; i++) {
    const r = afterOutcome(s, timeout(), (now += HOUR), c);
    s = r.state;
    assert.equal(r.parkedUntil, undefined, `failure ${i}`);
  }
  const parked = afterOutcome(s, timeout(), (now += HOUR), c);
  assert.equal(parked.reason, 'parked');
  assert.equal(parked.parkedUntil, now + HOUR);
  assert.equal(parked.nextAt, now + HOUR);
  assert.deepEqual(beforeRequest(parked.state, now + HOUR - 1, c), { ok: false, reason: 'parked', retryAt: now + HOUR });
  assert.deepEqual(beforeRequest(parked.state, now + HOUR, c), { ok: true });
  // failing again after the parking: parked again, twice as long
  now += HOUR;
  const again = afterOutcome(parked.state, timeout(), now, c);
  assert.equal(again.parkedUntil, now + 2 * HOUR);
  assert.equal(parkMs(10, c), 24 * HOUR);
  // one good answer: not parked, no back-off, counters cleared
  now += 2 * HOUR;
  const good = afterOutcome(again.state, ok(100_000, 100), now, c);
  assert.equal(good.parkedUntil, undefined);
  assert.equal(good.state.f, 0);
  assert.equal(good.state.pc, undefined);
  assert.equal(good.state.p, undefined);
  assert.ok(good.nextAt - now < 30_000, `interval after success: ${good.nextAt - now}`);
  // the next failure starts the back-off from the beginning (the ring still remembers the
  // timeouts: dynamic 10 s + 30 s·7/10 = 31 s beats the first back-off step of 30 s)
  const next = afterOutcome(good.state, timeout(), now, c);
  assert.equal(next.state.f, 1);
  assert.equal(next.nextAt - now, 31_000);
  assert.equal(next.reason, 'dynamic');
});

test('only host failures drive back-off: 404 and page-level errors do not', () => {
  const c = cfg();
  assert.equal(isHostFailure({ status: 404, result: 'client-error', fetch: { totalMs: 1, bytes: 0 } }, c), false);
  assert.equal(isHostFailure({ status: 0, result: 'error', errorCode: 'MEGURI_ERR_BODY_TOO_LARGE', fetch: { totalMs: 1, bytes: 0 } }, c), false);
  assert.equal(isHostFailure({ status: 429, result: 'client-error', fetch: { totalMs: 1, bytes: 0 } }, c), true);
  assert.equal(isHostFailure({ status: 500, result: 'server-error', fetch: { totalMs: 1, bytes: 0 } }, c), true);
  assert.equal(isHostFailure({ status: 0, result: 'error', errorCode: 'MEGURI_ERR_RESET', fetch: { totalMs: 1, bytes: 0 } }, c), true);
});

test('suspend: after T minutes of continuous crawling the host rests U minutes', () => {
  const c = cfg({ suspendEnabled: true, suspendAfterMs: 30 * MIN, suspendForMs: 10 * MIN, kFactor: 0 });
  let s = emptyPoliteness();
  let now = T0;
  const runStart = now - 100;
  let suspended: ReturnType<typeof afterOutcome> | undefined;
  for (let i = 0; i < 1_000 && !suspended; i++) {
    const r = afterOutcome(s, ok(100_000, 100), now, c);
    s = r.state;
    if (r.suspendedUntil !== undefined) suspended = r;
    else now = r.nextAt + 100; // the next request takes 100 ms
  }
  assert.ok(suspended);
  assert.ok(now - runStart >= 30 * MIN);
  assert.ok(now - runStart < 30 * MIN + 10_100, 'suspended at the first outcome past T');
  assert.equal(suspended.reason, 'suspend');
  assert.equal(suspended.suspendedUntil, now + 10 * MIN);
  assert.equal(suspended.nextAt, now + 10 * MIN);
  assert.deepEqual(beforeRequest(suspended.state, now + 5 * MIN, c), { ok: false, reason: 'suspended', retryAt: now + 10 * MIN });
  // after the rest a new run starts: no suspension on the next outcome
  const after = afterOutcome(suspended.state, ok(100_000, 100), now + 10 * MIN + 100, c);
  assert.equal(after.suspendedUntil, undefined);
  assert.equal(after.reason, 'min');
});

test('suspend: an idle gap of U minutes ends a continuous run', () => {
  const c = cfg({ suspendEnabled: true, suspendAfterMs: 30 * MIN, suspendForMs: 10 * MIN, kFactor: 0 });
  let s = afterOutcome(emptyPoliteness(), ok(1_000, 100), T0, c).state;
  s = afterOutcome(s, ok(1_000, 100), T0 + 20 * MIN, c).state; // idle 20 min ≥ U: a new run from here
  for (let m = 25; m <= 45; m += 5) {
    const r = afterOutcome(s, ok(1_000, 100), T0 + m * MIN, c); // at +30 a run from T0 would end
    assert.equal(r.suspendedUntil, undefined, `+${m} min`);
    s = r.state;
  }
  // 30 min (and 100 ms) after the new run began
  assert.equal(afterOutcome(s, ok(1_000, 100), T0 + 50 * MIN, c).suspendedUntil, T0 + 60 * MIN);
});

test("keep-alive mode: back to back while the connection lives, U' rest when the server closes it", () => {
  const c = cfg({ keepAliveMode: true }); // 1 s floor, 5 min rest
  // e = 2 s would give k·e = 20 s outside keep-alive mode; here only the floor applies
  const open = afterOutcome(emptyPoliteness(), ok(100_000, 2_000), T0, c);
  assert.equal(open.nextAt, T0 + 1_000);
  assert.equal(open.reason, 'keep-alive');
  assert.equal(open.suspendedUntil, undefined);
  const closed = afterOutcome(open.state, ok(100_000, 100, { fetch: { totalMs: 100, bytes: 100_000, connectionClosed: true } }), T0 + 2_000, c);
  assert.equal(closed.reason, 'keep-alive-closed');
  assert.equal(closed.suspendedUntil, T0 + 2_000 + 5 * MIN);
  assert.equal(closed.nextAt, T0 + 2_000 + 5 * MIN);
  assert.equal(beforeRequest(closed.state, T0 + 3 * MIN, c).ok, false);
  // outside keep-alive mode a closed connection means nothing
  assert.equal(afterOutcome(emptyPoliteness(), ok(100_000, 100, { fetch: { totalMs: 100, bytes: 100_000, connectionClosed: true } }), T0, cfg()).suspendedUntil, undefined);
});

// ---------------------------------------------------------------------------------------------
// Caps and the per-IP limit

test('caps: pages per site, depth, CGI hops', () => {
  const c = cfg();
  assert.equal(underPageCap(999_999, c), true);
  assert.equal(underPageCap(1_000_000, c), false);
  assert.equal(underPageCap(3, cfg({ maxPagesPerSite: 3 })), false);
  assert.equal(linkCapExceeded({ depth: 15, cgiHops: 10 }, c), undefined);
  assert.equal(linkCapExceeded({ depth: 16, cgiHops: 0 }, c), 'depth');
  assert.equal(linkCapExceeded({ depth: 3, cgiHops: 11 }, c), 'cgi-hops');
  assert.equal(linkCapExceeded({ depth: 3, cgiHops: 2 }, cfg({ maxCgiHops: 1 })), 'cgi-hops');
});

test('per-IP cap: at most K requests in flight to one address across its hosts', () => {
  const c = cfg({ maxPerIp: 2 });
  const inflight = new Map<string, number>();
  assert.equal(mayStartOnIp(inflight, '192.0.2.1', c), true);
  ipStarted(inflight, '192.0.2.1');
  ipStarted(inflight, '192.0.2.1');
  assert.equal(mayStartOnIp(inflight, '192.0.2.1', c), false);
  assert.equal(mayStartOnIp(inflight, '192.0.2.2', c), true);
  assert.equal(mayStartOnIp(inflight, undefined, c), true);
  assert.deepEqual(beforeRequest(emptyPoliteness(), T0, c, { ip: '192.0.2.1', inflightByIp: inflight }), { ok: false, reason: 'ip-busy', retryAt: T0 + 1_000 });
  ipFinished(inflight, '192.0.2.1');
  assert.equal(mayStartOnIp(inflight, '192.0.2.1', c), true);
  ipFinished(inflight, '192.0.2.1');
  assert.equal(inflight.size, 0);
});

// ---------------------------------------------------------------------------------------------
// Server load report

test('load index kept incrementally equals the one recomputed', () => {
  let seed = 42;
  const rand = () => ((seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648);
  let s = emptyPoliteness();
  const pages = new Map<number, number>();
  for (let step = 0; step < 5_000; step++) {
    const id = Math.floor(rand() * 300);
    const old = pages.get(id);
    const op = rand();
    if (old !== undefined && op < 0.3) {
      s = changePageInterval(s, old, undefined);
      pages.delete(id);
    } else {
      const t = Math.round(1_000 + rand() * 400 * 24 * HOUR);
      s = changePageInterval(s, old, t);
      pages.set(id, t);
    }
  }
  const recomputed = loadIndex(pages.values());
  assert.ok(Math.abs((s.L ?? 0) - recomputed) <= 1e-9 * Math.max(1, recomputed), `${s.L} vs ${recomputed}`);
  for (const [id, t] of pages) {
    s = changePageInterval(s, t, undefined);
    pages.delete(id);
  }
  assert.equal(s.L, undefined);
  // hand-computed: pages every 60 s and every 30 s → 1/60 + 1/30 = 0.05 /s
  assert.equal(loadIndex([60_000, 30_000]), 0.05);
});

test('load report: 1/L below the allowed interval, or R < S/C, is overloaded', () => {
  const c = cfg();
  // 12 pages every 60 s: L = 0.2 /s → 1/L = 5 s < the 10 s minimum
  let busy = afterOutcome(emptyPoliteness(), ok(1_000_000, 100), T0, c).state;
  for (let i = 0; i < 12; i++) busy = changePageInterval(busy, undefined, 60_000);
  const row = loadReport('busy.example', busy, c);
  assert.ok(Math.abs(row.L - 0.2) < 1e-12);
  assert.equal(row.accessIntervalS, 5);
  assert.equal(row.overloaded, true);

  // one page every 100 s, fetch times 5 s then 0.1 s: R = 100 / 5 = 20
  let slow = afterOutcome(emptyPoliteness(), ok(1_000_000, 5_000), T0, c).state;
  slow = afterOutcome(slow, ok(1_000_000, 100), T0 + MIN, c).state;
  slow = changePageInterval(slow, undefined, 100_000);
  const plain = loadReport('slow.example', slow, c);
  assert.deepEqual(plain, { host: 'slow.example', L: 0.01, accessIntervalS: 100, meanFetchS: 2.55, maxFetchS: 5, R: 20, overloaded: false });
  // with S/C = 100 (the incremental archive crawler paper's cluster) R = 20 < 100: overloaded
  assert.equal(loadReport('slow.example', slow, c, { servers: 3_200_000, connections: 32_000 }).overloaded, true);

  const idle = loadReport('idle.example', emptyPoliteness(), c);
  assert.deepEqual(idle, { host: 'idle.example', L: 0, accessIntervalS: null, meanFetchS: null, maxFetchS: null, R: null, overloaded: false });

  assert.deepEqual(
    topByLoad([idle, plain, row], 2).map((r) => r.host),
    ['busy.example', 'slow.example'],
  );
});

// ---------------------------------------------------------------------------------------------
// Config and state size

test('config: strict, defaults filled', () => {
  const c = politenessConfig();
  assert.equal(c.minIntervalMs, 10_000);
  assert.equal(c.kFactor, 10);
  assert.equal(c.maxDepth, 15);
  assert.equal(c.keepAliveMode, false);
  assert.throws(() => politenessConfig({ minInterval: 5 } as unknown as PolitenessConfigInput));
  assert.throws(() => politenessConfig({ backoffFactor: 0.5 }));
});

test('state stays small and JSON round-trips', () => {
  const c = cfg({ suspendEnabled: true });
  let s = emptyPoliteness();
  let now = T0;
  for (let i = 0; i < 50; i++) {
    const r = afterOutcome(s, i % 7 === 0 ? timeout() : ok(21_806, 845), now, c);
    s = r.state;
    now = r.nextAt + 845;
  }
  s = changePageInterval(s, undefined, 86_400_000);
  const json = JSON.stringify(s);
  assert.ok(json.length < 300, `${json.length}: ${json}`);
  assert.deepEqual(JSON.parse(json), s);
});

test('config from the scheduler options; an OutcomeLink is accepted as is', () => {
  const c = politenessFromSchedulerOptions(schedulerOptionsSchema.parse({ minIntervalMs: 5_000, maxDepth: 9 }), { keepAliveMode: true });
  assert.equal(c.minIntervalMs, 5_000);
  assert.equal(c.maxDepth, 9);
  assert.equal(c.maxCgiHops, 10);
  assert.equal(c.keepAliveMode, true);
  const outcome: OutcomeLink = {
    v: 1,
    type: 'outcome',
    requestId: 'r1',
    url: 'http://a.example/',
    reason: 'new',
    status: 200,
    result: 'ok',
    outDegree: 0,
    fetch: { totalMs: 845, bytes: 21_806, connectionClosed: false },
    fetchedAt: T0,
  };
  const r = afterOutcome(emptyPoliteness(), outcome, T0, politenessConfig());
  assert.equal(r.nextAt, T0 + 10_000);
  assert.equal(r.reason, 'min');
});
