/**
 * Cross-check of the simulated web against itself: a small, straightforward reference crawler
 * fetches over real sockets, parses the served HTML with htmlparser2 and obeys robots.txt as
 * served; the set of page URLs it requests must equal expectedFetchSet() exactly.
 */
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { Parser } from 'htmlparser2';
import { Agent, request } from 'undici';
import { hostilePreset, parseRobots, robotsAllows, SimWeb, type RobotsRules } from '../../services/simweb/index.ts';

function extractLinks(html: string, base: string): string[] {
  const out: string[] = [];
  const parser = new Parser({
    onopentag(name, attrs) {
      if (name !== 'a' || attrs.href === undefined) return;
      const rel = (attrs.rel ?? '').toLowerCase().split(/\s+/);
      if (rel.includes('nofollow')) return;
      let u: URL;
      try {
        u = new URL(attrs.href.trim(), base);
      } catch {
        return;
      }
      if (u.protocol !== 'http:') return;
      u.hash = '';
      out.push(u.href);
    },
  });
  parser.write(html);
  parser.end();
  return out;
}

async function crawl(web: SimWeb, seeds: string[], maxDepth: number): Promise<{ fetched: Set<string>; requests: number }> {
  const agent = new Agent({ connections: 8, headersTimeout: 400, bodyTimeout: 400 });
  const robots = new Map<string, Promise<RobotsRules>>();
  const fetched = new Set<string>();
  const depth = new Map<string, number>();
  let requests = 0;
  const known = (url: string): URL | undefined => {
    try {
      const u = new URL(url);
      return web.model.hostIndex(u.hostname) === undefined ? undefined : u;
    } catch {
      return undefined;
    }
  };
  const get = async (u: URL): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer } | undefined> => {
    requests++;
    try {
      const res = await request(`http://${web.hostIp(u.hostname)}:${web.port}${u.pathname}${u.search}`, {
        headers: { host: u.host, 'user-agent': 'meguri-ref/1' },
        dispatcher: agent,
        // The endless body never goes quiet long enough for bodyTimeout; generous for a loaded machine,
        // where a robots.txt answer that misses the limit would hide a whole host.
        signal: AbortSignal.timeout(3000),
      });
      const body = Buffer.from(await res.body.arrayBuffer());
      return { status: res.statusCode, headers: res.headers, body };
    } catch {
      return undefined; // reset, hang, endless body
    }
  };
  const rulesFor = (u: URL): Promise<RobotsRules> => {
    let p = robots.get(u.host);
    if (p === undefined) {
      p = get(new URL('/robots.txt', u)).then((r) =>
        r === undefined ? parseRobots({ status: 503, body: '' }) : parseRobots({ status: r.status, body: r.body.toString('latin1') }),
      );
      robots.set(u.host, p);
    }
    return p;
  };
  let level = seeds.filter((s) => known(s) !== undefined);
  for (const s of level) depth.set(s, 0);
  try {
    for (let d = 0; d <= maxDepth && level.length > 0; d++) {
      const next: string[] = [];
      const queue = [...level];
      const work = async (): Promise<void> => {
        for (let url = queue.shift(); url !== undefined; url = queue.shift()) {
          const u = known(url);
          if (u === undefined || fetched.has(url)) continue;
          if (!robotsAllows(await rulesFor(u), 'meguri', u.pathname + u.search)) continue;
          fetched.add(url);
          let r = await get(u);
          for (let attempt = 0; attempt < 8 && r !== undefined && (r.status >= 500 || r.status === 429); attempt++) r = await get(u);
          if (r === undefined) continue;
          const found: { url: string; sameDepth: boolean }[] = [];
          if (r.status >= 300 && r.status < 400 && typeof r.headers.location === 'string') {
            found.push({ url: new URL(r.headers.location, u).href, sameDepth: true });
          } else if (r.status === 200 && String(r.headers['content-type']).startsWith('text/html') && r.headers['content-encoding'] === undefined) {
            for (const l of extractLinks(r.body.toString('latin1'), url)) found.push({ url: l, sameDepth: false });
          }
          for (const f of found) {
            const fd = f.sameDepth ? d : d + 1;
            if (fd > maxDepth || known(f.url) === undefined) continue;
            const prev = depth.get(f.url);
            if (prev !== undefined && prev <= fd) continue;
            depth.set(f.url, fd);
            if (f.sameDepth) queue.push(f.url);
            else next.push(f.url);
          }
        }
      };
      await Promise.all(Array.from({ length: 8 }, () => work()));
      level = next.filter((u) => depth.get(u) === d + 1);
    }
  } finally {
    await agent.close();
  }
  return { fetched, requests };
}

describe('reference crawl matches the ground truth', () => {
  test('hostile preset, 30 hosts, depth 3', async () => {
    const hostile = hostilePreset();
    delete hostile.tooMany; // a real-time rate limit would make this test slow, not different
    hostile.slow = { share: 0.05, latencyMs: 30 };
    hostile.pages = { ...hostile.pages, redirect: 0.05, redirectLoop: 0.02, malformed: 0.05, latin1: 0.03, shiftJis: 0.03, png: 0.03, pdf: 0.02, binaryAsHtml: 0.02, huge: 0.01, gzipBomb: 0.01, slowBody: 0.01, invalidLinks: 0.1 };
    hostile.hang = { count: 1 };
    hostile.reset = { count: 1 };
    hostile.error = { count: 1 };
    const web = await SimWeb.start({
      seed: 21,
      hosts: 30,
      pagesPerHost: 40,
      hostile,
      nofollowShare: 0.05,
      hugeBytes: 512 * 1024,
      bombBytes: 8 * 1024 * 1024,
      trickleIntervalMs: 100,
    });
    try {
      const seeds = web.homeUrls().slice(0, 10);
      const plan = web.expectedFetchSet({ seeds, maxDepth: 3 });
      const { fetched } = await crawl(web, seeds, 3);
      const missing = [...plan.urls].filter((u) => !fetched.has(u));
      const extra = [...fetched].filter((u) => !plan.urls.has(u));
      assert.deepEqual({ missing, extra }, { missing: [], extra: [] });
      assert.ok(plan.urls.size > 300, `plan has ${plan.urls.size} URLs`);
      const outcomes = new Set(plan.outcome.values());
      for (const o of ['html', 'redirect', 'not-html', 'error', 'timeout'] as const) assert.ok(outcomes.has(o), `outcome ${o} occurs`);
      assert.ok(plan.disallowed.size > 0);
    } finally {
      await web.close();
    }
  });
});
