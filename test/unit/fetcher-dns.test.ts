// Name resolution and concurrency caps of the fetcher. No real DNS: static mode is checked to never
// reach a resolver, and the system resolver's cache logic runs against an injected fake.
import assert from 'node:assert/strict';
import { Resolver } from 'node:dns/promises';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { ManualClock } from '../../services/runtime/clock.ts';
import { createResolver, parseResolveEntry, StaticResolveMap, SystemResolver } from '../../services/fetcher/dns.ts';
import type { AddressRecord, RawResolve } from '../../services/fetcher/dns.ts';
import { FetchError, FETCH_ERRORS, classifyError, isRetryable } from '../../services/fetcher/errors.ts';
import { Limiter } from '../../services/fetcher/limiter.ts';

/** Makes any c-ares query in this process throw, so a leak is loud rather than silent. */
function guardCares(): { calls: number; restore(): void } {
  const proto = Resolver.prototype as unknown as Record<string, unknown>;
  const names = ['resolve', 'resolve4', 'resolve6', 'resolveAny'];
  const saved = names.map((n) => proto[n]);
  const state = {
    calls: 0,
    restore(): void {
      names.forEach((n, i) => (proto[n] = saved[i]));
    },
  };
  for (const n of names) {
    proto[n] = () => {
      state.calls++;
      return Promise.reject(new Error('real DNS must not be used in tests'));
    };
  }
  return state;
}

function dnsError(code: string): Error {
  return Object.assign(new Error(`query failed: ${code}`), { code });
}

async function rejectsWith(p: Promise<unknown>, code: string): Promise<FetchError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof FetchError, `expected FetchError, got ${String(err)}`);
    assert.equal(err.code, code);
    return err;
  }
  assert.fail(`expected rejection with ${code}`);
}

describe('parseResolveEntry', () => {
  it('parses exact, wildcard and IPv6 entries', () => {
    assert.deepEqual(parseResolveEntry('A.Example=127.0.0.2'), { pattern: 'a.example', ip: '127.0.0.2' });
    assert.deepEqual(parseResolveEntry('*.sim.test=127.0.0.1'), { pattern: '*.sim.test', ip: '127.0.0.1' });
    assert.deepEqual(parseResolveEntry('v6.test=[::1]'), { pattern: 'v6.test', ip: '::1' });
    assert.deepEqual(parseResolveEntry(' dot.test. = 127.0.0.3 '), { pattern: 'dot.test', ip: '127.0.0.3' });
  });

  it('rejects bad input with a message naming the problem', () => {
    assert.throws(() => parseResolveEntry('a.example'), /expected PATTERN=IP/);
    assert.throws(() => parseResolveEntry('=127.0.0.1'), /empty host pattern/);
    assert.throws(() => parseResolveEntry('a.example=localhost'), /not an IPv4 or IPv6 address/);
    assert.throws(() => parseResolveEntry('a.example=300.1.1.1'), /not an IPv4 or IPv6 address/);
    assert.throws(() => parseResolveEntry('a.*.example=127.0.0.1'), /only allowed as a leading/);
    assert.throws(() => parseResolveEntry('bad_host!=127.0.0.1'), /not a valid host name/);
    assert.throws(() => parseResolveEntry('10.0.0.1=127.0.0.1'), /IP literals/);
  });

  it('refuses one pattern mapped to two addresses', () => {
    assert.throws(() => new StaticResolveMap(['a.test=127.0.0.1', 'a.test=127.0.0.2']), /mapped twice/);
    assert.equal(new StaticResolveMap(['a.test=127.0.0.1', 'a.test=127.0.0.1']).size, 1);
  });
});

describe('static resolver', () => {
  let guard: ReturnType<typeof guardCares>;
  beforeEach(() => {
    guard = guardCares();
  });
  afterEach(() => guard.restore());

  it('answers from the map, most specific pattern first', async () => {
    const r = createResolver({
      mode: 'static',
      resolve: ['*.sim.test=127.0.0.1', '*.deep.sim.test=127.0.0.3', 'exact.deep.sim.test=127.0.0.4', 'sim.test=127.0.0.5'],
    });
    assert.equal(await r.resolve('a.sim.test'), '127.0.0.1');
    assert.equal(await r.resolve('x.y.sim.test'), '127.0.0.1');
    assert.equal(await r.resolve('a.deep.sim.test'), '127.0.0.3');
    assert.equal(await r.resolve('exact.deep.sim.test'), '127.0.0.4');
    assert.equal(await r.resolve('EXACT.deep.sim.test.'), '127.0.0.4');
    assert.equal(await r.resolve('sim.test'), '127.0.0.5');
    assert.equal(r.peek('b.sim.test'), '127.0.0.1');
  });

  it('resolves IP literals to themselves', async () => {
    const r = createResolver({ mode: 'static' });
    assert.equal(await r.resolve('127.0.0.9'), '127.0.0.9');
    assert.equal(await r.resolve('[::1]'), '::1');
  });

  it('fails an unmapped name at once without asking any resolver', async () => {
    let spyCalls = 0;
    const spy: RawResolve = () => {
      spyCalls++;
      return Promise.resolve([{ address: '127.0.0.1', ttl: 60 }]);
    };
    const r = createResolver({ mode: 'static', resolve: ['*.sim.test=127.0.0.1'], rawResolve: spy });
    const t0 = performance.now();
    const err = await rejectsWith(r.resolve('example.com'), 'MEGURI_ERR_DNS');
    assert.ok(performance.now() - t0 < 20, 'static miss must not wait for anything');
    assert.match(err.message, /no --resolve mapping/);
    // A wildcard does not cover its own apex.
    await rejectsWith(r.resolve('sim.test'), 'MEGURI_ERR_DNS');
    assert.equal(spyCalls, 0);
    assert.equal(guard.calls, 0);
    assert.equal(r.peek('example.com'), undefined);
  });
});

/** A fake DNS: answers per name and type, counting queries; `gate` holds answers until released. */
function fakeDns(table: Record<string, Partial<Record<'A' | 'AAAA', AddressRecord[] | string>>>) {
  const log: string[] = [];
  let gate: Promise<void> | undefined;
  const raw: RawResolve = async (host, rrtype) => {
    log.push(`${rrtype} ${host}`);
    if (gate) await gate;
    const entry = table[host];
    if (entry === undefined) throw dnsError('ENOTFOUND');
    const ans = entry[rrtype];
    if (ans === undefined) throw dnsError('ENODATA');
    if (typeof ans === 'string') throw dnsError(ans);
    return ans;
  };
  return {
    raw,
    log,
    hold(): () => void {
      let release!: () => void;
      gate = new Promise((r) => (release = r));
      return () => {
        gate = undefined;
        release();
      };
    },
  };
}

describe('system resolver cache (fake resolve function)', () => {
  it('caches within the TTL, clamped to min/max bounds', async () => {
    const clock = new ManualClock(1_000_000);
    const dns = fakeDns({ 'short.test': { A: [{ address: '192.0.2.1', ttl: 1 }] }, 'long.test': { A: [{ address: '192.0.2.2', ttl: 86_400 }] } });
    const r = new SystemResolver(new StaticResolveMap(), { mode: 'system', clock, rawResolve: dns.raw, minTtlMs: 10_000, maxTtlMs: 60_000 });
    assert.equal(await r.resolve('short.test'), '192.0.2.1');
    assert.equal(await r.resolve('Short.Test'), '192.0.2.1');
    assert.equal(r.peek('short.test'), '192.0.2.1');
    assert.equal(dns.log.length, 1);
    clock.advance(9_000); // TTL 1 s raised to the 10 s floor
    await r.resolve('short.test');
    assert.equal(dns.log.length, 1);
    clock.advance(1_001);
    assert.equal(r.peek('short.test'), undefined);
    await r.resolve('short.test');
    assert.equal(dns.log.length, 2);

    await r.resolve('long.test');
    clock.advance(59_000);
    await r.resolve('long.test');
    assert.equal(dns.log.length, 3);
    clock.advance(1_001); // a day's TTL capped at 60 s
    await r.resolve('long.test');
    assert.equal(dns.log.length, 4);
    assert.equal(r.stats().cacheHits, 3);
  });

  it('caches NXDOMAIN for the negative TTL and does not ask for AAAA after it', async () => {
    const clock = new ManualClock(0);
    const dns = fakeDns({});
    const r = new SystemResolver(new StaticResolveMap(), { mode: 'system', clock, rawResolve: dns.raw, negativeTtlMs: 30_000 });
    await rejectsWith(r.resolve('gone.test'), 'MEGURI_ERR_DNS');
    assert.deepEqual(dns.log, ['A gone.test']);
    clock.advance(29_000);
    await rejectsWith(r.resolve('gone.test'), 'MEGURI_ERR_DNS');
    assert.equal(dns.log.length, 1);
    clock.advance(1_001);
    await rejectsWith(r.resolve('gone.test'), 'MEGURI_ERR_DNS');
    assert.equal(dns.log.length, 2);
    assert.equal(r.stats().negativeHits, 1);
  });

  it('falls back to AAAA when there is no A record', async () => {
    const dns = fakeDns({ 'v6only.test': { AAAA: [{ address: '2001:db8::1', ttl: 300 }] } });
    const r = new SystemResolver(new StaticResolveMap(), { mode: 'system', clock: new ManualClock(0), rawResolve: dns.raw });
    assert.equal(await r.resolve('v6only.test'), '2001:db8::1');
    assert.deepEqual(dns.log, ['A v6only.test', 'AAAA v6only.test']);
  });

  it('reports temporary failures as retryable and caches them only briefly', async () => {
    const clock = new ManualClock(0);
    const dns = fakeDns({ 'flaky.test': { A: 'ESERVFAIL' } });
    const r = new SystemResolver(new StaticResolveMap(), { mode: 'system', clock, rawResolve: dns.raw, errorTtlMs: 2_000 });
    const err = await rejectsWith(r.resolve('flaky.test'), 'MEGURI_ERR_DNS_TEMPORARY');
    assert.ok(isRetryable(err.code));
    await rejectsWith(r.resolve('flaky.test'), 'MEGURI_ERR_DNS_TEMPORARY');
    assert.equal(dns.log.length, 1);
    clock.advance(2_001);
    await rejectsWith(r.resolve('flaky.test'), 'MEGURI_ERR_DNS_TEMPORARY');
    assert.equal(dns.log.length, 2);
  });

  it('coalesces concurrent lookups of one name', async () => {
    const dns = fakeDns({ 'busy.test': { A: [{ address: '192.0.2.7', ttl: 300 }] } });
    const r = new SystemResolver(new StaticResolveMap(), { mode: 'system', clock: new ManualClock(0), rawResolve: dns.raw });
    const release = dns.hold();
    const all = Promise.all([r.resolve('busy.test'), r.resolve('busy.test'), r.resolve('BUSY.test')]);
    release();
    assert.deepEqual(await all, ['192.0.2.7', '192.0.2.7', '192.0.2.7']);
    assert.equal(dns.log.length, 1);
    assert.equal(r.stats().coalesced, 2);
  });

  it('applies static overrides and IP literals before any query', async () => {
    const dns = fakeDns({ 'a.test': { A: [{ address: '192.0.2.1', ttl: 300 }] } });
    const r = createResolver({ mode: 'system', resolve: ['a.test=127.0.0.2'], clock: new ManualClock(0), rawResolve: dns.raw });
    assert.equal(await r.resolve('a.test'), '127.0.0.2');
    assert.equal(await r.resolve('203.0.113.8'), '203.0.113.8');
    assert.equal(dns.log.length, 0);
  });

  it('answers with whatever the name resolves to and says which names the map covers; the address policy judges them', async () => {
    const dns = fakeDns({ 'internal.test': { A: [{ address: '10.1.2.3', ttl: 300 }] }, 'mapped.test': { AAAA: [{ address: '::ffff:127.0.0.1', ttl: 300 }] } });
    const r = createResolver({ mode: 'system', resolve: ['lab.test=127.0.0.2'], clock: new ManualClock(0), rawResolve: dns.raw });
    assert.equal(await r.resolve('internal.test'), '10.1.2.3');
    assert.equal(await r.resolve('mapped.test'), '::ffff:127.0.0.1');
    assert.equal(await r.resolve('[fe80::1]'), 'fe80::1');
    assert.equal(r.peek('127.0.0.1'), '127.0.0.1');
    assert.equal(await r.resolve('lab.test'), '127.0.0.2');
    assert.equal(r.mapped('LAB.test.'), '127.0.0.2');
    assert.equal(r.mapped('internal.test'), undefined);
    assert.equal(r.mapped('127.0.0.2'), undefined);
    const s = createResolver({ mode: 'static', resolve: ['*.sim.test=127.0.0.1'] });
    assert.equal(s.mapped('h1.sim.test'), '127.0.0.1');
    assert.equal(s.mapped('127.0.0.1'), undefined);
  });

  it('evicts the oldest entry beyond maxEntries', async () => {
    const dns = fakeDns({ 'a.test': { A: [{ address: '192.0.2.1', ttl: 300 }] }, 'b.test': { A: [{ address: '192.0.2.2', ttl: 300 }] } });
    const r = new SystemResolver(new StaticResolveMap(), { mode: 'system', clock: new ManualClock(0), rawResolve: dns.raw, maxEntries: 1 });
    await r.resolve('a.test');
    await r.resolve('b.test');
    assert.equal(r.stats().cacheSize, 1);
    assert.equal(r.peek('a.test'), undefined);
    assert.equal(r.peek('b.test'), '192.0.2.2');
  });
});

describe('error table', () => {
  it('has a retryable flag for every code and classifies common causes', () => {
    for (const [code, info] of Object.entries(FETCH_ERRORS)) {
      assert.match(code, /^MEGURI_ERR_[A-Z0-9_]+$/);
      assert.equal(typeof info.retryable, 'boolean');
    }
    assert.equal(classifyError(dnsError('ECONNREFUSED')), 'MEGURI_ERR_CONNECT');
    assert.equal(classifyError(dnsError('ECONNRESET')), 'MEGURI_ERR_RESET');
    assert.equal(classifyError(dnsError('UND_ERR_CONNECT_TIMEOUT')), 'MEGURI_ERR_CONNECT_TIMEOUT');
    assert.equal(classifyError(dnsError('HPE_INVALID_CONSTANT')), 'MEGURI_ERR_PROTOCOL');
    assert.equal(classifyError(dnsError('CERT_HAS_EXPIRED')), 'MEGURI_ERR_TLS');
    assert.equal(classifyError(new Error('???')), 'MEGURI_ERR_INTERNAL');
    assert.equal(isRetryable('MEGURI_ERR_BINARY'), false);
    assert.equal(isRetryable('MEGURI_ERR_TIMEOUT'), true);
  });
});

describe('Limiter', () => {
  it('caps per IP and globally, serving waiters in order', async () => {
    const l = new Limiter(1, 2);
    assert.equal(l.acquire('a'), true);
    const order: string[] = [];
    const a2 = l.acquire('a');
    const a3 = l.acquire('a');
    assert.notEqual(a2, true);
    void (a2 as Promise<boolean>).then(() => order.push('a2'));
    void (a3 as Promise<boolean>).then(() => order.push('a3'));
    assert.equal(l.acquire('b'), true);
    const c = l.acquire('c'); // global cap 2 reached
    assert.notEqual(c, true);
    void (c as Promise<boolean>).then(() => order.push('c'));
    l.release('b'); // frees a global slot: c gets it
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(order, ['c']);
    l.release('a'); // a2 takes a's slot, then waits for a global one
    l.release('c');
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(order, ['c', 'a2']);
    assert.equal(l.activeFor('a'), 1);
    l.close();
    assert.equal(await a3, false);
    assert.equal(await (l.acquire('z') as Promise<boolean>), false);
  });
});
