/**
 * The compiled conformance test of the topic schemas never says yes where zod would refuse a value
 * or hand back a different one: checked on records of every kind the hot topics carry and on
 * thousands of random damages to them (a key dropped or added, a wrong type, NaN, a bound
 * crossed, a bad URL, a wrong tag), each answer compared with zod's. Schemas with parts it does
 * not understand compile to nothing, so their records always go through zod.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { z } from 'zod';
import { conformanceOf } from '../../services/runtime/conformance.ts';
import { topicSchemas, frontierRecord, linksRecord, pageRecord, MAX_PAGE_HEADERS } from '../../schemas/index.ts';

const now = 1_790_000_000_000;
const url = (path: string): string => `http://h7.sim.test:8080${path}`;

const frontier = {
  v: 1,
  requestId: 'r-12-abc',
  url: url('/p/5.html'),
  host: 'h7.sim.test:8080',
  reason: 'new',
  score: 0.25,
  depth: 2,
  cgiHops: 0,
  validators: { etag: '"abc"', lastModified: 'Tue, 01 Sep 2026 10:00:00 GMT' },
  attempt: 1,
  ip: '127.0.0.9',
  redirects: [{ url: url('/old'), status: 301 }],
  issuedAt: now,
};

const page = {
  v: 1,
  request: frontier,
  finalUrl: url('/p/5.html'),
  redirects: [],
  status: 200,
  headers: { 'content-type': 'text/html; charset=utf-8', 'content-encoding': 'br', etag: '"abc"' },
  contentType: 'text/html',
  bodyTruncated: false,
  bytes: 5120,
  contentEncoding: 'br',
  decodeLimit: 10_485_760,
  timing: { startedAt: now, dnsMs: 0.1, connectMs: 0.4, ttfbMs: 2.5, totalMs: 3.25 },
  serverIp: '127.0.0.9',
  connectionReused: true,
  fetchedAt: now + 4,
  body: Buffer.from('<html><body>hello</body></html>'),
};

const seed = { v: 1, type: 'seed', url: url('/'), addedAt: now, kind: 'sitemap' };
const link = {
  v: 1,
  type: 'link',
  url: url('/p/9.html'),
  source: url('/p/5.html'),
  depth: 3,
  cgiHops: 0,
  anchor: 'next',
  contribution: 0.0125,
  sameSite: true,
  foundAt: now,
  redirect: [{ url: url('/p/8.html'), status: 302 }],
  priority: 0.5,
  changefreq: 'daily',
};
const bundle = {
  v: 1,
  type: 'links',
  source: url('/p/5.html'),
  depth: 3,
  cgiHops: 1,
  contribution: 0.0125,
  sameSite: false,
  foundAt: now,
  targets: Array.from({ length: 12 }, (_, i) => (i % 3 === 0 ? { url: url(`/q/${i}`), anchor: `link ${i}` } : { url: url(`/q/${i}`), lastmod: now - i, contribution: 0.5 })),
};
const outcome = {
  v: 1,
  type: 'outcome',
  requestId: 'r-12-abc',
  url: url('/p/5.html'),
  reason: 'new',
  finalUrl: url('/p/5.html'),
  status: 200,
  result: 'ok',
  md5: '0123456789abcdef0123456789abcdef',
  fingerprint: '0123456789abcdef',
  title: 'A page',
  validators: { etag: '"abc"' },
  outDegree: 2,
  outLinks: [url('/a'), url('/b')],
  noindex: false,
  fetch: { totalMs: 3.2, ttfbMs: 1.1, bytes: 20_000 },
  page: { topic: 'pages', partition: 1, offset: '12345' },
  lang: 'en',
  fetchedAt: now,
};
const robotsOutcome = { ...outcome, reason: 'robots', result: 'ok', robots: { status: 200, body: 'User-agent: *\nDisallow: /x' } };
const sitemapOutcome = {
  ...outcome,
  reason: 'sitemap',
  document: { kind: 'feed', format: 'rss', entries: 3, itemIds: ['0a1b2c3d', 'deadbeef'], newest: now, ttlMs: 60_000 },
};

const samples: { schema: z.ZodType; value: unknown }[] = [
  { schema: frontierRecord, value: frontier },
  { schema: pageRecord, value: page },
  { schema: pageRecord, value: { ...page, body: undefined, status: 0, error: { code: 'MEGURI_ERR_TIMEOUT', message: 'timed out' } } },
  ...[seed, link, bundle, outcome, robotsOutcome, sitemapOutcome].map((value) => ({ schema: linksRecord as z.ZodType, value })),
];

/** zod's verdict on `value`, and whether its output equals the value. */
function zodSays(schema: z.ZodType, value: unknown): { ok: boolean; same: boolean } {
  const r = schema.safeParse(value);
  if (!r.success) return { ok: false, same: false };
  try {
    assert.deepStrictEqual(r.data, value);
    return { ok: true, same: true };
  } catch {
    return { ok: true, same: false };
  }
}

const damages: unknown[] = [undefined, null, NaN, Infinity, -1, 0, 1.5, 2 ** 60, '', 'x', 'ftp://example.test/', 'x'.repeat(9000), true, [], {}, [1], 'sitemap', 'links', 'seed', 301, 999, 1000];

function paths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  if (Buffer.isBuffer(value) || typeof value !== 'object' || value === null) return [prefix];
  const out: (string | number)[][] = [prefix];
  for (const [k, v] of Object.entries(value)) out.push(...paths(v, [...prefix, Array.isArray(value) ? Number(k) : k]));
  return out;
}

function damaged(value: unknown, path: (string | number)[], how: (parent: Record<string | number, unknown>, key: string | number) => void): unknown {
  const copy = structuredClone(value, {}) as Record<string | number, unknown>;
  // structuredClone turns a Buffer into a plain Uint8Array: put the body back as a Buffer
  if (Buffer.isBuffer((value as { body?: unknown }).body)) copy.body = (value as { body: Buffer }).body;
  if (path.length === 0) return copy;
  let parent = copy;
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>;
  how(parent, path[path.length - 1]!);
  return copy;
}

test('the hot topics compile: frontier, pages and links records are tested without zod', () => {
  for (const name of ['frontier', 'pages', 'links'] as const) assert.ok(conformanceOf(topicSchemas[name]), name);
});

test('records as the services write them conform, and zod returns them unchanged', () => {
  for (const { schema, value } of samples) {
    const test = conformanceOf(schema)!;
    assert.equal(test(value), true, JSON.stringify(value).slice(0, 200));
    assert.deepEqual(zodSays(schema, value), { ok: true, same: true });
  }
});

test('never a yes where zod refuses or changes the value: thousands of random damages', () => {
  let seedState = 2024;
  const random = (n: number): number => {
    seedState = (Math.imul(seedState, 1103515245) + 12345) >>> 0;
    return Math.floor((seedState / 2 ** 32) * n);
  };
  let yes = 0;
  let no = 0;
  for (let round = 0; round < 6000; round++) {
    const { schema, value } = samples[random(samples.length)]!;
    const all = paths(value).filter((p) => p.length > 0);
    const path = all[random(all.length)]!;
    const kind = random(4);
    const candidate = damaged(value, path, (parent, key) => {
      if (kind === 0) delete parent[key];
      else if (kind === 1) parent[key] = damages[random(damages.length)];
      // (JSON gives arrays no named properties: a key is added to objects only)
      else if (kind === 2 && !Array.isArray(parent)) (parent as Record<string, unknown>)[`extra${random(3)}`] = 1;
      else if (Array.isArray(parent)) parent.push(...parent);
      else parent[key] = damages[random(damages.length)];
    });
    const test = conformanceOf(schema)!;
    const says = test(candidate);
    const zod = zodSays(schema, candidate);
    if (says) {
      yes++;
      assert.ok(zod.ok && zod.same, `conforms, but zod ${zod.ok ? 'changes it' : 'refuses it'}: ${path.join('.')} of ${JSON.stringify(candidate).slice(0, 300)}`);
    } else no++;
  }
  assert.ok(yes > 300 && no > 1000, `both answers exercised (${yes} yes, ${no} no)`);
});

test('what zod would strip, refuse or only reach through its own rules is left to zod', () => {
  const test = conformanceOf(linksRecord)!;
  assert.equal(test({ ...link, unknown: 1 }), false, 'an unknown key (zod strips it)');
  assert.equal(test({ ...link, contribution: NaN }), false);
  assert.equal(test({ ...link, depth: 1.5 }), false);
  assert.equal(test({ ...link, url: 'mailto:a@b.test' }), false, 'the http(s) refinement');
  assert.equal(test({ ...link, type: 'nope' }), false, 'an unknown tag');
  assert.equal(test(JSON.parse(JSON.stringify(link).replace('{', '{"__proto__":{"x":1},'))), false, 'a __proto__ key');
  const pages = conformanceOf(pageRecord)!;
  const headers = Object.fromEntries(Array.from({ length: MAX_PAGE_HEADERS + 1 }, (_, i) => [`h${i}`, 'v']));
  assert.equal(pages({ ...page, headers }), false, 'the refinement on the header count');
  assert.equal(pages({ ...page, headers: JSON.parse('{"__proto__":"x"}') }), false, 'a __proto__ header');
  assert.equal(pages({ ...page, body: 'text' }), false, 'a body that is not bytes');

  const throwing = z.object({ a: z.string().refine(() => { throw new Error('refinement broke'); }) });
  assert.equal(conformanceOf(throwing)!({ a: 'x' }), false, 'a refinement that throws is left to zod');

  for (const schema of [
    z.string().trim(),
    z.string().email(),
    z.object({ a: z.string() }).strict(),
    z.object({ a: z.string() }).passthrough(),
    z.union([z.string(), z.number()]),
    z.string().default('x'),
    z.string().transform((s) => s.length),
    z.number().multipleOf(2),
    z.object({ a: z.string().optional().default('x') }),
    z.record(z.enum(['a', 'b']), z.string()),
  ] as z.ZodType[]) {
    assert.equal(conformanceOf(schema), undefined, `left to zod: ${schema.constructor.name}`);
  }
});
