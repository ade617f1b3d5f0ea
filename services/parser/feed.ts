/**
 * Streaming parser for syndication feeds: RSS 2.0 (and 0.9x), RSS 1.0 (RDF) and Atom 1.0.
 *
 * What the crawler needs of a feed is its items' links, ids and dates, plus the feed's own hints
 * about how often it changes:
 *   RSS 2.0   rss > channel > item: link, else guid when it is a permalink URL; id = guid ?? link;
 *             date = pubDate ?? dc:date. channel > ttl (minutes) is the refresh hint.
 *   RSS 1.0   rdf:RDF > item (a sibling of channel): link ?? rdf:about; id = rdf:about ?? link;
 *             date = dc:date. sy:updatePeriod / sy:updateFrequency is the refresh hint.
 *   Atom      feed > entry: the first link with rel=alternate (or no rel), text/html preferred;
 *             id = id ?? link; date = updated ?? published. xml:base on feed and entry applies.
 * Links resolve against the feed URL (or xml:base) and are normalised like page links; items
 * without a usable link are counted in `invalidLinks`. At most MAX_FEED_ITEMS items are kept.
 *
 * Errors: a root element that is none of rss / rdf:RDF / feed gives MEGURI_ERR_FEED_FORMAT;
 * malformed XML gives MEGURI_ERR_FEED_XML. Either way no item is reported.
 */
import { XmlStream, type XmlElement, type XmlHandler } from './xml-stream.ts';
import { parseFeedDate } from './dates.ts';
import { normalizeUrl, type NormalizeOptions } from '../common/url.ts';

export type FeedFormat = 'rss' | 'rdf' | 'atom';

export interface FeedItem {
  /** Normalised absolute URL of the item's page. */
  url: string;
  /** Stable id (guid / atom:id / rdf:about), else the URL. */
  id: string;
  /** Publication or update time, epoch ms. */
  date?: number;
  title?: string;
}

export interface ParseFailure {
  code: 'MEGURI_ERR_FEED_XML' | 'MEGURI_ERR_FEED_FORMAT' | 'MEGURI_ERR_SITEMAP_XML' | 'MEGURI_ERR_SITEMAP_FORMAT' | 'MEGURI_ERR_SITEMAP_TOO_LARGE';
  message: string;
}

export interface FeedResult {
  format?: FeedFormat;
  title?: string;
  items: FeedItem[];
  /** The feed's own refresh hint (RSS ttl, sy:updatePeriod/Frequency), ms. */
  ttlMs?: number;
  /** Items whose link was missing or not a usable http(s) URL. */
  invalidLinks: number;
  /** More than MAX_FEED_ITEMS items: the rest were ignored. */
  truncated: boolean;
  error?: ParseFailure;
}

export const MAX_FEED_ITEMS = 10_000;
const MAX_TITLE = 1024;

const PERIOD_MS: Readonly<Record<string, number>> = {
  hourly: 3_600_000,
  daily: 86_400_000,
  weekly: 7 * 86_400_000,
  monthly: 30 * 86_400_000,
  yearly: 365 * 86_400_000,
};

interface OpenItem {
  link?: string;
  atomLink?: { href: string; html: boolean };
  guid?: string;
  guidIsPermaLink: boolean;
  about?: string;
  date?: number;
  updated?: number;
  published?: number;
  title?: string;
  base: string;
}

function rootFormat(el: XmlElement): FeedFormat | undefined {
  const n = el.name.toLowerCase();
  if (n === 'rss') return 'rss';
  if (n === 'rdf') return 'rdf';
  if (n === 'feed') return 'atom';
  return undefined;
}

function isItem(format: FeedFormat, el: XmlElement, depth: number): boolean {
  if (format === 'atom') return depth === 2 && el.name === 'entry';
  if (format === 'rdf') return depth === 2 && el.name === 'item';
  return depth === 3 && el.name === 'item';
}

function clean(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

/**
 * The XmlHandler side of a feed parse, usable on its own stream (parseFeed) or inside another
 * reader that found a feed where it expected something else (a feed given as a sitemap).
 */
export class FeedReader implements XmlHandler {
  format: FeedFormat | undefined;
  formatError: string | undefined;
  readonly items: FeedItem[] = [];
  invalidLinks = 0;
  truncated = false;
  title: string | undefined;
  ttlMs: number | undefined;
  private item: OpenItem | undefined;
  private feedBase: string;
  private updatePeriodMs: number | undefined;
  private updateFrequency: number | undefined;

  constructor(
    private readonly feedUrl: string,
    private readonly opts: NormalizeOptions = {},
  ) {
    this.feedBase = feedUrl;
  }

  open(el: XmlElement, path: readonly XmlElement[]): void {
    const depth = path.length;
    if (depth === 1) {
      this.format = rootFormat(el);
      if (this.format === undefined) this.formatError = `root element <${el.prefix ? `${el.prefix}:` : ''}${el.name}> is not rss, rdf:RDF or feed`;
      else if (this.format === 'atom') this.feedBase = this.resolveBase(el.attrs['xml:base'], this.feedUrl);
      return;
    }
    const format = this.format;
    if (format === undefined) return;
    if (isItem(format, el, depth)) {
      const base = format === 'atom' ? this.resolveBase(el.attrs['xml:base'], this.feedBase) : this.feedBase;
      this.item = { guidIsPermaLink: true, base };
      if (format === 'rdf' && el.attrs['rdf:about'] !== undefined) this.item.about = el.attrs['rdf:about'];
      return;
    }
    const item = this.item;
    if (item === undefined || format !== 'atom' || el.name !== 'link' || depth !== 3) return;
    const rel = (el.attrs.rel ?? 'alternate').trim().toLowerCase();
    const href = el.attrs.href;
    if (rel !== 'alternate' || href === undefined) return;
    const html = /^(?:text\/html|application\/xhtml\+xml)\b/i.test(el.attrs.type ?? 'text/html');
    if (item.atomLink === undefined || (html && !item.atomLink.html)) item.atomLink = { href, html };
  }

  close(el: XmlElement, path: readonly XmlElement[], text: string): void {
    const format = this.format;
    if (format === undefined) return;
    const depth = path.length;
    const item = this.item;
    if (item !== undefined && isItem(format, el, depth)) {
      this.finishItem(item);
      this.item = undefined;
      return;
    }
    if (item !== undefined) {
      if (depth === (format === 'rss' ? 4 : 3)) this.itemField(item, el, text);
      return;
    }
    // Feed-level fields.
    const channelLevel = format === 'atom' ? depth === 2 : depth === 3 && path[1]?.name === 'channel';
    if (!channelLevel) return;
    if (el.name === 'title' && el.prefix === '' && this.title === undefined) {
      const t = clean(text);
      if (t !== '') this.title = t.slice(0, MAX_TITLE);
    } else if (el.name === 'ttl' && format === 'rss') {
      const minutes = Number(clean(text));
      if (Number.isFinite(minutes) && minutes > 0) this.ttlMs = minutes * 60_000;
    } else if (el.name === 'updatePeriod') {
      this.updatePeriodMs = PERIOD_MS[clean(text).toLowerCase()];
      this.syHint();
    } else if (el.name === 'updateFrequency') {
      const f = Number(clean(text));
      if (Number.isFinite(f) && f >= 1) this.updateFrequency = f;
      this.syHint();
    }
  }

  private syHint(): void {
    if (this.ttlMs !== undefined && this.format === 'rss') return;
    if (this.updatePeriodMs !== undefined) this.ttlMs = this.updatePeriodMs / (this.updateFrequency ?? 1);
  }

  private itemField(item: OpenItem, el: XmlElement, text: string): void {
    const name = el.name;
    const value = clean(text);
    if (name === 'title' && el.prefix === '') {
      if (value !== '') item.title = value.slice(0, MAX_TITLE);
    } else if (name === 'link' && this.format !== 'atom' && el.prefix === '') {
      if (value !== '') item.link ??= value;
    } else if (name === 'guid') {
      if (value !== '') item.guid = value;
      item.guidIsPermaLink = (el.attrs.isPermaLink ?? 'true').toLowerCase() !== 'false';
    } else if (name === 'id' && this.format === 'atom') {
      if (value !== '') item.guid = value;
    } else if (name === 'pubDate' || (name === 'date' && el.prefix === 'dc')) {
      item.date ??= parseFeedDate(value);
    } else if (name === 'updated' || name === 'modified') {
      item.updated = parseFeedDate(value);
    } else if (name === 'published' || name === 'issued') {
      item.published = parseFeedDate(value);
    }
  }

  private finishItem(item: OpenItem): void {
    if (this.items.length >= MAX_FEED_ITEMS) {
      this.truncated = true;
      return;
    }
    const raw =
      item.atomLink?.href ??
      item.link ??
      (item.guid !== undefined && item.guidIsPermaLink && /^https?:\/\//i.test(item.guid) ? item.guid : undefined) ??
      item.about;
    const norm = raw === undefined ? undefined : normalizeUrl(raw, item.base, this.opts);
    if (norm === undefined || !norm.ok) {
      this.invalidLinks++;
      return;
    }
    const out: FeedItem = { url: norm.url, id: item.guid ?? item.about ?? norm.url };
    const date = item.updated ?? item.date ?? item.published;
    if (date !== undefined) out.date = date;
    if (item.title !== undefined) out.title = item.title;
    this.items.push(out);
  }

  private resolveBase(xmlBase: string | undefined, against: string): string {
    if (xmlBase === undefined) return against;
    try {
      return new URL(xmlBase, against).href;
    } catch {
      return against;
    }
  }
}

/**
 * Parses a whole feed body (already decoded to text). `chunkChars` feeds the tokenizer in slices,
 * so memory stays bounded by the body itself plus one slice.
 */
export function parseFeed(body: string, feedUrl: string, opts: NormalizeOptions = {}, chunkChars = 64 * 1024): FeedResult {
  const reader = new FeedReader(feedUrl, opts);
  const stream = new XmlStream(reader);
  for (let i = 0; i < body.length && reader.formatError === undefined; i += chunkChars) stream.write(body.slice(i, i + chunkChars));
  const syntax = reader.formatError === undefined ? stream.end() : undefined;
  const result: FeedResult = { items: [], invalidLinks: reader.invalidLinks, truncated: reader.truncated };
  if (reader.formatError !== undefined) {
    result.error = { code: 'MEGURI_ERR_FEED_FORMAT', message: reader.formatError };
    return result;
  }
  if (syntax !== undefined) {
    result.error = { code: 'MEGURI_ERR_FEED_XML', message: syntax.message };
    return result;
  }
  if (reader.format !== undefined) result.format = reader.format;
  if (reader.title !== undefined) result.title = reader.title;
  if (reader.ttlMs !== undefined) result.ttlMs = reader.ttlMs;
  result.items = reader.items;
  return result;
}
