/**
 * A fetched sitemap or feed (request reason `sitemap` / `feed`) to `links` records.
 *
 *   sitemap urlset / text / feed-as-sitemap → one discovered link per URL, via=sitemap, with
 *       <lastmod>, <priority> and <changefreq>;
 *   sitemap index → one discovered link per child sitemap, kind=sitemap (the scheduler fetches
 *       it as a sitemap);
 *   feed → one discovered link per item, via=feed, its date as lastmod.
 * Which of these a document is, its root element decides (document-root.ts), not its Content-Type:
 * a feed URL answering with a urlset or sitemapindex is read as a sitemap (readSource).
 * The outcome stays `ok` and summarises the document in `outcome.document` (entries, item id
 * hashes, newest/oldest dates, the feed's ttl hint) so the scheduler can adapt the document's own
 * re-read schedule; a document that cannot be read gives an `error` outcome with the parser's code
 * (MEGURI_ERR_SITEMAP_XML, _FORMAT, _TOO_LARGE, MEGURI_ERR_FEED_XML, _FORMAT) and no link.
 *
 * A listed URL's IPR contribution: a sitemap or feed stands for one unit of score (the "+1" a
 * fetched page gives) split over its entries, weighted by 2·priority (the protocol's default
 * priority 0.5 gives weight 1). Dates later than one day after the fetch are ignored (clocks and
 * templates that print tomorrow's date).
 */
import type { PageRecord } from '../../schemas/pages.ts';
import type { DiscoveredLink, OutcomeLink } from '../../schemas/links.ts';
import { SCHEMA_VERSION } from '../../schemas/common.ts';
import { md5Hex } from '../common/fingerprint.ts';
import { hostOf, siteOf, type NormalizeOptions } from '../common/url.ts';
import { parseSitemap } from './sitemap.ts';
import { parseFeed } from './feed.ts';
import { pageText } from './charset.ts';
import { documentRootKind } from './document-root.ts';

/** Item id hashes carried on a feed outcome at most (the newest ones, as the feed lists them). */
export const MAX_ITEM_IDS = 500;
const FUTURE_SLACK_MS = 86_400_000;

interface Entry {
  url: string;
  lastmod?: number;
  priority?: number;
  changefreq?: DiscoveredLink['changefreq'];
  sitemap?: boolean;
}

/** First 8 hex digits of the MD5 of an item id: enough to tell this feed's items apart. */
export function itemIdHash(id: string): string {
  return md5Hex(id).slice(0, 8);
}

type Summary = NonNullable<OutcomeLink['document']>;
type Read = { summary: Summary; entries: Entry[] } | { error: { code: string; message: string } };

function readFeed(body: string, page: PageRecord, opts: NormalizeOptions, latest: number): Read {
  const feed = parseFeed(body, page.finalUrl, opts);
  if (feed.error !== undefined) return { error: feed.error };
  const summary: Summary = { kind: 'feed', entries: feed.items.length, itemIds: feed.items.slice(0, MAX_ITEM_IDS).map((i) => itemIdHash(i.id)) };
  if (feed.format !== undefined) summary.format = feed.format;
  if (feed.ttlMs !== undefined) summary.ttlMs = Math.round(feed.ttlMs);
  if (feed.invalidLinks > 0) summary.invalid = feed.invalidLinks;
  const entries = feed.items.map((item): Entry => (item.date !== undefined && item.date <= latest ? { url: item.url, lastmod: item.date } : { url: item.url }));
  return { summary, entries };
}

function readSitemap(body: string, page: PageRecord, opts: NormalizeOptions, latest: number): Read {
  const map = parseSitemap(body, page.finalUrl, { ...opts, truncated: page.bodyTruncated });
  if (map.error !== undefined) return { error: map.error };
  const summary: Summary = { kind: 'sitemap', entries: map.urls.length + map.sitemaps.length };
  if (map.kind !== undefined) summary.format = map.kind;
  if (map.invalid > 0) summary.invalid = map.invalid;
  if (map.foreign > 0) summary.foreign = map.foreign;
  if (map.limit !== undefined) summary.limit = map.limit;
  const entries: Entry[] = [];
  for (const u of map.urls) {
    const e: Entry = { url: u.url };
    if (u.lastmod !== undefined && u.lastmod <= latest) e.lastmod = u.lastmod;
    if (u.priority !== undefined) e.priority = u.priority;
    if (u.changefreq !== undefined) e.changefreq = u.changefreq;
    entries.push(e);
  }
  for (const s of map.sitemaps) entries.push(s.lastmod !== undefined && s.lastmod <= latest ? { url: s.url, lastmod: s.lastmod, sitemap: true } : { url: s.url, sitemap: true });
  return { summary, entries };
}

/**
 * How a fetched source is read: by its root element (a URL asked for as a feed that answers with a
 * urlset or sitemapindex is read as a sitemap; a sitemap URL answering with a feed is read as one by
 * parseSitemap), whatever its Content-Type. A feed read as a sitemap keeps kind `feed`, with its
 * URLs as the item ids, so the feed's schedule still sees new entries.
 */
function readSource(body: string, page: PageRecord, opts: NormalizeOptions, latest: number): Read {
  if (page.request.reason !== 'feed') return readSitemap(body, page, opts, latest);
  if (documentRootKind(body) !== 'sitemap') return readFeed(body, page, opts, latest);
  const read = readSitemap(body, page, opts, latest);
  if ('error' in read) return read;
  read.summary.kind = 'feed';
  read.summary.itemIds = read.entries.slice(0, MAX_ITEM_IDS).map((e) => itemIdHash(e.url));
  return read;
}

export function sourceRecords(page: PageRecord, outcome: OutcomeLink, opts: NormalizeOptions): { outcome: OutcomeLink; links: DiscoveredLink[] } {
  const req = page.request;
  const body = pageText(page)?.text ?? '';
  outcome.md5 = md5Hex(body);
  const read = readSource(body, page, opts, page.fetchedAt + FUTURE_SLACK_MS);
  if ('error' in read) return failed(outcome, read.error);
  const { summary, entries } = read;

  let newest: number | undefined;
  let oldest: number | undefined;
  for (const e of entries) {
    if (e.lastmod === undefined) continue;
    if (newest === undefined || e.lastmod > newest) newest = e.lastmod;
    if (oldest === undefined || e.lastmod < oldest) oldest = e.lastmod;
  }
  if (newest !== undefined) summary.newest = newest;
  if (oldest !== undefined) summary.oldest = oldest;
  outcome.document = summary;
  outcome.outDegree = entries.length;
  if (entries.length === 0) return { outcome, links: [] };

  const via = req.reason === 'feed' ? 'feed' : 'sitemap';
  const site = siteOf(hostOf(page.finalUrl));
  const unit = 1 / entries.length;
  const links = entries.map((e): DiscoveredLink => {
    const link: DiscoveredLink = {
      v: SCHEMA_VERSION,
      type: 'link',
      url: e.url,
      source: page.finalUrl,
      depth: req.depth + 1,
      cgiHops: 0,
      contribution: unit * 2 * (e.priority ?? 0.5),
      sameSite: siteOf(hostOf(e.url)) === site,
      foundAt: page.fetchedAt,
    };
    if (e.sitemap) link.kind = 'sitemap';
    else link.via = via;
    if (e.lastmod !== undefined) link.lastmod = e.lastmod;
    if (e.priority !== undefined) link.priority = e.priority;
    if (e.changefreq !== undefined) link.changefreq = e.changefreq;
    return link;
  });
  return { outcome, links };
}

function failed(outcome: OutcomeLink, error: { code: string; message: string }): { outcome: OutcomeLink; links: DiscoveredLink[] } {
  outcome.result = 'error';
  outcome.errorCode = error.code;
  return { outcome, links: [] };
}
