/**
 * From one fetched page (a `pages` record) to what the scheduler learns on `links`: one outcome
 * for the request and one discovered link per followable out-link.
 *
 * Classification (first match wins):
 *   error present or status 0 → error          304 → not-modified
 *   2xx: HTML → ok, else → not-html            other 3xx (redirect not followed) → redirect
 *   404, 410 → gone                            other 4xx → client-error
 *   5xx → server-error                         anything else (1xx, ≥ 600) → error
 * For reason=robots a 2xx is `ok` whatever its content type; the robots.txt status and body (its
 * first 500 KiB, robots-body.ts) are handed back in `outcome.robots` and nothing is parsed as HTML. For reason=sitemap/feed a 2xx is
 * `ok` too and the body is read as a sitemap or a feed (sources.ts): its entries become discovered
 * links, and a document that cannot be read turns the outcome into an `error` with its code.
 *
 * Main text (text-diff.ts): an `ok` HTML page's outcome carries its main text as paragraphs, at
 * most 64 K characters (a prefix of whole paragraphs, `truncated` with the page's totals beyond).
 *
 * Language (language.ts): `lang` of every parsed HTML page; with `languages` set, a page whose
 * language is known and not in the set keeps its outcome (`offLanguage`) but sends no links.
 *
 * Link rules:
 *   - links are only emitted for `ok` HTML pages without a nofollow from `<meta name=robots>`
 *     (or the bot token) or from `X-Robots-Tag`; per-link rel nofollow/ugc/sponsored are skipped;
 *   - `outDegree` is the number of emitted links; `outLinks` lists them unless they are more than
 *     MAX_OUT_LINKS or longer than OUT_LINKS_CHARS in all (the outcome stays small whatever the page);
 *   - `depth` = request.depth + 1;
 *   - `cgiHops` counts consecutive hops out of dynamic pages (isDynamicUrl of the page's final URL):
 *     a link found on a dynamic page gets request.cgiHops + 1, one found on a static page gets 0.
 *     The scheduler drops targets whose cgiHops exceeds its limit, which bounds how far a crawl
 *     can wander through generated pages (calendars, session ids, faceted search) without
 *     limiting depth through static pages;
 *   - `contribution` = (max(score, 0) + 1) / outDegree: the page's incremental-PageRank mass plus
 *     one, split equally over its out-links;
 *   - a `link rel=canonical` that differs from the final URL and is on the same site is emitted
 *     too (and counted in outDegree); cross-site canonicals are ignored so a page cannot push
 *     crawl budget onto another site through an invisible link.
 *   Relative links of a redirected page resolve against its finalUrl.
 *
 * Redirects: a 3xx with a `location` (the fetcher resolved it and does not follow it) gives one
 * discovered link to the normalised target carrying the redirect chain so far: same depth and
 * cgiHops as the source, the source's whole score as contribution. The scheduler queues it like any
 * link (robots.txt, interval, caps of the target host apply), first in its host's queue. A target
 * already on the chain (a loop) is not sent; the outcome names the target in `location`.
 */
import type { PageRecord } from '../../schemas/pages.ts';
import type { DiscoveredLink, OutcomeLink } from '../../schemas/links.ts';
import { MAX_OUT_LINKS, OUT_LINKS_CHARS } from '../../schemas/links.ts';
import { MAX_REDIRECT_HOPS } from '../../schemas/frontier.ts';
import type { RedirectHop } from '../../schemas/frontier.ts';
import { SCHEMA_VERSION } from '../../schemas/common.ts';
import { extractPage, parseRobotsDirectives, type Extracted, type ExtractOptions } from './extract.ts';
import { pageText } from './charset.ts';
import { md5Hex, simhash } from '../common/fingerprint.ts';
import { hostOf, isDynamicUrl, normalizeUrl, sameAuthority, siteOf } from '../common/url.ts';
import { pageLanguage } from './language.ts';
import { sourceRecords } from './sources.ts';
import { robotsBody } from '../common/robots-body.ts';
import { boundText, packParagraphHashes, splitParagraphs } from '../common/text-diff.ts';
import type { MainTextMode } from '../../schemas/text.ts';

export interface RecordPointer {
  topic: string;
  partition: number;
  offset: string;
}

export interface OutcomeOptions extends ExtractOptions {
  /** Language focus (`--languages ja,en`): links of pages in other languages are not followed. */
  languages?: readonly string[];
  /**
   * Outcomes that carry the main text (`--main-text`): `revisits` (default), where a change can be
   * reported and quoted, or `all`. Others carry only its paragraph hashes (`textHashes`): the text
   * of every page made a 20,000-page crawl ~22 % slower and its peak RSS ~100 MiB larger.
   */
  mainText?: MainTextMode;
}

export interface PageRecords {
  outcome: OutcomeLink;
  links: DiscoveredLink[];
  /** hostOf each link's URL, when known (packLinks then takes them instead of parsing every URL again). */
  hosts?: string[];
  /** The extraction, when the page was parsed as HTML (for callers that want more detail). */
  extracted?: Extracted;
}

type Result = OutcomeLink['result'];

const MAX_RETRY_AFTER_MS = 30 * 24 * 60 * 60 * 1000;
const MAX_ETAG = 1024;
const MAX_LAST_MODIFIED = 256;
const MAX_ANCHOR = 512;

const HTML_TYPES = /^\s*(?:text\/html|application\/xhtml\+xml)\s*(?:;|$)/i;
const HTML_SNIFF = /^\s*(?:<!--[\s\S]*?-->\s*)*<(?:!doctype\s+html|html|head|body)[\s>]/i;

/**
 * HTML by Content-Type, or by the first bytes when the server sent none. Bytes are sniffed as
 * Latin-1: the markup looked for is ASCII, so any ASCII-compatible charset reads the same.
 */
export function isHtml(contentType: string | undefined, body: string | Uint8Array | undefined): boolean {
  if (contentType !== undefined && contentType.trim() !== '') return HTML_TYPES.test(contentType);
  if (body === undefined) return false;
  const head = typeof body === 'string' ? body.slice(0, 1024) : Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('latin1', 0, 1024);
  return HTML_SNIFF.test(head.replace(/^(?:\uFEFF|\u00EF\u00BB\u00BF)/, ''));
}

/** Classifies a fetch by its status and error; see the module comment for the table. */
export function classify(page: Pick<PageRecord, 'status' | 'error' | 'contentType' | 'body' | 'request'> & Partial<Pick<PageRecord, 'serverIp'>>): Result {
  const { status } = page;
  if (page.request.reason === 'address') return page.error === undefined && page.serverIp !== undefined ? 'address' : 'error';
  if (page.error !== undefined || status === 0) return 'error';
  if (status === 304) return 'not-modified';
  if (status >= 200 && status < 300) {
    const reason = page.request.reason;
    if (reason === 'robots' || reason === 'sitemap' || reason === 'feed') return 'ok';
    return isHtml(page.contentType, page.body) ? 'ok' : 'not-html';
  }
  if (status >= 300 && status < 400) return 'redirect';
  if (status === 404 || status === 410) return 'gone';
  if (status >= 400 && status < 500) return 'client-error';
  if (status >= 500 && status < 600) return 'server-error';
  return 'error';
}

/**
 * Whether pageToRecords asks the language detector about this page: only for an HTML page it
 * parses (robots.txt, sitemaps, feeds, name lookups, redirects and errors never need it), so those
 * need not wait for the detector's tables to load.
 */
export function needsLanguageDetector(page: PageRecord): boolean {
  const reason = page.request.reason;
  if (reason === 'address' || reason === 'robots' || reason === 'sitemap' || reason === 'feed') return false;
  return classify(page) === 'ok';
}

/**
 * Retry-After as milliseconds from `now`: delta-seconds or an HTTP date; undefined when absent or
 * unparsable. Dates in the past give 0; values are capped at 30 days.
 */
export function parseRetryAfter(value: string | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  if (v === '') return undefined;
  let ms: number;
  if (/^\d+$/.test(v)) ms = Number(v) * 1000;
  else {
    // every HTTP-date format names the month; this keeps Date.parse's leniency ("1.5") out
    if (!/[a-z]{3}/i.test(v)) return undefined;
    const at = Date.parse(v);
    if (Number.isNaN(at)) return undefined;
    ms = at - now;
  }
  return Math.round(Math.min(MAX_RETRY_AFTER_MS, Math.max(0, ms)));
}

/**
 * X-Robots-Tag: comma-separated directives, optionally scoped by a `agent:` prefix
 * (`googlebot: noindex`); unscoped ones and those for `botToken` apply.
 */
export function parseXRobotsTag(value: string | undefined, botToken: string): { noindex: boolean; nofollow: boolean } {
  const res = { noindex: false, nofollow: false };
  if (value === undefined) return res;
  const token = botToken.toLowerCase();
  let applies = true;
  for (let part of value.split(',')) {
    const m = /^\s*([a-z0-9_.-]+)\s*:(.*)$/i.exec(part);
    // `unavailable_after: <date>` and `max-snippet: 20` are directives, not agent scopes
    if (m && m[1] && !/^(?:unavailable_after|max-snippet|max-image-preview|max-video-preview)$/i.test(m[1])) {
      applies = m[1].toLowerCase() === token;
      part = m[2] ?? '';
    }
    if (!applies) continue;
    const d = parseRobotsDirectives(part);
    res.noindex ||= d.noindex;
    res.nofollow ||= d.nofollow;
  }
  return res;
}

function validatorsOf(headers: Record<string, string>): OutcomeLink['validators'] {
  const etag = headers['etag'];
  const lastModified = headers['last-modified'];
  const v: NonNullable<OutcomeLink['validators']> = {};
  if (etag !== undefined && etag !== '' && etag.length <= MAX_ETAG) v.etag = etag;
  if (lastModified !== undefined && lastModified !== '' && lastModified.length <= MAX_LAST_MODIFIED) {
    v.lastModified = lastModified;
  }
  return v.etag !== undefined || v.lastModified !== undefined ? v : undefined;
}

/** The robots.txt response as the scheduler reads it: status, error, and the first 500 KiB of the body. */
function robotsOf(page: PageRecord, result: Result): NonNullable<OutcomeLink['robots']> {
  const robots: NonNullable<OutcomeLink['robots']> = { status: page.status };
  if (result === 'ok' && page.body !== undefined) {
    const cut = robotsBody(pageText(page)?.text ?? '');
    robots.body = cut.body;
    if (cut.truncated) {
      robots.truncated = true;
      robots.bodyBytes = cut.bytes;
    }
  }
  if (page.error !== undefined) robots.errorCode = page.error.code;
  return robots;
}

/** The out-links an outcome lists: all of them, unless more than MAX_OUT_LINKS or OUT_LINKS_CHARS in all. */
function listedOutLinks(targets: readonly { url: string }[]): string[] | undefined {
  if (targets.length > MAX_OUT_LINKS) return undefined;
  let chars = 0;
  for (const t of targets) chars += t.url.length;
  return chars <= OUT_LINKS_CHARS ? targets.map((t) => t.url) : undefined;
}

/** The outcome's fields every fetch has: request, status, result, fetch timings, server, pointer, Retry-After. */
function baseOutcome(page: PageRecord, result: OutcomeLink['result'], pointer: RecordPointer | undefined): OutcomeLink {
  const req = page.request;
  const outcome: OutcomeLink = {
    v: SCHEMA_VERSION,
    type: 'outcome',
    requestId: req.requestId,
    url: req.url,
    reason: req.reason,
    finalUrl: page.finalUrl,
    status: page.status,
    result,
    outDegree: 0,
    fetch: { totalMs: Math.max(0, page.timing.totalMs - (page.timing.queueMs ?? 0)), bytes: page.bytes },
    fetchedAt: page.fetchedAt,
  };
  if (page.timing.ttfbMs !== undefined) outcome.fetch.ttfbMs = page.timing.ttfbMs;
  if (page.connectionClosed !== undefined) outcome.fetch.connectionClosed = page.connectionClosed;
  if (page.error !== undefined) outcome.errorCode = page.error.code;
  if (page.serverIp !== undefined) outcome.serverIp = page.serverIp;
  if (pointer !== undefined) outcome.page = { topic: pointer.topic, partition: pointer.partition, offset: pointer.offset };
  if (page.status === 429 || page.status === 503) {
    const ra = parseRetryAfter(page.headers['retry-after'], page.fetchedAt);
    if (ra !== undefined) outcome.retryAfterMs = ra;
  }
  return outcome;
}

/** Turns one `pages` record into the outcome and discovered links for the `links` topic. */
export function pageToRecords(page: PageRecord, pointer?: RecordPointer, opts: OutcomeOptions = {}): PageRecords {
  const req = page.request;
  const result = classify(page);
  const botToken = opts.botToken ?? 'meguri';
  const outcome = baseOutcome(page, result, pointer);

  if (req.reason === 'address') return { outcome, links: [] };

  if (req.reason === 'robots') {
    outcome.robots = robotsOf(page, result);
    return { outcome, links: [] };
  }

  if (result === 'ok' || result === 'not-modified' || result === 'not-html') {
    const v = validatorsOf(page.headers);
    if (v !== undefined) outcome.validators = v;
  }
  if ((req.reason === 'sitemap' || req.reason === 'feed') && result === 'ok') return sourceRecords(page, outcome, opts);
  // Content that is not HTML is never decoded: its MD5 is over the bytes as sent.
  if (result === 'not-html' && page.body !== undefined) outcome.md5 = md5Hex(page.body);
  if (result === 'redirect') return redirectRecords(page, outcome, opts);
  if (result !== 'ok') return { outcome, links: [] };

  const body = pageText(page)?.text ?? '';
  const ex = extractPage(body, page.finalUrl, opts);
  const header = parseXRobotsTag(page.headers['x-robots-tag'], botToken);
  const noindex = ex.noindex || header.noindex;
  const nofollowAll = ex.nofollowAll || header.nofollow;

  outcome.md5 = md5Hex(body);
  outcome.fingerprint = simhash(ex.text);
  // The main text as paragraphs, bounded (text-diff.ts): consumers read it without the HTML, and
  // the scheduler diffs it against the version it last reported.
  const paragraphs = splitParagraphs(ex.text, ex.breaks ?? []);
  if (paragraphs.length > 0) {
    // The hashes are those of the text as an outcome would carry it, so a revisit's text compares.
    const text = boundText(paragraphs);
    if (opts.mainText === 'all' || page.request.reason === 'revisit') outcome.text = text;
    else outcome.textHashes = { hashes: packParagraphHashes(text.paragraphs), paragraphCount: text.paragraphCount ?? text.paragraphs.length };
  }
  if (ex.title !== null && ex.title !== '') outcome.title = ex.title;
  outcome.noindex = noindex;
  const language = pageLanguage(ex.text, ex.lang, page.headers['content-language']);
  if (language !== undefined) outcome.lang = language.lang;
  if (language !== undefined && opts.languages !== undefined && opts.languages.length > 0 && !opts.languages.includes(language.lang)) {
    outcome.offLanguage = true;
    return { outcome, links: [], extracted: ex };
  }

  if (nofollowAll) return { outcome, links: [], extracted: ex };

  const targets: { url: string; anchor: string; feed?: true }[] = [];
  for (const l of ex.links) if (!l.nofollow) targets.push(l.feed ? { url: l.url, anchor: l.anchor, feed: true } : { url: l.url, anchor: l.anchor });

  const sourceHost = hostOf(page.finalUrl);
  const sourceSite = siteOf(sourceHost);
  if (ex.canonical !== null) {
    const self = normalizeUrl(page.finalUrl, undefined, opts);
    const selfUrl = self.ok ? self.url : page.finalUrl;
    if (
      ex.canonical !== selfUrl &&
      siteOf(hostOf(ex.canonical)) === sourceSite &&
      !targets.some((t) => t.url === ex.canonical)
    ) {
      targets.push({ url: ex.canonical, anchor: '' });
    }
  }

  const outDegree = targets.length;
  outcome.outDegree = outDegree;
  if (outDegree === 0) return { outcome, links: [], extracted: ex };
  const outLinks = listedOutLinks(targets);
  if (outLinks !== undefined) outcome.outLinks = outLinks;

  const { links, hosts } = discoveredLinks(page, targets, sourceSite);
  return { outcome, links, hosts, extracted: ex };
}

/** The links record of each followed target (`targets` in page order), with each target's host. */
function discoveredLinks(page: PageRecord, targets: readonly { url: string; anchor: string; feed?: true }[], sourceSite: string): { links: DiscoveredLink[]; hosts: string[] } {
  const req = page.request;
  const outDegree = targets.length;
  const depth = req.depth + 1;
  const cgiHops = isDynamicUrl(page.finalUrl) ? req.cgiHops + 1 : 0;
  const contribution = (Math.max(0, req.score) + 1) / outDegree;
  const links: DiscoveredLink[] = new Array<DiscoveredLink>(outDegree);
  const hosts: string[] = new Array<string>(outDegree);
  let prevUrl = '';
  let prevHost = '';
  for (let i = 0; i < outDegree; i++) {
    const t = targets[i]!;
    const host = sameAuthority(t.url, prevUrl) ? prevHost : hostOf(t.url);
    prevUrl = t.url;
    prevHost = host;
    hosts[i] = host;
    const link: DiscoveredLink = {
      v: SCHEMA_VERSION,
      type: 'link',
      url: t.url,
      source: page.finalUrl,
      depth,
      cgiHops,
      contribution,
      sameSite: siteOf(host) === sourceSite,
      foundAt: page.fetchedAt,
    };
    if (req.startSite !== undefined) link.startSite = req.startSite;
    if (t.anchor !== '') link.anchor = t.anchor.length > MAX_ANCHOR ? t.anchor.slice(0, MAX_ANCHOR) : t.anchor;
    if (t.feed) link.kind = 'feed';
    else if (req.daily) link.via = 'daily';
    links[i] = link;
  }
  return { links, hosts };
}

/** The chain of a 3xx as schema hops; undefined when it is not a usable chain of at most MAX_REDIRECT_HOPS. */
function redirectChain(page: PageRecord): RedirectHop[] | undefined {
  const hops = page.redirects;
  if (hops.length === 0 || hops.length > MAX_REDIRECT_HOPS) return undefined;
  const chain: RedirectHop[] = [];
  for (const h of hops) {
    if (!/^https?:\/\//i.test(h.url) || h.url.length > 8192 || h.status < 300 || h.status > 399) return undefined;
    chain.push({ url: h.url, status: h.status });
  }
  return chain;
}

/** A 3xx whose target the fetcher resolved: the outcome names it, and one link sends it to its host's scheduler. */
function redirectRecords(page: PageRecord, outcome: OutcomeLink, opts: OutcomeOptions): PageRecords {
  if (page.location === undefined) return { outcome, links: [] };
  const req = page.request;
  const target = normalizeUrl(page.location, undefined, opts);
  const chain = redirectChain(page);
  if (!target.ok || chain === undefined) return { outcome, links: [] };
  outcome.location = target.url;
  if (target.url === req.url || chain.some((h) => h.url === target.url)) return { outcome, links: [] };
  outcome.outDegree = 1;
  outcome.outLinks = [target.url];
  const link: DiscoveredLink = {
    v: SCHEMA_VERSION,
    type: 'link',
    url: target.url,
    source: page.finalUrl,
    depth: req.depth,
    cgiHops: req.cgiHops,
    contribution: Math.max(0, req.score) + 1,
    sameSite: siteOf(hostOf(target.url)) === siteOf(hostOf(page.finalUrl)),
    foundAt: page.fetchedAt,
    redirect: chain,
    ...(req.startSite !== undefined ? { startSite: req.startSite } : {}),
  };
  return { outcome, links: [link] };
}
