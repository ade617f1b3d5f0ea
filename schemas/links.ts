import { z } from 'zod';
import { version, httpUrl, epochMs, validators, recordPointer, errorCode, TEXT_MD5, TEXT_FINGERPRINT, PAGE_TITLE } from './common.ts';
import { fetchReason, redirectHop, MAX_REDIRECT_HOPS } from './frontier.ts';
import { mainText, textHashes } from './text.ts';

/** Out-links listed on an outcome at most (a page with more still sends every link). */
export const MAX_OUT_LINKS = 2000;
/** Characters of out-link URLs listed on an outcome at most: a page whose followed links are longer in all lists none (its links are still sent). */
export const OUT_LINKS_CHARS = 256 * 1024;
/**
 * Bytes (UTF-8) of a robots.txt body an outcome carries at most: RFC 9309 §2.5 asks a crawler to
 * parse at least 500 KiB and lets it ignore the rest. The parser cuts a longer body at the last line
 * break within the limit, so no rule is cut in half.
 */
export const ROBOTS_BODY_BYTES = 512_000;

/** What a URL is re-read as on a schedule of its own (docs/feeds.md): a sitemap, a feed or a daily page. */
export const sourceKind = z.enum(['sitemap', 'feed', 'daily']);
export type SourceKind = z.infer<typeof sourceKind>;

/** How a discovered URL was found when not by an ordinary link: listed in a sitemap, an item of a feed, new on a daily page. */
export const discoveryVia = z.enum(['sitemap', 'feed', 'daily']);

export const changeFreq = z.enum(['always', 'hourly', 'daily', 'weekly', 'monthly', 'yearly', 'never']);

/** A URL to start from, added by `meguri crawl`/`meguri seed`. Keyed by its host. */
export const seedLink = z.object({
  v: version,
  type: z.literal('seed'),
  url: httpUrl,
  addedAt: epochMs,
  kind: sourceKind.optional().describe('The URL is a feed (--feeds-file), a daily page (--daily-file) or a sitemap, re-read on its own schedule.'),
  scopeOnly: z
    .boolean()
    .optional()
    .describe("A copy of a seed sent to every scheduler partition so each knows the crawl scope (`host`/`domain`): it extends the scope and queues nothing."),
});

/** A discovered link, keyed by the target's host so the owning scheduler partition receives it. */
export const discoveredLink = z.object({
  v: version,
  type: z.literal('link'),
  url: httpUrl.describe('Target URL, normalised.'),
  source: httpUrl.describe('Page the link was found on.'),
  depth: z.number().int().nonnegative().describe('Depth of the target (source depth + 1).'),
  cgiHops: z.number().int().nonnegative().describe('Dynamic-page hops of the target.'),
  anchor: z.string().max(512).optional(),
  contribution: z.number().finite().nonnegative().describe('IPR contribution (score+1)/out-degree of the source.'),
  sameSite: z.boolean().describe('Target on the same site as the source (tie-break: same-site first).'),
  foundAt: epochMs,
  propagated: z
    .boolean()
    .optional()
    .describe('Score passed on by the scheduler from an already-fetched page (IPR VR/AR cut-offs): updates a known URL, never discovers one.'),
  startSite: z
    .string()
    .min(1)
    .max(300)
    .optional()
    .describe('Discovery crawl (Hoshino et al.): host name of the start site the source page was crawled for (from its request).'),
  redirect: z
    .array(redirectHop)
    .min(1)
    .max(MAX_REDIRECT_HOPS)
    .optional()
    .describe('Set when the target is the Location of a redirect: the chain that led to it (the source is the last hop). Same depth as the source, queued first on its host.'),
  via: discoveryVia.optional().describe('Found in a sitemap, as a feed item, or new on a daily page (feed and daily targets are queued first).'),
  lastmod: epochMs.optional().describe('Sitemap <lastmod> or feed item date: seeds the change interval of a new URL, marks a known one changed when newer than its last fetch.'),
  priority: z.number().min(0).max(1).optional().describe('Sitemap <priority>: feeds α of the revisit selection γ = α + (1 − α)β.'),
  changefreq: changeFreq.optional().describe('Sitemap <changefreq>: a hint for the change interval of a URL without history.'),
  kind: sourceKind.optional().describe('The target is itself a sitemap or a feed (a sitemap index child, a page\'s <link rel=alternate> feed): re-read on its own schedule.'),
});

/** Targets in one `links` bundle at most (bundles are also cut at about BUNDLE_CHARS of URL and anchor text). */
export const MAX_BUNDLE_TARGETS = 1000;
export const BUNDLE_CHARS = 256 * 1024;

/** What a bundle lists per target: the URL and the fields that differ from link to link. */
export const bundleTarget = discoveredLink
  .pick({ url: true, anchor: true, kind: true, lastmod: true, priority: true, changefreq: true })
  .extend({ contribution: discoveredLink.shape.contribution.optional().describe("This target's own IPR contribution when it differs from the bundle's (sitemap entries weighted by <priority>).") });

/**
 * Links of one source page to targets on one host, keyed by that host: the same as one `link`
 * record per target with the bundle's fields, in one record (a page's ~40 links make a handful of
 * records instead of 40). Redirect targets travel as single `link` records.
 */
export const linkBundle = discoveredLink
  .pick({ v: true, source: true, depth: true, cgiHops: true, contribution: true, sameSite: true, foundAt: true, propagated: true, startSite: true, via: true })
  .extend({
    type: z.literal('links'),
    targets: z.array(bundleTarget).min(1).max(MAX_BUNDLE_TARGETS).describe('The targets, all on the host of the record key, in page order.'),
  });

/** The result of one fetch request, keyed by the fetched URL's host (back to the owning partition). */
export const outcomeLink = z.object({
  v: version,
  type: z.literal('outcome'),
  requestId: z.string().min(1).max(128),
  url: httpUrl.describe('Requested URL.'),
  reason: fetchReason,
  finalUrl: httpUrl.optional(),
  status: z.number().int().min(0).max(999),
  result: z
    .enum(['ok', 'not-modified', 'redirect', 'gone', 'client-error', 'server-error', 'error', 'not-html', 'address'])
    .describe('Classification of the fetch for the scheduler (`address`: the name was resolved, see serverIp; nothing was fetched).'),
  md5: z.string().regex(/^[0-9a-f]{32}$/).optional().describe(TEXT_MD5),
  fingerprint: z.string().regex(/^[0-9a-f]{16}$/).optional().describe(TEXT_FINGERPRINT),
  title: z.string().max(1024).optional().describe(PAGE_TITLE),
  validators: validators.optional(),
  outDegree: z.number().int().nonnegative(),
  outLinks: z
    .array(httpUrl)
    .max(MAX_OUT_LINKS)
    .optional()
    .describe("The followed out-links (normalised), so the scheduler can pass this page's score on again later (IPR VR/AR)."),
  noindex: z.boolean().optional(),
  fetch: z.object({
    totalMs: z.number().nonnegative().describe("The server's time: from holding a connection slot to the end of the response (the fetcher's own queueing left out)."),
    ttfbMs: z.number().nonnegative().optional(),
    bytes: z.number().int().nonnegative(),
    connectionClosed: z.boolean().optional(),
  }),
  retryAfterMs: z.number().int().nonnegative().optional().describe('From a 429/503 Retry-After header.'),
  errorCode: errorCode.optional(),
  location: httpUrl.optional().describe('For result=redirect: the resolved target (also sent as a discovered link).'),
  serverIp: z.string().max(64).optional(),
  robots: z
    .object({
      status: z.number().int(),
      body: z.string().max(ROBOTS_BODY_BYTES).optional().describe(`The decoded body, at most its first ${ROBOTS_BODY_BYTES} bytes (UTF-8), cut at a line break.`),
      truncated: z.boolean().optional().describe('The body was longer than `body`: the rest was not sent and its rules do not apply.'),
      bodyBytes: z.number().int().nonnegative().optional().describe('With `truncated`: bytes (UTF-8) of the whole decoded body.'),
      errorCode: errorCode.optional(),
    })
    .optional()
    .describe('For reason=robots: the robots.txt response the scheduler parses.'),
  page: recordPointer.optional().describe('Where the fetched content is in `pages`.'),
  lang: z.string().regex(/^[a-z]{2,3}$/).optional().describe("Language of the page's main text (ISO 639-1), else as declared by <html lang> or Content-Language."),
  offLanguage: z.boolean().optional().describe('The page is not in one of --languages: kept and reported, its links not followed.'),
  text: mainText.optional(),
  textHashes: textHashes.optional(),
  document: z
    .object({
      kind: z.enum(['sitemap', 'feed']),
      format: z.enum(['urlset', 'index', 'text', 'feed', 'rss', 'rdf', 'atom']).optional(),
      entries: z.number().int().nonnegative().describe('URLs (or child sitemaps) listed and accepted.'),
      itemIds: z.array(z.string().regex(/^[0-9a-f]{8}$/)).max(500).optional().describe('Feeds: short hashes of the item ids, newest first as listed, to tell new items from seen ones.'),
      newest: epochMs.optional().describe('Latest item date or <lastmod>.'),
      oldest: epochMs.optional().describe('Earliest item date or <lastmod>.'),
      ttlMs: z.number().int().nonnegative().optional().describe("The feed's own refresh hint (RSS ttl, sy:updatePeriod)."),
      invalid: z.number().int().nonnegative().optional(),
      foreign: z.number().int().nonnegative().optional(),
      limit: z.enum(['urls', 'bytes']).optional().describe('A protocol limit (50,000 URLs, 50 MB) was reached; the rest was ignored.'),
    })
    .optional()
    .describe('For reason=sitemap/feed: what the document held (its entries arrive as discovered links).'),
  fetchedAt: epochMs,
});

export const linksRecord = z.discriminatedUnion('type', [seedLink, discoveredLink, linkBundle, outcomeLink]);
export type LinksRecord = z.infer<typeof linksRecord>;
export type SeedLink = z.infer<typeof seedLink>;
export type DiscoveredLink = z.infer<typeof discoveredLink>;
export type OutcomeLink = z.infer<typeof outcomeLink>;
export type LinkBundle = z.infer<typeof linkBundle>;
export type BundleTarget = z.infer<typeof bundleTarget>;
/** A `links` record with bundles unpacked: a seed, one link or an outcome. */
export type UnbundledLinksRecord = Exclude<LinksRecord, LinkBundle>;
