/**
 * A small site whose pages share most of their text is not a spider trap (issue 46, item 3): on the
 * simulated web, 8 hosts each serve a home page, 12 articles of one URL template (`/article/N.html`)
 * and 5 other pages. The articles share a long common body (a mirrored notice) and differ only in
 * their title, heading and links, so their main-text fingerprints are within the Hamming threshold
 * of each other — the duplicate half of a trap's evidence. The other half, a template that keeps
 * producing new URLs, is missing: the template has 12 URLs, all listed on the home page. `meguri
 * crawl` with default settings fetches every page once, skips no URL of a template, and `meguri
 * stats hosts` shows 0 template-skipped URLs per host.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { SimWeb } from '../../services/simweb/index.ts';
import type { HostBehavior } from '../../services/simweb/index.ts';
import { tempDir, removeDir } from '../support/transports.ts';
import { cliCrawl, pageRequests, resolveEntries, runMeguri } from '../support/crawl-check.ts';

const HOSTS = 8;
const ARTICLES = 12;
const OTHERS = ['/about.html', '/contact.html', '/privacy.html', '/tags/news.html', '/archive.html'];

/** About 600 words of one notice, the same on every article of every host. */
const COMMON_BODY = Array.from(
  { length: 12 },
  (_, i) =>
    `<p>Notice ${i + 1}. This announcement is mirrored on every article of the site so that readers who arrive from any page see the same terms, the same opening hours of the reading room, the same rules for borrowing printed material and the same contact details of the editorial office, which answers questions about subscriptions, corrections and reprints within two working days.</p>`,
).join('\n');

function html(title: string, links: string[], body: string): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>${title}</title></head><body><main><h1>${title}</h1>${body}<ul>${links.map((l) => `<li><a href="${l}">${l}</a></li>`).join('')}</ul></main></body></html>`;
}

function siteDocuments(host: number): HostBehavior['documents'] {
  const doc = (body: string): { body: string; contentType: string } => ({ body, contentType: 'text/html; charset=utf-8' });
  const articles = Array.from({ length: ARTICLES }, (_, i) => `/article/${i + 1}.html`);
  const documents: NonNullable<HostBehavior['documents']> = {
    '/robots.txt': { body: 'User-agent: *\nAllow: /\n', contentType: 'text/plain' },
    '/': doc(html(`Host ${host} home`, [...articles, ...OTHERS.slice(0, 4)], `<p>Welcome to the site of host ${host}, with ${ARTICLES} articles.</p>`)),
  };
  articles.forEach((path, i) => {
    // Each article links its neighbours and one page of its own; the last one the archive.
    const links = [articles[i - 1], articles[i + 1], '/', i === ARTICLES - 1 ? '/archive.html' : undefined].filter((l): l is string => l !== undefined);
    documents[path] = doc(html(`Article ${i + 1} of host ${host}: ${['spring', 'summer', 'autumn', 'winter'][i % 4]} edition`, links, COMMON_BODY));
  });
  OTHERS.forEach((path, i) => {
    const words = Array.from({ length: 60 }, (_, w) => `h${host}p${i}w${(w * 7919 + i * 104_729) % 100_003}`).join(' ');
    documents[path] = doc(html(`${path} of host ${host}`, ['/'], `<p>${words}</p>`));
  });
  return documents;
}

describe('a small site of near-duplicate pages through meguri crawl', { timeout: 300_000 }, () => {
  const dirs: string[] = [];
  after(() => dirs.forEach(removeDir));

  it('fetches all 8 × 18 pages once, skips no template URL, and stats hosts shows 0 template-skipped per host', async (t) => {
    const hostOverrides: Record<string, HostBehavior> = {};
    for (let h = 0; h < HOSTS; h++) hostOverrides[`h${h}.sim.test`] = { documents: siteDocuments(h) };
    const web = await SimWeb.start({ seed: 46, hosts: HOSTS, pagesPerHost: 1, hostOverrides });
    try {
      const dir = tempDir();
      dirs.push(dir);
      const summary = await cliCrawl<Record<string, number | string>>({
        seeds: web.homeUrls(),
        resolve: resolveEntries(web),
        dir,
        args: ['--no-sitemaps', '--min-interval', '0.02'],
        timeoutMs: 200_000,
      });
      t.diagnostic(`summary: pagesFetched ${summary.pagesFetched}, templateSkipped ${summary.templateSkipped}`);
      assert.equal(summary.stoppedBecause, 'idle');
      const fetched = new Map<string, number>();
      for (const e of pageRequests(web)) fetched.set(`${e.host}${e.path}`, (fetched.get(`${e.host}${e.path}`) ?? 0) + 1);
      const missing: string[] = [];
      for (let h = 0; h < HOSTS; h++) {
        for (const path of ['/', ...Array.from({ length: ARTICLES }, (_, i) => `/article/${i + 1}.html`), ...OTHERS]) {
          if (!fetched.has(`h${h}.sim.test${path}`)) missing.push(`h${h}${path}`);
        }
      }
      assert.deepEqual(missing, [], `every page of the small site was fetched (${fetched.size} of ${HOSTS * (1 + ARTICLES + OTHERS.length)})`);
      assert.deepEqual([...fetched].filter(([, n]) => n > 1), [], 'no page fetched twice');
      assert.equal(summary.templateSkipped, 0);

      const stats = await runMeguri(['stats', 'hosts', '--data', join(dir, 'data'), '--json', '--top', '100']);
      assert.equal(stats.code, 0, stats.stderr);
      const rows = JSON.parse(stats.stdout) as { host: string; templateSkipped: number; fetched: number }[];
      assert.equal(rows.length, HOSTS);
      for (const row of rows) assert.equal(row.templateSkipped, 0, `${row.host}: ${JSON.stringify(row)}`);
    } finally {
      await web.close();
    }
  });
});
