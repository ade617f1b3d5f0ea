/**
 * Streaming sitemap parser (sitemaps.org protocol 0.9): `<urlset>` files, `<sitemapindex>` files,
 * text sitemaps (one URL per line) and RSS/Atom feeds given as sitemaps, gzip-compressed or not.
 *
 * Read through XmlStream (htmlparser2's tokenizer, no DOM), fed in slices, so a 50 MB sitemap
 * costs its entries, not a tree of it.
 *
 *   urlset > url > loc | lastmod | changefreq | priority      → urls
 *   sitemapindex > sitemap > loc | lastmod                    → sitemaps (children to fetch)
 * Elements of extensions (image:loc, xhtml:link, news:…) are ignored: only direct children of
 * `url`/`sitemap` count. Namespace prefixes on the protocol's own elements are accepted.
 *
 * Protocol limits: at most 50,000 URLs (or child sitemaps) per file and 50 MB (52,428,800 bytes)
 * uncompressed. Past 50,000 entries the rest are ignored and `limit` says 'urls'; past 50 MB of
 * plain text the parse stops with what it read and `limit` says 'bytes'; a gzip file that inflates
 * past 50 MB is refused whole (MEGURI_ERR_SITEMAP_TOO_LARGE), since nothing of it was read in order.
 *
 * URLs are normalised like page links. A URL on another host than the sitemap's (or than the hosts
 * the caller allows, e.g. the host whose robots.txt named the sitemap) is counted in `foreign` and
 * dropped: a site may only speak for itself.
 *
 * Errors (no entry is reported then): malformed XML → MEGURI_ERR_SITEMAP_XML; a root element that
 * is neither urlset, sitemapindex nor a feed → MEGURI_ERR_SITEMAP_FORMAT; a bad gzip stream →
 * MEGURI_ERR_SITEMAP_XML.
 */
import { gunzipSync } from 'node:zlib';
import { XmlStream, type XmlElement, type XmlHandler } from './xml-stream.ts';
import { FeedReader, type ParseFailure } from './feed.ts';
import { parseW3cDate } from './dates.ts';
import { hostOf, normalizeUrl, type NormalizeOptions } from '../common/url.ts';

export const SITEMAP_MAX_URLS = 50_000;
export const SITEMAP_MAX_BYTES = 50 * 1024 * 1024;

export const CHANGE_FREQS = ['always', 'hourly', 'daily', 'weekly', 'monthly', 'yearly', 'never'] as const;
export type ChangeFreq = (typeof CHANGE_FREQS)[number];

export interface SitemapUrl {
  url: string;
  /** `<lastmod>`, epoch ms. */
  lastmod?: number;
  changefreq?: ChangeFreq;
  /** `<priority>`, 0..1 (the protocol's default 0.5 is left to the reader). */
  priority?: number;
}

export interface SitemapRef {
  url: string;
  lastmod?: number;
}

export type SitemapKind = 'urlset' | 'index' | 'text' | 'feed';

export interface SitemapResult {
  kind?: SitemapKind;
  urls: SitemapUrl[];
  /** Child sitemaps of an index file. */
  sitemaps: SitemapRef[];
  /** Entries whose location was not a usable http(s) URL. */
  invalid: number;
  /** Entries on a host the sitemap may not speak for. */
  foreign: number;
  /** A protocol limit was reached and the rest ignored. */
  limit?: 'urls' | 'bytes';
  error?: ParseFailure;
}

export interface SitemapOptions extends NormalizeOptions {
  /** Hosts whose URLs are accepted besides the sitemap's own (lower-case). */
  allowedHosts?: readonly string[];
  maxUrls?: number;
  maxBytes?: number;
  /** The body was cut short (the fetch size cap): an unfinished document is not an XML error. */
  truncated?: boolean;
}

const CHANGE_FREQ_SET: ReadonlySet<string> = new Set(CHANGE_FREQS);

interface OpenEntry {
  loc?: string;
  lastmod?: number;
  changefreq?: ChangeFreq;
  priority?: number;
}

/** Collects urlset/sitemapindex entries; hands over to a FeedReader when the root is a feed. */
class SitemapReader implements XmlHandler {
  kind: SitemapKind | undefined;
  formatError: string | undefined;
  feed: FeedReader | undefined;
  private entry: OpenEntry | undefined;

  constructor(
    private readonly sitemapUrl: string,
    private readonly opts: NormalizeOptions,
    private readonly add: (kind: 'url' | 'sitemap', e: OpenEntry) => void,
  ) {}

  open(el: XmlElement, path: readonly XmlElement[]): void {
    const depth = path.length;
    if (depth === 1) {
      if (el.name === 'urlset') this.kind = 'urlset';
      else if (el.name === 'sitemapindex') this.kind = 'index';
      else {
        const name = el.name.toLowerCase();
        if (name === 'rss' || name === 'rdf' || name === 'feed') {
          this.kind = 'feed';
          this.feed = new FeedReader(this.sitemapUrl, this.opts);
        } else this.formatError = `root element <${el.prefix ? `${el.prefix}:` : ''}${el.name}> is not urlset or sitemapindex`;
      }
    }
    if (this.feed !== undefined) return this.feed.open(el, path);
    if (depth === 2 && ((this.kind === 'urlset' && el.name === 'url') || (this.kind === 'index' && el.name === 'sitemap'))) this.entry = {};
  }

  close(el: XmlElement, path: readonly XmlElement[], text: string): void {
    if (this.feed !== undefined) return this.feed.close(el, path, text);
    const entry = this.entry;
    if (entry === undefined) return;
    const depth = path.length;
    if (depth === 2) {
      this.entry = undefined;
      this.add(this.kind === 'index' ? 'sitemap' : 'url', entry);
      return;
    }
    if (depth !== 3) return;
    const value = text.trim();
    if (el.name === 'loc') entry.loc = value;
    else if (el.name === 'lastmod') {
      const t = parseW3cDate(value);
      if (t !== undefined) entry.lastmod = t;
    } else if (el.name === 'changefreq' && this.kind === 'urlset') {
      const f = value.toLowerCase();
      if (CHANGE_FREQ_SET.has(f)) entry.changefreq = f as ChangeFreq;
    } else if (el.name === 'priority' && this.kind === 'urlset') {
      const p = Number(value);
      if (value !== '' && Number.isFinite(p)) entry.priority = Math.min(1, Math.max(0, p));
    }
  }
}

const GZIP_MAGIC_0 = 0x1f;
const GZIP_MAGIC_1 = 0x8b;
const SLICE_CHARS = 64 * 1024;

/** True for bytes that start like a gzip member. */
export function isGzip(body: Uint8Array): boolean {
  return body.length >= 2 && body[0] === GZIP_MAGIC_0 && body[1] === GZIP_MAGIC_1;
}

/**
 * A sitemap read incrementally: write() text or bytes (UTF-8, the protocol's only encoding) as they
 * arrive, then end(). Entries are available in the result; the reader keeps nothing else.
 */
export class SitemapParser {
  private readonly result: SitemapResult = { urls: [], sitemaps: [], invalid: 0, foreign: 0 };
  private readonly allowed: ReadonlySet<string>;
  private readonly maxUrls: number;
  private readonly maxBytes: number;
  private readonly decoder = new TextDecoder('utf-8');
  private bytes = 0;
  private mode: 'sniff' | 'xml' | 'text' | 'done' = 'sniff';
  private pending = '';
  private xml: XmlStream | undefined;
  private reader: SitemapReader | undefined;

  constructor(
    private readonly sitemapUrl: string,
    private readonly opts: SitemapOptions = {},
  ) {
    this.allowed = new Set([hostOf(sitemapUrl), ...(opts.allowedHosts ?? [])]);
    this.maxUrls = opts.maxUrls ?? SITEMAP_MAX_URLS;
    this.maxBytes = opts.maxBytes ?? SITEMAP_MAX_BYTES;
  }

  write(chunk: string | Uint8Array): void {
    if (this.mode === 'done') return;
    let text: string;
    if (typeof chunk === 'string') {
      const n = Buffer.byteLength(chunk);
      if (this.bytes + n > this.maxBytes) {
        // Keep the part below the limit (by characters: close enough, and never more bytes).
        text = chunk.slice(0, Math.max(0, this.maxBytes - this.bytes));
        this.bytes = this.maxBytes;
        this.feed(text);
        return this.stop('bytes');
      }
      this.bytes += n;
      text = chunk;
    } else {
      const room = this.maxBytes - this.bytes;
      const over = chunk.length > room;
      text = this.decoder.decode(over ? chunk.subarray(0, room) : chunk, { stream: !over });
      this.bytes += Math.min(chunk.length, room);
      if (over) {
        this.feed(text);
        return this.stop('bytes');
      }
    }
    this.feed(text);
  }

  end(): SitemapResult {
    if (this.mode !== 'done') {
      const tail = this.decoder.decode();
      if (tail !== '') this.feed(tail);
      this.finish(this.opts.truncated === true);
    }
    return this.result;
  }

  private stop(limit: 'urls' | 'bytes'): void {
    this.result.limit ??= limit;
    this.finish(true);
  }

  private finish(cutShort: boolean): void {
    if (this.mode === 'done') return;
    const mode = this.mode;
    this.mode = 'done';
    if (mode === 'text' || (mode === 'sniff' && this.pending.trim() !== '')) {
      this.result.kind = 'text';
      for (const line of this.pending.split(/\r?\n|\r/)) this.textLine(line);
      this.pending = '';
      return;
    }
    if (mode === 'sniff') {
      this.fail('MEGURI_ERR_SITEMAP_FORMAT', 'empty sitemap');
      return;
    }
    const reader = this.reader!;
    const xml = this.xml!;
    const syntax = reader.formatError === undefined && !cutShort ? xml.end() : xml.error;
    if (reader.formatError !== undefined) return this.fail('MEGURI_ERR_SITEMAP_FORMAT', reader.formatError);
    if (syntax !== undefined) return this.fail('MEGURI_ERR_SITEMAP_XML', syntax.message);
    if (reader.kind !== undefined) this.result.kind = reader.kind;
    if (reader.feed !== undefined) {
      this.result.invalid += reader.feed.invalidLinks;
      for (const item of reader.feed.items) this.addUrl(item.date === undefined ? { loc: item.url } : { loc: item.url, lastmod: item.date });
    }
  }

  private fail(code: ParseFailure['code'], message: string): void {
    this.result.error = { code, message };
    this.result.urls = [];
    this.result.sitemaps = [];
    this.mode = 'done';
  }

  private feed(text: string): void {
    if (this.mode === 'sniff') {
      this.pending += text;
      const start = this.pending.replace(/^\uFEFF/, '').trimStart();
      if (start === '') return;
      if (start.startsWith('<')) {
        this.mode = 'xml';
        this.reader = new SitemapReader(this.sitemapUrl, this.opts, (kind, e) => (kind === 'url' ? this.addUrl(e) : this.addSitemap(e)));
        this.xml = new XmlStream(this.reader);
        text = this.pending.replace(/^\uFEFF/, '');
        this.pending = '';
      } else {
        this.mode = 'text';
        text = this.pending;
        this.pending = '';
      }
    }
    if (this.mode === 'xml') {
      for (let i = 0; i < text.length && this.mode === 'xml'; i += SLICE_CHARS) {
        this.xml!.write(text.slice(i, i + SLICE_CHARS));
        if (this.reader!.formatError !== undefined || this.xml!.error !== undefined) this.finish(false);
      }
    } else if (this.mode === 'text') {
      const lines = (this.pending + text).split(/\r?\n|\r/);
      this.pending = lines.pop() ?? '';
      for (const line of lines) {
        this.textLine(line);
        if (this.mode !== 'text') return;
      }
    }
  }

  private textLine(line: string): void {
    const raw = line.replace(/^\uFEFF/, '').trim();
    if (raw === '') return;
    this.addUrl({ loc: raw });
  }

  private accept(loc: string | undefined): string | undefined {
    const norm = loc === undefined || loc === '' ? undefined : normalizeUrl(loc, this.sitemapUrl, this.opts);
    if (norm === undefined || !norm.ok || !/^https?:\/\//i.test(loc ?? '')) {
      this.result.invalid++;
      return undefined;
    }
    if (!this.allowed.has(hostOf(norm.url))) {
      this.result.foreign++;
      return undefined;
    }
    return norm.url;
  }

  private full(): boolean {
    if (this.result.urls.length + this.result.sitemaps.length < this.maxUrls) return false;
    this.result.limit ??= 'urls';
    return true;
  }

  private addUrl(e: OpenEntry): void {
    if (this.full()) return;
    const url = this.accept(e.loc);
    if (url === undefined) return;
    const out: SitemapUrl = { url };
    if (e.lastmod !== undefined) out.lastmod = e.lastmod;
    if (e.changefreq !== undefined) out.changefreq = e.changefreq;
    if (e.priority !== undefined) out.priority = e.priority;
    this.result.urls.push(out);
  }

  private addSitemap(e: OpenEntry): void {
    if (this.full()) return;
    const url = this.accept(e.loc);
    if (url === undefined) return;
    this.result.sitemaps.push(e.lastmod === undefined ? { url } : { url, lastmod: e.lastmod });
  }
}

/**
 * Parses a whole sitemap body: text (already decoded) or bytes, gzip-compressed or not (a gzip
 * member is recognised by its magic bytes, whatever the URL or content type said).
 */
export function parseSitemap(body: string | Uint8Array, sitemapUrl: string, opts: SitemapOptions = {}): SitemapResult {
  const parser = new SitemapParser(sitemapUrl, opts);
  let input: string | Uint8Array = body;
  if (typeof body !== 'string' && isGzip(body)) {
    const maxBytes = opts.maxBytes ?? SITEMAP_MAX_BYTES;
    try {
      input = gunzipSync(body, { maxOutputLength: maxBytes });
    } catch (err) {
      const tooLarge = err instanceof RangeError || (err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE';
      return {
        urls: [],
        sitemaps: [],
        invalid: 0,
        foreign: 0,
        error: tooLarge
          ? { code: 'MEGURI_ERR_SITEMAP_TOO_LARGE', message: `gzip sitemap inflates past ${maxBytes} bytes` }
          : { code: 'MEGURI_ERR_SITEMAP_XML', message: `bad gzip stream: ${(err as Error).message}` },
      };
    }
  }
  if (typeof input === 'string') {
    for (let i = 0; i < input.length; i += SLICE_CHARS) parser.write(input.slice(i, i + SLICE_CHARS));
  } else {
    for (let i = 0; i < input.length; i += SLICE_CHARS) parser.write(input.subarray(i, i + SLICE_CHARS));
  }
  return parser.end();
}
