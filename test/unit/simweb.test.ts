import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { brotliDecompressSync, gunzipSync, inflateSync } from 'node:zlib';
import { Agent, request, type Dispatcher } from 'undici';
import { ManualClock, ScaledClock } from '../../services/runtime/clock.ts';
import {
  chooseEncoding,
  parseRobots,
  relativeRef,
  robotsAllows,
  robotsCrawlDelay,
  SimWeb,
  SimWebModel,
  type SimWebOptions,
} from '../../services/simweb/index.ts';

const T0 = Date.UTC(2026, 0, 1);

interface Got {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** GET through the listen IP with a Host header; never resolves *.sim.test. */
async function get(
  web: SimWeb,
  url: string,
  o: { headers?: Record<string, string>; dispatcher?: Dispatcher; method?: 'GET' | 'HEAD'; headersTimeout?: number; ip?: string } = {},
): Promise<Got> {
  const u = new URL(url);
  const ip = o.ip ?? web.hostIp(u.hostname);
  const res = await request(`http://${ip}:${web.port}${u.pathname}${u.search}`, {
    method: o.method ?? 'GET',
    headers: { host: u.host, ...o.headers },
    ...(o.dispatcher === undefined ? {} : { dispatcher: o.dispatcher }),
    ...(o.headersTimeout === undefined ? {} : { headersTimeout: o.headersTimeout }),
  });
  const body = Buffer.from(await res.body.arrayBuffer());
  return { status: res.statusCode, headers: res.headers, body };
}

function header(g: Got, name: string): string | undefined {
  const v = g.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

function model(opts: SimWebOptions = {}): SimWebModel {
  return new SimWebModel({ seed: 11, hosts: 50, pagesPerHost: 40, ...opts }, 8080, T0);
}

function allLinks(m: SimWebModel): { from: string; to: string; sameHost: boolean }[] {
  const out: { from: string; to: string; sameHost: boolean }[] = [];
  for (let h = 0; h < m.hostCount; h++) {
    for (let n = 0; n < m.pagesOf(h); n++) {
      for (const l of m.pageLinks(h, n)) out.push({ from: m.urlOf(h, n), to: m.canonical(l.host, l.path), sameHost: l.host === h });
    }
  }
  return out;
}

describe('graph model', () => {
  test('same seed gives the same graph, another seed a different one', () => {
    const a = allLinks(model());
    const b = allLinks(model());
    const c = allLinks(model({ seed: 12 }));
    assert.deepEqual(a, b);
    assert.notDeepEqual(a, c);
  });

  test('in-degree is heavy-tailed: a few pages collect many links', () => {
    const deg = new Map<string, number>();
    for (const l of allLinks(model())) deg.set(l.to, (deg.get(l.to) ?? 0) + 1);
    const ds = [...deg.values()].sort((x, y) => y - x);
    const median = ds[Math.floor(ds.length / 2)] ?? 0;
    const max = ds[0] ?? 0;
    assert.ok(max >= 20 * Math.max(1, median), `max ${max} median ${median}`);
    const total = ds.reduce((s, d) => s + d, 0);
    const top = ds.slice(0, Math.ceil(ds.length / 100)).reduce((s, d) => s + d, 0);
    assert.ok(top / total > 0.05, `top 1% of pages hold ${top / total} of links`);
    const doublings = new Set(ds.map((d) => Math.floor(Math.log2(d + 1))));
    assert.ok(doublings.size >= 7, `in-degrees span ${doublings.size} powers of two`);
  });

  test('most links stay on their host', () => {
    const links = allLinks(model());
    const share = links.filter((l) => l.sameHost).length / links.length;
    assert.ok(share > 0.8 && share < 0.95, `same-host share ${share}`);
  });

  test('every page is reachable from / within treeDepth', () => {
    const m = model({ hosts: 5, pagesPerHost: 300 });
    for (let h = 0; h < m.hostCount; h++) {
      const plan = m.expectedFetchSet(
        { seeds: [m.urlOf(h, 0)], maxDepth: m.treeDepth(h), sameHostOnly: true, isAllowed: () => true, followNofollow: true },
        T0,
      );
      for (let n = 0; n < m.pagesOf(h); n++) assert.ok(plan.urls.has(m.urlOf(h, n)), `page ${n} of h${h}`);
    }
  });

  test('paths round-trip and vary', () => {
    const m = model();
    const kinds = new Set<string>();
    for (let h = 0; h < 5; h++) {
      for (let n = 0; n < m.pagesOf(h); n++) {
        const p = m.pathOf(h, n);
        kinds.add(p.split(/[/?]/)[1] ?? '');
        assert.equal(m.pageOfPath(h, p), n);
      }
    }
    assert.ok(kinds.has('p') && kinds.has('item') && kinds.size >= 4, [...kinds].join(','));
    assert.equal(m.pageOfPath(0, '/p/007.html'), undefined);
    assert.equal(m.pageOfPath(0, '/p/99999.html'), undefined);
  });

  test('relative references resolve to the target', () => {
    const cases: [string, string][] = [
      ['/p/1.html', '/p/3.html'],
      ['/d/5/', '/p/3.html'],
      ['/', '/item?id=4'],
      ['/item?id=3', '/item?id=4'],
      ['/private1/9.html', '/'],
      ['/d/5/', '/d/5/'],
      ['/cgi/2.cgi', '/cal?date=2026-01-02'],
    ];
    for (const [from, to] of cases) {
      const ref = relativeRef(from, to);
      const resolved = new URL(ref, 'http://x.test' + from);
      assert.equal(resolved.pathname + resolved.search, to, `${from} -> ${to} via ${ref}`);
    }
  });

  test('ground truth: BFS by depth, honours robots and nofollow, stops at errors', () => {
    const m = model({ nofollowShare: 0.3 });
    const seeds = [m.urlOf(0, 0), m.urlOf(1, 0)];
    const plan = m.expectedFetchSet({ seeds, maxDepth: 2 }, T0);
    // Independent BFS over the same edges.
    const depth = new Map<string, number>();
    let frontier = seeds.filter((s) => {
      const p = m.parseUrl(s);
      return p !== undefined && m.isAllowed(p.host, p.path);
    });
    for (const s of frontier) depth.set(s, 0);
    for (let d = 0; d < 2; d++) {
      const next: string[] = [];
      for (const u of frontier) {
        const p = m.parseUrl(u);
        assert.ok(p);
        const r = m.resolve(p.host, p.path, T0);
        if (r.type !== 'page') continue;
        for (const l of r.links) {
          if (l.nofollow) continue;
          const t = m.canonical(l.host, l.path);
          if (depth.has(t) || !m.isAllowed(l.host, l.path)) continue;
          depth.set(t, d + 1);
          next.push(t);
        }
      }
      frontier = next;
    }
    assert.deepEqual([...plan.urls].sort(), [...depth.keys()].sort());
    for (const [u, d] of depth) assert.equal(plan.depth.get(u), d);
    for (const u of plan.disallowed) assert.ok(!plan.urls.has(u));
    const followAll = m.expectedFetchSet({ seeds, maxDepth: 2, followNofollow: true }, T0);
    assert.ok(followAll.urls.size > plan.urls.size);
  });

  test('link graph: the ground-truth pages and the links followed between them, each once', () => {
    const m = model({ nofollowShare: 0.3, hostile: { pages: { redirect: 0.3, png: 0.1 } } });
    const seeds = [m.urlOf(0, 0), m.urlOf(3, 0)];
    const plan = m.expectedFetchSet({ seeds, maxDepth: 15 }, T0);
    const g = m.linkGraph({ seeds, maxDepth: 15 }, T0);
    assert.deepEqual(g.urls, [...plan.urls]);
    assert.equal(g.src.length, g.dst.length);
    const edges = new Set<string>();
    for (let i = 0; i < g.src.length; i++) {
      const key = `${g.urls[g.src[i]!]} ${g.urls[g.dst[i]!]}`;
      assert.ok(!edges.has(key), `edge listed twice: ${key}`);
      edges.add(key);
    }
    // Independently: followed links of HTML pages and redirect hops, kept when the target is a node.
    const want = new Set<string>();
    let nofollowSeen = 0;
    for (const u of plan.urls) {
      const p = m.parseUrl(u);
      assert.ok(p);
      const r = m.resolve(p.host, p.path, T0);
      const targets: string[] = [];
      if (r.type === 'page') {
        for (const l of r.links) {
          if (l.nofollow) nofollowSeen++;
          else targets.push(m.canonical(l.host, l.path));
        }
      } else if (r.type === 'redirect') targets.push(m.canonical(r.to.host, r.to.path));
      for (const t of targets) if (plan.urls.has(t)) want.add(`${u} ${t}`);
    }
    assert.ok(nofollowSeen > 0, 'some links are nofollow');
    assert.ok([...plan.outcome.values()].includes('redirect'), 'some pages redirect');
    assert.deepEqual([...edges].sort(), [...want].sort());
    assert.ok(edges.size > g.urls.length * 5, `${edges.size} edges over ${g.urls.length} pages`);
  });

  test('redirect targets inherit depth by default, or cost one hop', () => {
    const m = model({ hostile: { pages: { redirect: 0.5 } } });
    let redirect: string | undefined;
    for (let n = 1; n < 40 && redirect === undefined; n++) if (m.pageKind(0, n) === 'redirect') redirect = m.urlOf(0, n);
    assert.ok(redirect);
    const p0 = m.expectedFetchSet({ seeds: [redirect], maxDepth: 0, isAllowed: () => true }, T0);
    const p1 = m.expectedFetchSet({ seeds: [redirect], maxDepth: 0, isAllowed: () => true, redirectCost: 1 }, T0);
    assert.equal(p1.urls.size, 1);
    assert.ok(p0.urls.size >= 2, 'chain hops and target at depth 0');
    assert.ok([...p0.outcome.values()].includes('html'));
  });
});

describe('robots matcher', () => {
  const rules = parseRobots({
    status: 200,
    body: [
      '# comment',
      'User-agent: *',
      'Disallow: /private',
      'Allow: /private1/',
      'Disallow: /*.cgi$',
      'Disallow: /a*/b/',
      'Crawl-delay: 2',
      '',
      'User-agent: OtherBot',
      'user-agent: meguri/2.0',
      'Disallow: /only-meguri',
      'Allow: /x',
      'Disallow: /x',
      '',
      'Sitemap: http://h0.sim.test/sitemap.xml',
    ].join('\n'),
  });

  test('longest match wins, Allow wins ties, * and $ work', () => {
    assert.equal(robotsAllows(rules, 'somebot', '/private0/1.html'), false);
    assert.equal(robotsAllows(rules, 'somebot', '/private1/1.html'), true);
    assert.equal(robotsAllows(rules, 'somebot', '/cgi/1.cgi'), false);
    assert.equal(robotsAllows(rules, 'somebot', '/cgi/1.cgi?x=1'), true);
    assert.equal(robotsAllows(rules, 'somebot', '/abc/b/x'), false);
    assert.equal(robotsAllows(rules, 'somebot', '/abc/c/x'), true);
    assert.equal(robotsAllows(rules, 'somebot', '/robots.txt'), true);
    assert.equal(robotsCrawlDelay(rules, 'somebot'), 2);
    assert.deepEqual(rules.sitemaps, ['http://h0.sim.test/sitemap.xml']);
  });

  test('a group naming the agent replaces *', () => {
    assert.equal(robotsAllows(rules, 'meguri', '/private0/1.html'), true);
    assert.equal(robotsAllows(rules, 'Meguri', '/only-meguri/x'), false);
    assert.equal(robotsAllows(rules, 'meguri', '/x'), true, 'tie: allow wins');
    assert.equal(robotsCrawlDelay(rules, 'meguri'), undefined);
  });

  test('status semantics', () => {
    assert.equal(robotsAllows(parseRobots({ status: 404, body: '' }), 'a', '/x'), true);
    assert.equal(robotsAllows(parseRobots({ status: 503, body: '' }), 'a', '/x'), false);
  });
});

describe('served web', () => {
  let web: SimWeb;
  const clock = new ManualClock(T0);
  before(async () => {
    web = await SimWeb.start({
      seed: 5,
      hosts: 12,
      pagesPerHost: 40,
      clock,
      bombBytes: 16 * 1024 * 1024,
      hugeBytes: 10 * 1024 * 1024,
      trickleIntervalMs: 50,
      hostOverrides: {
        'h0.sim.test': { validators: 'both', compression: true },
        'h1.sim.test': { latencyMs: 150 },
        'h2.sim.test': { fail: { status: 500 } },
        'h3.sim.test': { fail: { mode: 'reset' } },
        'h4.sim.test': { fail: { mode: 'hang' } },
        'h5.sim.test': { fail: { status: 503, retryAfterSec: 7, firstAttempts: 2 } },
        'h6.sim.test': { rateLimit: { minIntervalMs: 1000, retryAfterSec: 1 } },
        'h7.sim.test': { calendar: true },
        'h8.sim.test': { closeAfter: 2 },
        'h9.sim.test': { validators: 'none' },
      },
      robots: { overrides: { 'h0.sim.test': 'User-agent: *\nDisallow: /private\n' } },
      hostile: {
        pages: { redirect: 0.08, redirectLoop: 0.04, png: 0.04, pdf: 0.04, binaryAsHtml: 0.04, malformed: 0.04, latin1: 0.04, shiftJis: 0.04, invalidLinks: 0.2 },
      },
    });
  });
  after(async () => {
    await web.close();
  });

  test('virtual hosts by Host header; port in Host ignored; unknown host 404', async () => {
    const a = await get(web, web.urlOf(0, 0));
    const b = await get(web, web.urlOf(10, 0));
    assert.equal(a.status, 200);
    assert.match(a.body.toString(), /<div class="brand">h0\.sim\.test<\/div>/);
    assert.match(b.body.toString(), /<div class="brand">h10\.sim\.test<\/div>/);
    const noPort = await get(web, 'http://h10.sim.test/');
    assert.deepEqual(noPort.body, b.body);
    const unknown = await get(web, 'http://h999.sim.test/', { ip: '127.0.0.1' });
    assert.equal(unknown.status, 404);
    const missing = await get(web, web.origin(0) + '/no/such/page');
    assert.equal(missing.status, 404);
    assert.deepEqual(web.resolveMap(), { '*.sim.test': '127.0.0.1' });
  });

  test('ordinary pages have the configured size and the links linksOf reports', async () => {
    const url = web.urlOf(10, 3);
    assert.equal(web.resourceAt(url)?.type, 'page');
    const g = await get(web, url);
    assert.equal(g.body.length, 21_806);
    const html = g.body.toString();
    const hrefs = [...html.matchAll(/<a href="([^"]*)"/g)].map((m) => (m[1] ?? '').replace(/&amp;/g, '&'));
    for (const l of web.linksOf(url)) {
      assert.ok(hrefs.includes(l.href), `href ${l.href} on page`);
      assert.equal(new URL(l.href, url).href.replace(/#.*$/, ''), l.url);
    }
    assert.match(html, /<title>[^<]+<\/title>/);
  });

  test('robots.txt is served and can change at runtime', async () => {
    const r = await get(web, web.origin(0) + '/robots.txt');
    assert.equal(r.status, 200);
    assert.equal(r.body.toString(), 'User-agent: *\nDisallow: /private\n');
    assert.equal(web.isAllowed(web.origin(0) + '/private1/3.html'), false);
    web.setRobots('h0.sim.test', 'User-agent: *\nDisallow: /\n');
    assert.equal((await get(web, web.origin(0) + '/robots.txt')).body.toString(), 'User-agent: *\nDisallow: /\n');
    assert.equal(web.expectedFetchSet({ seeds: [web.urlOf(0, 0)], maxDepth: 2 }).urls.size, 0);
    web.setRobots(0, null);
    assert.equal((await get(web, web.origin(0) + '/robots.txt')).status, 404);
    assert.equal(web.isAllowed(web.origin(0) + '/private1/3.html'), true);
    web.setRobots(0, { status: 503, body: 'busy' });
    assert.equal((await get(web, web.origin(0) + '/robots.txt')).status, 503);
    assert.equal(web.isAllowed(web.urlOf(0, 0)), false);
    web.setRobots(0, 'User-agent: *\nDisallow: /private\n');
  });

  test('validators and 304', async () => {
    const url = web.urlOf(0, 1);
    const first = await get(web, url);
    const etag = header(first, 'etag');
    const lm = header(first, 'last-modified');
    assert.ok(etag !== undefined && lm !== undefined);
    assert.equal(etag, web.etagAt(url, clock.now()));
    assert.equal(Date.parse(lm), Math.floor(web.stateAt(url, clock.now()).lastModified / 1000) * 1000);
    const inm = await get(web, url, { headers: { 'if-none-match': `"nope", ${etag}` } });
    assert.equal(inm.status, 304);
    assert.equal(inm.body.length, 0);
    const ims = await get(web, url, { headers: { 'if-modified-since': lm } });
    assert.equal(ims.status, 304);
    const stale = await get(web, url, { headers: { 'if-none-match': '"old"', 'if-modified-since': lm } });
    assert.equal(stale.status, 200, 'If-None-Match takes precedence');
    const none = await get(web, web.urlOf(9, 1), { headers: { 'if-modified-since': lm } });
    assert.equal(header(none, 'etag'), undefined);
    assert.equal(header(none, 'last-modified'), undefined);
    assert.equal(none.status, 200);
    const log = web.accessLog().filter((e) => e.host === 'h0.sim.test' && e.path === new URL(url).pathname + new URL(url).search);
    assert.deepEqual(log.map((e) => e.conditional), [false, true, true, true]);
    assert.ok(log.every((e) => e.etag === etag), 'the log names the version answered, 304s included');
  });

  test('pages change with the clock; 304 stops once the version moves', async () => {
    // Pick the fastest-changing ordinary page of h0.
    let url = web.urlOf(0, 0);
    for (const u of web.pageUrls(0)) {
      if (web.resourceAt(u)?.type !== 'page') continue;
      if (web.stateAt(u, clock.now()).meanIntervalMs < web.stateAt(url, clock.now()).meanIntervalMs) url = u;
    }
    const before = await get(web, url);
    const etag = header(before, 'etag') ?? '';
    const t0 = clock.now();
    const next = web.changeTimes(url, t0, t0 + 400 * 86_400_000)[0];
    assert.ok(next, 'page changes within 400 days');
    clock.advance(next.t - t0);
    assert.equal(web.versionAt(url, clock.now()), web.versionAt(url, t0) + 1);
    const afterChange = await get(web, url, { headers: { 'if-none-match': etag } });
    assert.equal(afterChange.status, 200);
    assert.notEqual(header(afterChange, 'etag'), etag);
    assert.equal(Date.parse(header(afterChange, 'last-modified') ?? ''), Math.floor(next.t / 1000) * 1000);
  });

  test('compression: gzip, br, deflate; identity by default', async () => {
    const url = web.urlOf(0, 2);
    const plain = await get(web, url);
    assert.equal(header(plain, 'content-encoding'), undefined);
    for (const [enc, dec] of [
      ['gzip', gunzipSync],
      ['br', brotliDecompressSync],
      ['deflate', inflateSync],
    ] as const) {
      const z = await get(web, url, { headers: { 'accept-encoding': enc } });
      assert.equal(header(z, 'content-encoding'), enc);
      assert.ok(z.body.length < plain.body.length / 2);
      assert.deepEqual(dec(z.body), plain.body);
    }
    assert.equal(chooseEncoding('gzip;q=0.5, br;q=0'), 'gzip');
    assert.equal(chooseEncoding('identity'), undefined);
    assert.equal(chooseEncoding('*'), 'br');
  });

  test('gzip bomb: small on the wire, huge inflated', async () => {
    const g = await get(web, web.origin(0) + '/_sim/bomb');
    assert.equal(header(g, 'content-encoding'), 'gzip');
    assert.ok(g.body.length < 200_000, `compressed ${g.body.length}`);
    const inflated = gunzipSync(g.body, { maxOutputLength: 64 * 1024 * 1024 });
    assert.equal(inflated.length, 16 * 1024 * 1024);
  });

  test('host failures: latency, 5xx, reset, hang, Retry-After, 429', async () => {
    const t = performance.now();
    assert.equal((await get(web, web.urlOf(1, 0))).status, 200);
    assert.ok(performance.now() - t >= 140);
    assert.equal((await get(web, web.origin(1) + '/robots.txt')).status !== 0, true);

    assert.equal((await get(web, web.urlOf(2, 0))).status, 500);
    assert.equal((await get(web, web.origin(2) + '/robots.txt')).status === 500, false, 'robots.txt spared');

    await assert.rejects(get(web, web.urlOf(3, 0)));
    await assert.rejects(get(web, web.urlOf(4, 0), { headersTimeout: 200 }));

    const u5 = web.urlOf(5, 1);
    const r1 = await get(web, u5);
    assert.equal(r1.status, 503);
    assert.equal(header(r1, 'retry-after'), '7');
    assert.equal((await get(web, u5)).status, 503);
    assert.equal((await get(web, u5)).status, 200);

    clock.advance(10_000);
    assert.equal((await get(web, web.urlOf(6, 0))).status, 200);
    const limited = await get(web, web.urlOf(6, 1));
    assert.equal(limited.status, 429);
    assert.equal(header(limited, 'retry-after'), '1');
    clock.advance(1500);
    assert.equal((await get(web, web.urlOf(6, 1))).status, 200);

    const plan = web.expectedFetchSet({ seeds: [web.urlOf(2, 0), web.urlOf(4, 0), web.urlOf(5, 0)], maxDepth: 1, sameHostOnly: true });
    assert.equal(plan.outcome.get(web.urlOf(2, 0)), 'error');
    assert.equal(plan.outcome.get(web.urlOf(4, 0)), 'timeout');
    assert.equal(plan.outcome.get(web.urlOf(5, 0)), 'html', 'transient failures count as eventually fetched');
    const log = web.accessLog();
    const reset = log.find((e) => e.host === 'h3.sim.test');
    assert.ok(reset && reset.status === 0 && reset.aborted);
  });

  test('special pages: redirects, loops, non-HTML, binary, charsets, malformed, invalid links', async () => {
    const seen = new Set<string>();
    for (let h = 9; h < 12; h++) {
      for (const url of web.pageUrls(h)) {
        const r = web.resourceAt(url);
        if (r === undefined) continue;
        const g = await get(web, url);
        const ct = header(g, 'content-type') ?? '';
        if (r.type === 'redirect') {
          seen.add('redirect');
          assert.ok(g.status === 301 || g.status === 302);
          const loc = header(g, 'location') ?? '';
          const target = new URL(loc, url).href;
          assert.equal(target, web.model.canonical(r.to.host, r.to.path));
        } else if (r.type === 'binary') {
          seen.add(r.kind);
          if (r.kind === 'png') {
            assert.equal(ct, 'image/png');
            assert.deepEqual([...g.body.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
          }
          if (r.kind === 'pdf') {
            assert.equal(ct, 'application/pdf');
            assert.equal(g.body.subarray(0, 5).toString(), '%PDF-');
          }
          if (r.kind === 'binary') assert.match(ct, /^text\/html/);
        } else if (r.type === 'page') {
          seen.add(r.kind);
          if (r.kind === 'latin1' || r.kind === 'sjis') {
            const label = r.kind === 'latin1' ? 'iso-8859-1' : 'shift_jis';
            const declared = ct.toLowerCase().includes(label) || g.body.toString('latin1').toLowerCase().includes(`charset=${label}`) || g.body.toString('latin1').toLowerCase().includes(`charset="${label}"`);
            assert.ok(declared, `charset declared for ${url}`);
            const text = new TextDecoder(label).decode(g.body);
            if (r.kind === 'sjis') assert.match(text, /[\u3041-\u3093]/);
            else assert.match(text, /[éïüçèàñöß]/);
          }
          if (r.kind === 'malformed') assert.match(g.body.toString(), /<A HREF=|<a href='/);
          if (r.invalidLinks) {
            seen.add('invalid');
            assert.ok(g.body.toString().includes('href="http://[::1"'));
          }
        }
      }
    }
    for (const k of ['redirect', 'png', 'pdf', 'binary', 'malformed', 'latin1', 'sjis', 'invalid']) assert.ok(seen.has(k), `saw ${k}`);
    const loopA = await get(web, web.origin(0) + '/_sim/loop/a');
    assert.equal(header(loopA, 'location'), '/_sim/loop/b');
    const chain = await get(web, web.origin(0) + '/_sim/redirect/3');
    assert.equal(header(chain, 'location'), '/_sim/redirect/2');
  });

  test('huge body and endlessly slow body', async () => {
    const huge = await get(web, web.origin(0) + '/_sim/huge');
    assert.equal(huge.body.length, 10 * 1024 * 1024);
    const res = await request(`http://127.0.0.1:${web.port}/_sim/trickle`, { headers: { host: 'h0.sim.test' } });
    assert.equal(res.statusCode, 200);
    let got = 0;
    for await (const chunk of res.body) {
      got += (chunk as Buffer).length;
      if (got > 70) break; // head plus a few trickled bytes
    }
    res.body.destroy();
    await new Promise((r) => setTimeout(r, 100));
    const e = web.accessLog().find((x) => x.path === '/_sim/trickle');
    assert.ok(e && e.aborted && e.status === 200 && e.bytes > 60);
  });

  test('calendar trap links day to day forever', async () => {
    const home = web.linksOf(web.urlOf(7, 0)).map((l) => l.url);
    const cal = home.find((u) => u.includes('/cal?date='));
    assert.ok(cal);
    const g = await get(web, cal);
    assert.equal(g.status, 200);
    assert.match(g.body.toString(), /date=2026-01-02/);
    assert.equal((await get(web, web.origin(7) + '/cal?date=2026-02-30')).status, 404);
    const plan = web.expectedFetchSet({ seeds: [cal], maxDepth: 10, sameHostOnly: true });
    assert.ok([...plan.urls].filter((u) => u.includes('/cal?')).length >= 11);
  });

  test('keep-alive: Connection: close after N requests', async () => {
    web.clearLog();
    // A raw socket, so the client's own pooling choices can't blur what the server does.
    const sock = createConnection(web.port, '127.0.0.1');
    let raw = '';
    sock.on('data', (d: Buffer) => (raw += d.toString('latin1')));
    const closed = new Promise<void>((resolve) => sock.on('close', () => resolve()));
    await new Promise<void>((resolve) => sock.once('connect', () => resolve()));
    for (let i = 0; i < 3 && !sock.destroyed; i++) {
      sock.write(`GET /_sim/status/204 HTTP/1.1\r\nHost: h8.sim.test\r\n\r\n`);
      await new Promise((r) => setTimeout(r, 30));
    }
    await closed;
    const conn = raw.split('\r\n').filter((l) => /^connection:/i.test(l)).map((l) => l.toLowerCase());
    assert.deepEqual(conn, ['connection: keep-alive', 'connection: close']);
    const log = web.accessLog().filter((e) => e.host === 'h8.sim.test');
    assert.equal(log.length, 2);
    assert.equal(log[0]?.connectionId, log[1]?.connectionId);
    assert.deepEqual(log.map((e) => e.requestOnConnection), [1, 2]);
    // Other hosts keep connections open.
    const agent = new Agent({ connections: 1 });
    try {
      for (let i = 0; i < 4; i++) await get(web, web.urlOf(10, i), { dispatcher: agent });
      const ids = new Set(web.accessLog().filter((e) => e.host === 'h10.sim.test').map((e) => e.connectionId));
      assert.equal(ids.size, 1);
    } finally {
      await agent.close();
    }
  });

  test('access log entries carry all fields', async () => {
    web.clearLog();
    await get(web, web.urlOf(0, 0), { headers: { 'user-agent': 'meguri-test/1' } });
    const [e] = web.accessLog();
    assert.ok(e);
    assert.equal(e.host, 'h0.sim.test');
    assert.equal(e.path, '/');
    assert.equal(e.method, 'GET');
    assert.equal(e.status, 200);
    assert.equal(e.clientIp, '127.0.0.1');
    assert.equal(e.localIp, '127.0.0.1');
    assert.equal(e.localPort, web.port);
    assert.equal(e.t, clock.now());
    assert.ok(Math.abs(e.wallMs - Date.now()) < 5000);
    assert.ok(e.connectionId >= 1);
    assert.equal(e.bytes, 21_806);
    assert.ok(e.durationMs >= 0);
    assert.equal(e.conditional, false);
    assert.equal(e.aborted, false);
    assert.equal(e.userAgent, 'meguri-test/1');
    const head = await get(web, web.urlOf(0, 0), { method: 'HEAD' });
    assert.equal(head.body.length, 0);
    assert.equal(header(head, 'content-length'), '21806');
    assert.equal(web.stats().byStatus['200'] !== undefined, true);
  });
});

describe('access log file and runtime reconfiguration', () => {
  test('NDJSON log mirrors the in-memory log; configureHost takes effect at once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'simweb-'));
    const file = join(dir, 'access.ndjson');
    const web = await SimWeb.start({ seed: 3, hosts: 3, pagesPerHost: 10, accessLog: { file } });
    try {
      assert.equal((await get(web, web.urlOf(1, 0))).status, 200);
      web.configureHost(1, { fail: { status: 502 } });
      assert.equal((await get(web, web.urlOf(1, 0))).status, 502);
      web.configureHost('h1.sim.test', { fail: undefined });
      assert.equal((await get(web, web.urlOf(1, 0))).status, 200);
    } finally {
      await web.close();
    }
    const lines = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as unknown);
    assert.deepEqual(lines, JSON.parse(JSON.stringify(web.accessLog())));
    assert.deepEqual(web.accessLog().map((e) => e.status), [200, 502, 200]);
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('multiple listen IPs', () => {
  test('hosts spread over loopback IPs, each its own socket', async () => {
    const web = await SimWeb.start({ seed: 2, hosts: 6, pagesPerHost: 10, ips: ['127.0.0.1', '127.0.0.2', '127.0.0.3'], strictIp: true });
    try {
      const map = web.resolveMap();
      assert.equal(map['h1.sim.test'], '127.0.0.2');
      assert.equal(map['h5.sim.test'], '127.0.0.3');
      for (let h = 0; h < 6; h++) assert.equal((await get(web, web.urlOf(h, 0))).status, 200);
      const ips = new Set(web.accessLog().map((e) => e.localIp));
      assert.deepEqual([...ips].sort(), ['127.0.0.1', '127.0.0.2', '127.0.0.3']);
      for (const e of web.accessLog()) assert.equal(e.localIp, web.hostIp(e.host));
      assert.equal((await get(web, web.urlOf(1, 0), { ip: '127.0.0.1' })).status, 421);
    } finally {
      await web.close();
    }
  });
});

describe('change over time', () => {
  test('versions follow a Poisson process with the drawn rate', () => {
    const m = new SimWebModel({ seed: 9, hosts: 1, pagesPerHost: 200 }, 80, T0);
    const year = 365 * 86_400_000;
    for (let n = 0; n < 200; n += 7) {
      const mean = m.changes.meanIntervalMs(0, n);
      assert.ok(mean >= 3_600_000 && mean <= year);
      const ev = m.changes.changes(0, n, T0, T0 + 20 * year);
      assert.equal(ev.length, m.changes.countAt(0, n, T0 + 20 * year));
      for (let i = 1; i < ev.length; i++) assert.ok((ev[i]?.t ?? 0) >= (ev[i - 1]?.t ?? 0));
      // count matches rate within a generous bound (Poisson sd = sqrt(mean))
      const expected = (20 * year) / mean;
      assert.ok(Math.abs(ev.length - expected) < 5 * Math.sqrt(expected) + 3, `page ${n}: ${ev.length} vs ${expected}`);
      for (const [i, e] of ev.slice(0, 5).entries()) {
        assert.equal(m.changes.countAt(0, n, e.t) - m.changes.countAt(0, n, e.t - 1) >= 1, true);
        assert.equal(m.changes.eventTime(0, n, i + 1), e.t);
      }
      const mid = T0 + 3 * year + 12345;
      const part = m.changes.changes(0, n, mid, mid + year);
      assert.equal(part.length, m.changes.countAt(0, n, mid + year) - m.changes.countAt(0, n, mid));
      assert.deepEqual(part, ev.filter((e) => e.t > mid && e.t <= mid + year));
    }
  });

  test('boilerplate-only pages keep their main text', async () => {
    const clock = new ManualClock(T0);
    const web = await SimWeb.start({ seed: 4, hosts: 1, pagesPerHost: 60, clock, change: { boilerplateOnlyShare: 0.5, minIntervalMs: 3_600_000, maxIntervalMs: 86_400_000 } });
    try {
      const pages = web.pageUrls(0).filter((u) => web.resourceAt(u)?.type === 'page');
      const bp = pages.find((u) => web.stateAt(u, T0).boilerplateOnly);
      const ct = pages.find((u) => !web.stateAt(u, T0).boilerplateOnly);
      assert.ok(bp && ct);
      const main = (s: string): string => s.slice(s.indexOf('<main'));
      const b1 = (await get(web, bp)).body.toString();
      const c1 = (await get(web, ct)).body.toString();
      clock.advance(10 * 86_400_000);
      const b2 = (await get(web, bp)).body.toString();
      const c2 = (await get(web, ct)).body.toString();
      assert.ok(web.changeTimes(bp, T0, clock.now()).every((e) => e.kind === 'boilerplate'));
      assert.ok(web.changeTimes(ct, T0, clock.now()).every((e) => e.kind === 'content'));
      assert.notEqual(b1, b2);
      assert.equal(main(b1), main(b2));
      assert.notEqual(main(c1), main(c2));
    } finally {
      await web.close();
    }
  });

  test('pages disappear (404/410) at their time', async () => {
    const clock = new ManualClock(T0);
    const web = await SimWeb.start({ seed: 4, hosts: 1, pagesPerHost: 30, clock, change: { goneShare: 1, goneWithinMs: 86_400_000 } });
    try {
      const url = web.urlOf(0, 5);
      const gone = web.stateAt(url, T0 + 86_400_000).gone;
      assert.ok(gone);
      assert.equal((await get(web, url)).status, 200);
      clock.advance(gone.at - T0);
      assert.equal((await get(web, url)).status, gone.status);
      assert.equal((await get(web, web.urlOf(0, 0))).status, 200, 'home pages stay');
      assert.equal(web.expectedFetchSet({ seeds: [url], maxDepth: 0, isAllowed: () => true }).outcome.get(url), 'error');
    } finally {
      await web.close();
    }
  });

  test('a ScaledClock moves versions in real time', async () => {
    const clock = new ScaledClock(T0, 30 * 86_400_000 / 1000); // a month per wall second
    const web = await SimWeb.start({ seed: 8, hosts: 1, pagesPerHost: 20, clock, change: { minIntervalMs: 3_600_000, maxIntervalMs: 2 * 3_600_000 } });
    try {
      const url = web.urlOf(0, 0);
      const a = header(await get(web, url), 'etag');
      await new Promise((r) => setTimeout(r, 50));
      const b = header(await get(web, url), 'etag');
      assert.notEqual(a, b);
    } finally {
      await web.close();
    }
  });
});

describe('close()', () => {
  test('ends hanging and trickling connections promptly', async () => {
    const web = await SimWeb.start({ seed: 1, hosts: 2, pagesPerHost: 5, hostOverrides: { 'h1.sim.test': { fail: { mode: 'hang' } } } });
    const settle = (p: Promise<unknown>): Promise<string> => p.then(() => 'ok', () => 'failed');
    const hang = settle(get(web, web.urlOf(1, 0)));
    const res = await request(`http://127.0.0.1:${web.port}/_sim/trickle`, { headers: { host: 'h0.sim.test' } });
    const drain = settle(
      (async () => {
        for await (const _ of res.body) {
          /* keep reading */
        }
      })(),
    );
    await new Promise((r) => setTimeout(r, 50));
    const t = performance.now();
    await web.close();
    assert.ok(performance.now() - t < 1000);
    assert.equal(await hang, 'failed');
    assert.equal(await drain, 'failed');
    const statuses = web.accessLog().map((e) => [e.path, e.status, e.aborted]);
    assert.deepEqual(statuses.sort(), [
      ['/', 0, true],
      ['/_sim/trickle', 200, true],
    ]);
  });
});
