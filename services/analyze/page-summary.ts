/**
 * What the analyses need from one fetched page, computed once per pages record: host, TLD,
 * language, MD5 of the body, static or dynamic, images, links split into internal and
 * outbound-per-host, and the text score input (sentences above a length). Pure: no I/O.
 */
import { Parser } from 'htmlparser2';
import { createHash } from 'node:crypto';

/** Sentences of at least this many characters count for the text score (Akamine et al.'s stage 2). */
export const SENTENCE_MIN_CHARS = 40;

/** Outbound link targets kept per page (a link farm page with more still counts them all). */
const MAX_OUTBOUND_HOSTS = 500;

export interface PageInput {
  url: string;
  status: number;
  fetchedAt: number;
  contentType?: string | undefined;
  headers?: Record<string, string> | undefined;
  /** Body bytes as the server sent them (after content decoding), when the record carries them. */
  bodyBytes?: Uint8Array | undefined;
  /** Body as text (charset-decoded). */
  bodyText?: string | undefined;
  serverIp?: string | undefined;
}

export interface PageSummary {
  url: string;
  host: string;
  tld: string;
  fetchedAt: number;
  serverIp?: string;
  /** BCP 47 primary subtag (`en`, `ja`...) or `unknown`. */
  lang: string;
  md5: string;
  bytes: number;
  /** Query string or CGI-like path (Muraoka et al.'s dynamic pages). */
  dynamic: boolean;
  /** Path segments: `/` is 0, `/a/b.html` is 2 (Akamine et al.: deeper is lower). */
  pathDepth: number;
  /** Characters of the query string without `?` (Akamine et al.: longer CGI arguments are lower). */
  queryLength: number;
  images: number;
  /** Links to the page's own host. */
  internal: number;
  /** Links to other hosts, counted per target host. */
  outbound: Record<string, number>;
  sentences: number;
}

const CGI_PATH = /\.(cgi|pl|php\d?|asp|aspx|jsp|cfm)$|\/cgi-bin\//i;

/** Host name without a trailing dot, lower case. */
export function hostOf(url: string): string | undefined {
  try {
    const u = new URL(url);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
    return u.hostname.replace(/\.$/, '').toLowerCase();
  } catch {
    return undefined;
  }
}

/** The last label of a host name (`com`, `jp`), `(ip)` for an address literal. */
export function tldOf(host: string): string {
  if (/^\d+\.\d+\.\d+\.\d+$/.test(host) || host.startsWith('[')) return '(ip)';
  const dot = host.lastIndexOf('.');
  return dot < 0 ? host : host.slice(dot + 1);
}

export function isDynamicUrl(u: URL): boolean {
  return u.search.length > 1 || CGI_PATH.test(u.pathname);
}

export function pathDepth(u: URL): number {
  return u.pathname.split('/').filter((s) => s !== '').length;
}

/** Pages the analyses count: a 200 answer with an HTML (or untyped text) body. */
export function isAnalysedPage(p: Pick<PageInput, 'status' | 'contentType' | 'bodyBytes' | 'bodyText'>): boolean {
  if (p.status !== 200) return false;
  if (p.bodyBytes === undefined && p.bodyText === undefined) return false;
  const type = (p.contentType ?? '').toLowerCase();
  return type === '' || type.includes('html');
}

/** Primary language subtag of a BCP 47 tag, or undefined when it is not one. */
function primaryTag(tag: string | undefined): string | undefined {
  const m = /^\s*([a-z]{2,3})(?:[-_][a-z0-9]+)*\s*(?:[,;]|$)/i.exec(tag ?? '');
  return m?.[1]?.toLowerCase();
}

/**
 * Language of a text sample by script when the page declares none: kana means Japanese, Hangul
 * Korean, Han alone Chinese, Cyrillic Russian, Thai, Arabic; Latin text stays `unknown` (telling
 * English from German needs a real detector, which a declared `lang` usually makes unnecessary).
 */
export function languageByScript(sample: string): string {
  let kana = 0, hangul = 0, han = 0, cyrillic = 0, thai = 0, arabic = 0, letters = 0;
  for (const ch of sample) {
    const c = ch.codePointAt(0) ?? 0;
    if ((c >= 0x3040 && c <= 0x30ff) || (c >= 0xff66 && c <= 0xff9d)) kana++;
    else if (c >= 0xac00 && c <= 0xd7a3) hangul++;
    else if (c >= 0x4e00 && c <= 0x9fff) han++;
    else if (c >= 0x0400 && c <= 0x04ff) cyrillic++;
    else if (c >= 0x0e00 && c <= 0x0e7f) thai++;
    else if (c >= 0x0600 && c <= 0x06ff) arabic++;
    else if (/\p{L}/u.test(ch)) letters++;
  }
  const all = kana + hangul + han + cyrillic + thai + arabic + letters;
  if (all === 0) return 'unknown';
  const share = (n: number): number => n / all;
  if (share(kana) > 0.05) return 'ja';
  if (share(hangul) > 0.2) return 'ko';
  if (share(han) > 0.2) return 'zh';
  if (share(cyrillic) > 0.3) return 'ru';
  if (share(thai) > 0.3) return 'th';
  if (share(arabic) > 0.3) return 'ar';
  return 'unknown';
}

/** Sentences of at least `min` characters in a text (split on . ! ? and their CJK forms). */
export function countSentences(text: string, min = SENTENCE_MIN_CHARS): number {
  let n = 0;
  for (const s of text.split(/[.!?。！？]+(?:\s|$)|[。！？]/u)) if (s.replace(/\s+/g, ' ').trim().length >= min) n++;
  return n;
}

/** Summarises one page; undefined when it is not an analysed page (see isAnalysedPage) or its URL is unusable. */
export function summarizePage(p: PageInput): PageSummary | undefined {
  if (!isAnalysedPage(p)) return undefined;
  let base: URL;
  try {
    base = new URL(p.url);
  } catch {
    return undefined;
  }
  const host = hostOf(p.url);
  if (host === undefined) return undefined;
  const bytes = p.bodyBytes ?? Buffer.from(p.bodyText ?? '', 'utf8');
  const text = p.bodyText ?? Buffer.from(bytes).toString('utf8');

  let declaredLang: string | undefined;
  let nofollowAll = false;
  let images = 0;
  let internal = 0;
  const outbound = new Map<string, number>();
  let skipText = 0;
  const textParts: string[] = [];
  let textChars = 0;
  let sentences = 0;
  const flushText = (): void => {
    if (textParts.length === 0) return;
    sentences += countSentences(textParts.join(''));
    textParts.length = 0;
  };
  const links: string[] = [];

  const parser = new Parser(
    {
      onopentag(name, attrs) {
        if (name === 'html' && attrs.lang !== undefined) declaredLang ??= primaryTag(attrs.lang);
        else if (name === 'meta') {
          const n = (attrs.name ?? '').toLowerCase();
          if ((n === 'robots') && /\bnofollow\b|\bnone\b/i.test(attrs.content ?? '')) nofollowAll = true;
          if ((attrs['http-equiv'] ?? '').toLowerCase() === 'content-language') declaredLang ??= primaryTag(attrs.content);
        } else if (name === 'img') images++;
        else if ((name === 'a' || name === 'area') && attrs.href !== undefined) {
          if (!/\b(nofollow|ugc|sponsored)\b/i.test(attrs.rel ?? '')) links.push(attrs.href);
        } else if (name === 'script' || name === 'style' || name === 'noscript') skipText++;
        // Block boundaries end a sentence-in-progress: headings and list items are not run together.
        if (/^(p|div|li|h[1-6]|td|th|br|section|article|header|footer|nav|title)$/.test(name)) flushText();
      },
      onclosetag(name) {
        if (name === 'script' || name === 'style' || name === 'noscript') skipText = Math.max(0, skipText - 1);
        if (/^(p|div|li|h[1-6]|td|th|section|article|header|footer|nav|title)$/.test(name)) flushText();
      },
      ontext(t) {
        if (skipText > 0) return;
        textParts.push(t);
        textChars += t.length;
        if (textChars > 1_000_000) flushText();
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(text);
  parser.end();
  flushText();

  if (!nofollowAll && !/\bnofollow\b|\bnone\b/i.test(p.headers?.['x-robots-tag'] ?? '')) {
    for (const href of links) {
      const target = resolveHost(href, base);
      if (target === undefined) continue;
      if (target === host) internal++;
      else if (outbound.has(target) || outbound.size < MAX_OUTBOUND_HOSTS) outbound.set(target, (outbound.get(target) ?? 0) + 1);
    }
  }
  const lang = declaredLang ?? primaryTag(p.headers?.['content-language']) ?? languageByScript(text.slice(0, 20_000).replace(/<[^>]*>/g, ' '));
  return {
    url: p.url,
    host,
    tld: tldOf(host),
    fetchedAt: p.fetchedAt,
    ...(p.serverIp !== undefined ? { serverIp: p.serverIp } : {}),
    lang,
    md5: createHash('md5').update(bytes).digest('hex'),
    bytes: bytes.length,
    dynamic: isDynamicUrl(base),
    pathDepth: pathDepth(base),
    queryLength: Math.max(0, base.search.length - 1),
    images,
    internal,
    outbound: Object.fromEntries(outbound),
    sentences,
  };
}

function resolveHost(href: string, base: URL): string | undefined {
  const h = href.trim();
  if (h === '' || h.startsWith('#')) return undefined;
  try {
    const u = new URL(h, base);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
    return u.hostname.replace(/\.$/, '').toLowerCase();
  } catch {
    return undefined;
  }
}
