/**
 * Ground-truth checks of a crawl against the simulated web's access log (the server's view is the
 * truth: what was really requested, when, and on which connection).
 */
import assert from 'node:assert/strict';
import type { SimWeb, AccessLogEntry } from '../../services/simweb/index.ts';

export function pageKey(host: string, path: string): string {
  return `${host}${path}`;
}

export function urlKey(url: string): string {
  const u = new URL(url);
  return pageKey(u.hostname, `${u.pathname}${u.search}`);
}

export function pageRequests(web: SimWeb): AccessLogEntry[] {
  return web.accessLog().filter((e) => e.path !== '/robots.txt');
}

/** Every expected page fetched exactly once, nothing else fetched, no disallowed URL requested. */
export function assertFetchedExactlyOnce(web: SimWeb, expected: Set<string>, disallowed: Set<string>, opts: { allowDuplicates?: boolean } = {}): void {
  const counts = new Map<string, number>();
  for (const e of pageRequests(web)) counts.set(pageKey(e.host, e.path), (counts.get(pageKey(e.host, e.path)) ?? 0) + 1);
  const want = new Set([...expected].map(urlKey));
  const missing = [...want].filter((k) => !counts.has(k));
  const extra = [...counts.keys()].filter((k) => !want.has(k));
  assert.deepEqual(missing, [], 'every reachable, allowed page was fetched');
  assert.deepEqual(extra, [], 'nothing outside the expected set was fetched');
  const forbidden = [...disallowed].map(urlKey).filter((k) => counts.has(k));
  assert.deepEqual(forbidden, [], 'no robots-disallowed URL was requested');
  if (!opts.allowDuplicates) {
    const dups = [...counts].filter(([, n]) => n > 1);
    assert.deepEqual(dups, [], 'no page was fetched twice');
  }
}

/** Per host: requests never overlap (one in flight) and starts are at least `minGapMs` apart. */
export function assertPolite(web: SimWeb, minGapMs: number): { minObservedGapMs: number; requests: number } {
  const byHost = new Map<string, AccessLogEntry[]>();
  for (const e of web.accessLog()) {
    const list = byHost.get(e.host) ?? [];
    byHost.set(e.host, list);
    list.push(e);
  }
  let minObserved = Infinity;
  let requests = 0;
  for (const [host, list] of byHost) {
    list.sort((a, b) => a.wallMs - b.wallMs);
    requests += list.length;
    for (let i = 1; i < list.length; i++) {
      const prev = list[i - 1]!;
      const cur = list[i]!;
      const gap = cur.wallMs - prev.wallMs;
      minObserved = Math.min(minObserved, gap);
      assert.ok(cur.wallMs >= prev.wallMs + prev.durationMs - 1, `two requests in flight to ${host}: ${prev.path} and ${cur.path}`);
      assert.ok(gap >= minGapMs - 1, `requests to ${host} only ${gap} ms apart (${prev.path} → ${cur.path}), minimum ${minGapMs}`);
    }
  }
  return { minObservedGapMs: minObserved, requests };
}

export function resolveEntries(web: SimWeb): string[] {
  return Object.entries(web.resolveMap()).map(([pattern, ip]) => `${pattern}=${ip}`);
}
