/**
 * No output a service makes can exceed its topic's limit (issue: a 5 MB robots.txt gave a 2.2 MB
 * outcome that `links` refused). Each record kind that grows with its input is fed at ten times the
 * topic's limit through the parser on the runtime's TestDriver (the runtime's own emitter and size
 * guard): every output fits, nothing is dead-lettered and no link is lost. Once at the topic's
 * default limit (1 MiB, what the parser bounds itself), once at a topic configured 16 times smaller
 * (what the emitter's split and shrink of catalog.split bound).
 */
import { fetchedPage } from '../support/pages.ts';
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TestDriver, DEFAULT_MAX_MESSAGE_BYTES } from '../../services/runtime/index.ts';
import { ROBOTS_BODY_BYTES, OUT_LINKS_CHARS, MAX_OUT_LINKS, encodePageRecord } from '../../schemas/index.ts';
import { MAX_URL_LENGTH } from '../../services/common/url.ts';
import type { LinksRecord, OutcomeLink, PageRecord, TopicRecords } from '../../schemas/index.ts';
import { parserService } from '../../services/parser/service.ts';
import { loadLanguageDetector } from '../../services/parser/language.ts';
import { linksOf } from '../../services/common/link-bundles.ts';
import { crawlCatalog } from '../../topology/catalog.ts';
import { recordSize } from '../../services/runtime/emitter.ts';
import { parse, rulesForFetchResult, forAgent, boundRules, toJSON, fromJSON, STORED_RULES_BYTES } from '../../services/scheduler/robots/index.ts';
import type { HostState } from '../../services/scheduler/state.ts';
import { openSchedulerDriver, seed, link } from '../support/scheduler-driver.ts';
import { robotsBody } from '../../services/common/robots-body.ts';
import { fitLinksRecord, jsonBytes } from '../../topology/links-bounds.ts';

before(() => loadLanguageDetector());

const T0 = Date.UTC(2025, 0, 10);

/** Lines of `line(i)` until the text is at least `bytes` long. */
function filled(head: string, bytes: number, line: (i: number) => string): string {
  const parts = [head];
  let size = head.length;
  for (let i = 0; size < bytes; i++) {
    const l = line(i);
    parts.push(l);
    size += l.length;
  }
  return parts.join('');
}

/** A long path that stays one URL after normalisation: ~`chars` characters. */
function longPath(i: number, chars: number): string {
  return `/p${i}/${'seg-'.repeat(Math.ceil(chars / 4)).slice(0, chars)}`;
}

interface Run {
  readonly records: { key: string | null; value: LinksRecord }[];
  readonly outcome: OutcomeLink;
  /** Every link the records stand for. */
  readonly links: number;
}

async function parseAt(limit: number, input: PageRecord): Promise<Run> {
  const driver = await TestDriver.open<PageRecord, TopicRecords>(parserService(), { catalog: crawlCatalog, maxMessageBytes: { links: limit } });
  try {
    // As the topic carries it: the framed header and the raw body bytes.
    await driver.pipeInput('pages', { key: input.request.host, value: encodePageRecord(input) });
    assert.deepEqual(
      driver.deadLetters().map((d) => d.reason),
      [],
      'nothing dead-lettered',
    );
    const records = driver.allOutput('links').map((o) => ({ key: o.key, value: o.value }));
    for (const r of records) {
      const size = recordSize(r.key, Buffer.from(JSON.stringify(r.value), 'utf8'));
      assert.ok(size <= limit, `a ${r.value.type} record of ${size} bytes exceeds the ${limit}-byte limit`);
    }
    const outcomes = records.filter((r) => r.value.type === 'outcome');
    assert.equal(outcomes.length, 1, 'one outcome');
    const links = records.filter((r) => r.value.type !== 'outcome').reduce((n, r) => n + linksOf(r.value).length, 0);
    return { records, outcome: outcomes[0]!.value as OutcomeLink, links };
  } finally {
    await driver.close();
  }
}

const ORIGIN = 'http://big.test';

for (const limit of [DEFAULT_MAX_MESSAGE_BYTES, 65_536]) {
  const tenfold = 10 * limit;
  describe(`records of inputs at 10× a ${limit}-byte links topic`, { timeout: 240_000 }, () => {
    it('robots.txt: the first rules travel, cut at a line break; the scheduler applies them', async () => {
      const text = filled('User-agent: *\nDisallow: /private\nAllow: /private/open\n', tenfold, (i) => `Disallow: /filler/${String(i).padStart(8, '0')}\n`);
      const run = await parseAt(limit, fetchedPage(`${ORIGIN}/robots.txt`, text, 'text/plain', 'robots'));
      const robots = run.outcome.robots!;
      assert.equal(robots.truncated, true);
      assert.equal(robots.bodyBytes, Buffer.byteLength(text));
      assert.ok(robots.body !== undefined && Buffer.byteLength(robots.body) <= ROBOTS_BODY_BYTES);
      assert.ok(robots.body.endsWith('\n') || text[robots.body.length] === '\n', 'cut at a line break');
      assert.ok(text.startsWith(robots.body));
      if (limit === DEFAULT_MAX_MESSAGE_BYTES) assert.ok(Buffer.byteLength(robots.body) > ROBOTS_BODY_BYTES - 40, 'the whole first 500 KiB but the line the limit falls in');
      const decision = rulesForFetchResult({ status: robots.status, body: robots.body, nowMs: T0, parseOptions: { agent: 'meguri' } });
      const matcher = forAgent(decision.rules, 'meguri');
      assert.equal(matcher.isAllowed('/private/x').allowed, false);
      assert.equal(matcher.isAllowed('/private/open').allowed, true);
      assert.equal(matcher.isAllowed('/public').allowed, true);
    });

    it('an HTML page whose links are 10× the limit: every link arrives, in bundles that fit', async () => {
      // Long URLs and anchors full of characters JSON escapes (`"` → `\"`, U+0001 → `\u0001`).
      const anchor = '"\u0001'.repeat(100);
      const perLink = 2000;
      const n = Math.ceil(tenfold / perLink);
      const html = `<!doctype html><html><head><title>many</title></head><body>${Array.from({ length: n }, (_, i) => `<a href="${longPath(i, perLink - 100)}">${anchor}</a>`).join('\n')}</body></html>`;
      const run = await parseAt(limit, fetchedPage(`${ORIGIN}/index.html`, html, 'text/html; charset=utf-8', 'new'));
      assert.equal(run.outcome.outDegree, n);
      assert.equal(run.links, n, 'no link lost');
      assert.equal(run.outcome.outLinks, undefined, 'the out-link list is left out past its bound');
    });

    it('an outcome whose out-links are many and long: the list is bounded, the outcome fits', async () => {
      // MAX_OUT_LINKS links of up to MAX_URL_LENGTH characters: 10× the limit, or as near as URLs
      // can come (2,000 × 2,048 characters, 4 MB, against 1 MiB): over OUT_LINKS_CHARS, so no list.
      const n = MAX_OUT_LINKS;
      const chars = Math.min(MAX_URL_LENGTH - 60, Math.ceil(Math.max(tenfold, OUT_LINKS_CHARS * 2) / n));
      const html = `<html><body>${Array.from({ length: n }, (_, i) => `<a href="${longPath(i, chars)}">x</a>`).join('')}</body></html>`;
      const run = await parseAt(limit, fetchedPage(`${ORIGIN}/long.html`, html, 'text/html', 'new'));
      assert.equal(run.outcome.outLinks, undefined);
      assert.equal(run.links, n);
    });

    it('a sitemap at 10× the limit: every URL arrives', async () => {
      const entry = (i: number): string => `<url><loc>${ORIGIN}${longPath(i, 400)}</loc><lastmod>2024-12-01</lastmod></url>\n`;
      const body = filled('<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n', tenfold, entry) + '</urlset>';
      const n = (body.match(/<url>/g) ?? []).length;
      const run = await parseAt(limit, fetchedPage(`${ORIGIN}/sitemap.xml`, body, 'application/xml; charset=utf-8', 'sitemap'));
      assert.equal(run.outcome.document?.entries, n);
      assert.equal(run.links, n, 'no URL lost');
    });

    it('an RSS 1.0 feed at 10× the limit: every item arrives, item ids bounded', async () => {
      const item = (i: number): string => `<item rdf:about="${ORIGIN}${longPath(i, 1500)}"><title>t${i}</title><link>${ORIGIN}${longPath(i, 1500)}</link></item>\n`;
      const head = '<?xml version="1.0"?><rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns="http://purl.org/rss/1.0/"><channel rdf:about="x"><title>F</title></channel>\n';
      const body = filled(head, Math.min(tenfold, 10_000 * 3000), item) + '</rdf:RDF>';
      const n = (body.match(/<item /g) ?? []).length;
      const run = await parseAt(limit, fetchedPage(`${ORIGIN}/feed.rdf`, body, 'application/rdf+xml', 'feed'));
      assert.equal(run.outcome.result, 'ok');
      assert.equal(run.outcome.document?.format, 'rdf');
      assert.equal(run.outcome.document?.entries, n);
      assert.equal(run.links, n, 'no item lost');
    });
  });
}

describe('robots rules past 500 KiB', () => {
  it('the parser of the scheduler reads exactly what the outcome carries', () => {
    const text = filled('User-agent: *\nDisallow: /first\n', 2 * ROBOTS_BODY_BYTES, (i) => `Disallow: /f${i}\n`) + 'Disallow: /last\n';
    const rules = parse(text);
    assert.equal(rules.truncated, true);
    assert.ok(rules.parsedBytes <= ROBOTS_BODY_BYTES);
    assert.equal(forAgent(rules, 'meguri').isAllowed('/last').allowed, true, 'a rule past the limit does not apply');
    assert.equal(forAgent(rules, 'meguri').isAllowed('/first').allowed, false);
  });
});

describe('the pure bounds', () => {
  it('robotsBody: a short text whole; a long one cut at the last line break within the limit, never inside a character', () => {
    assert.deepEqual(robotsBody('User-agent: *\nDisallow: /a\n', 100), { body: 'User-agent: *\nDisallow: /a\n', bytes: 27, truncated: false });
    // 'é' is two bytes: the limit of 20 falls inside the second line, which is dropped whole.
    const text = 'Disallow: /é\nDisallow: /ééé\n';
    assert.deepEqual(robotsBody(text, 20), { body: 'Disallow: /é\n', bytes: Buffer.byteLength(text), truncated: true });
    assert.deepEqual(robotsBody('x'.repeat(50), 10), { body: '', bytes: 50, truncated: true }, 'one line longer than the limit: nothing of it');
  });

  it('boundRules: over the limit, only the groups of the agent, then disallow before allow', () => {
    const many = (directive: string, n: number): string => Array.from({ length: n }, (_, i) => `${directive}: /${directive}/${i}\n`).join('');
    const text = `User-agent: other\n${many('Disallow', 2000)}User-agent: meguri\n${many('Allow', 2000)}${many('Disallow', 2000)}Sitemap: http://a.test/s.xml\n`;
    const rules = parse(text);
    assert.equal(boundRules(rules, 'meguri', 10_000_000), rules, 'within the limit: unchanged');
    const own = boundRules(rules, 'meguri/0.1', 150_000);
    assert.deepEqual(own.groups.map((g) => g.agents), [['meguri']]);
    assert.equal(own.truncated, true);
    assert.equal(own.groups[0]!.rules.length, 4000);
    assert.deepEqual(own.sitemaps, ['http://a.test/s.xml']);
    const tight = boundRules(rules, 'meguri', 60_000);
    assert.ok(Buffer.byteLength(JSON.stringify(toJSON(tight))) <= 60_000);
    const kept = tight.groups[0]!.rules;
    assert.equal(kept.filter((r) => r.directive === 'disallow').length, 2000, 'every disallow kept');
    assert.ok(kept.filter((r) => r.directive === 'allow').length < 2000, 'allows dropped first');
    assert.equal(forAgent(tight, 'meguri').isAllowed('/Disallow/1999').allowed, false);
  });

  it('fitLinksRecord: a bundle splits in target order; an outcome sheds outLinks, then item ids, then robots lines', () => {
    const targets = Array.from({ length: 100 }, (_, i) => ({ url: `http://a.test/${'x'.repeat(200)}/${i}` }));
    const bundle: LinksRecord = { v: 1, type: 'links', source: 'http://s.test/', depth: 1, cgiHops: 0, contribution: 0.01, sameSite: false, foundAt: T0, targets };
    const parts = fitLinksRecord(bundle, 5000)!;
    assert.ok(parts.length >= 5);
    assert.deepEqual(parts.flatMap((p) => (p.type === 'links' ? p.targets : [])), targets);
    for (const p of parts) assert.ok(jsonBytes(p) <= 5000);
    const outcome: OutcomeLink = {
      v: 1,
      type: 'outcome',
      requestId: 'r',
      url: 'http://a.test/robots.txt',
      reason: 'robots',
      status: 200,
      result: 'ok',
      outDegree: 0,
      fetch: { totalMs: 1, bytes: 1 },
      fetchedAt: T0,
      robots: { status: 200, body: 'User-agent: *\nDisallow: /a\n' + 'Disallow: /"\u0001"\n'.repeat(2000) },
    };
    const [cut] = fitLinksRecord(outcome, 20_000)!;
    assert.ok(cut?.type === 'outcome' && cut.robots?.truncated === true && jsonBytes(cut) <= 20_000);
    assert.ok(cut.robots.body!.startsWith('User-agent: *\nDisallow: /a\n') && cut.robots.body!.endsWith('\n'));
    assert.equal(cut.robots.bodyBytes, Buffer.byteLength(outcome.robots!.body!));
    assert.equal(fitLinksRecord({ v: 1, type: 'seed', url: 'http://a.test/', addedAt: T0 }, 10), undefined, 'a seed is never split');
  });
});

describe('the scheduler given robots rules larger than a host may keep', () => {
  it('keeps its own agent\'s rules within the bound, says truncated, and obeys them', async () => {
    const h = await openSchedulerDriver({ politeness: { kFactor: 0 }, minIntervalMs: 0 });
    try {
      await h.send(seed('http://a.test/'));
      const [robots] = h.nextRequests(1);
      // ~500 KB of one-character rules for another crawler: more than 700 KB as stored rules.
      const text = filled('User-agent: *\nDisallow: /private\n\nUser-agent: otherbot\n', 600_000, (i) => `Disallow:/${(i % 26).toString(36)}\n`);
      const cut = robotsBody(text);
      await h.send(h.outcome(robots!, { status: 200, result: 'ok', robots: { status: 200, body: cut.body, truncated: true, bodyBytes: cut.bytes } }));
      const state = (await h.driver.store<HostState>('hosts').get('a.test'))!;
      assert.ok(Buffer.byteLength(JSON.stringify(state)) < STORED_RULES_BYTES + 10_000, 'the host state stays within the bound');
      const stored = fromJSON(state.robots!);
      assert.equal(stored.truncated, true);
      assert.deepEqual(stored.groups.map((g) => g.agents), [['*']], 'only the groups meguri matches are kept');
      await h.advance(10);
      const home = h.next();
      assert.equal(home.url, 'http://a.test/');
      await h.send([link('http://a.test/private/x', 'http://a.test/'), link('http://a.test/open', 'http://a.test/')]);
      await h.answer(home);
      await h.advance(10);
      assert.equal(h.next().url, 'http://a.test/open', 'the disallowed URL is skipped');
    } finally {
      await h.stop();
    }
  });
});
