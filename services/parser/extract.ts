/**
 * One streaming pass over an HTML page with htmlparser2's tokenising Parser (no DOM): links,
 * `<base>`, robots meta, canonical, title, language and the "main text" used for the
 * boilerplate-insensitive fingerprint.
 *
 * Link sources: `a[href]`, `area[href]`, `link[href]` with rel alternate/canonical/next/prev
 * (never when the rel also says stylesheet or icon), `frame[src]`, `iframe[src]` and the URL of a
 * `<meta http-equiv="refresh">`. `link rel=canonical` is reported as `canonical`, not as a link;
 * the caller decides whether to follow it.
 *
 * Links are resolved at the end of the pass, so a `<base href>` applies to every link of the page
 * even when it appears after some of them; the first `<base href>` that resolves to an http(s)
 * URL (against the page URL) wins.
 * Links are deduplicated by normalised URL, keeping the first occurrence's tag and the first
 * non-empty anchor text; a link is nofollow only when every occurrence is. Links to the page
 * itself (`#top`, `href=""`) are dropped.
 *
 * Main text: every text node except those inside script, style, noscript, template, svg, math,
 * select, button, textarea, label (form controls; the form element itself is kept because some
 * sites wrap the whole page in one), nav, header, footer, aside, elements with a `hidden`
 * attribute, role navigation/banner/contentinfo/complementary, or a class/id containing one of
 * the boilerplate words below as a whole token (tokens split on anything but letters and
 * digits, so `site-footer` matches and `headers`/`shadow`/`load` do not). The class/id rule is
 * not applied to html, body, main and article, whose classes are often page-level state
 * (`has-sidebar`). If the rules leave no main text at all, the visible boilerplate text is used
 * instead so the fingerprint still reflects something.
 */
import { Parser } from 'htmlparser2';
import { decodeHTML, decodeHTMLAttribute } from 'entities';
import { normalizeUrl, urlResolver, type NormalizeOptions } from '../common/url.ts';

export type LinkTag = 'a' | 'area' | 'link' | 'frame' | 'iframe' | 'refresh';

export interface ExtractedLink {
  /** Normalised absolute http(s) URL. */
  url: string;
  /** True when every occurrence of this URL had rel nofollow/ugc/sponsored. */
  nofollow: boolean;
  /** Anchor text (a, area alt), whitespace collapsed, at most 256 characters; '' when none. */
  anchor: string;
  /** Tag of the first occurrence. */
  tag: LinkTag;
  /** Announced as a feed: `<link rel=alternate type=application/rss+xml|atom+xml|rdf+xml>`. */
  feed?: true;
}

export interface Extracted {
  title: string | null;
  lang: string | null;
  /** URL links were resolved against: the first valid `<base href>`, else the page URL. */
  baseUrl: string;
  /** Normalised `link rel=canonical` target, when present and valid. */
  canonical: string | null;
  /** Robots meta (name=robots or the bot token) says noindex/none. */
  noindex: boolean;
  /** Robots meta says nofollow/none: no link of the page may be followed. */
  nofollowAll: boolean;
  links: ExtractedLink[];
  /** Link attributes that could not be turned into a URL (unparsable, too long). */
  invalidLinks: number;
  /** Link attributes skipped on purpose: non-http(s) schemes, empty, links to the page itself. */
  skippedLinks: number;
  /** Main text (whitespace as in the source, word breaks between blocks), at most maxTextChars. */
  text: string;
  /** Offsets in `text` where a block-level element begins or ends (ascending): its paragraph boundaries. */
  breaks?: number[];
}

export interface ExtractOptions extends NormalizeOptions {
  /** Robots meta name honoured besides `robots` (case-insensitive); default 'meguri'. */
  botToken?: string;
  /** Main text cap in characters; default 200,000. */
  maxTextChars?: number;
  /** Distinct links kept per page; later ones are ignored; default 10,000. */
  maxLinks?: number;
}

export const MAX_TITLE_CHARS = 1024;
export const MAX_ANCHOR_CHARS = 256;
const MAX_LANG_CHARS = 64;
const DEFAULT_MAX_TEXT = 200_000;
const DEFAULT_MAX_LINKS = 10_000;

// Containers whose text is never main text (hidden, interactive or chrome).
// `form` itself is not one: ASP.NET WebForms-style pages wrap the whole body in a single form, so
// only the controls' text is dropped.
const BOILERPLATE_TAGS = [
  'script', 'style', 'noscript', 'template', 'svg', 'math', 'select', 'button', 'textarea', 'label',
  'nav', 'header', 'footer', 'aside', 'iframe', 'object',
];
// Of those, the ones whose text is not visible at all (never used as fallback text either).
const HIDDEN_TAGS = ['script', 'style', 'noscript', 'template', 'svg', 'math', 'iframe', 'object'];
const BOILERPLATE_ROLES = new Set(['navigation', 'banner', 'contentinfo', 'complementary']);
const BOILERPLATE_WORDS =
  /(?:^|[^a-z0-9])(?:nav|navbar|navigation|menu|menus|footer|header|sidebar|banner|ad|ads|advert|adverts|advertisement|breadcrumb|breadcrumbs|cookie|cookies)(?![a-z0-9])/i;
const CLASS_RULE_EXEMPT = ['html', 'body', 'main', 'article'];
// Elements that do not break words: text on both sides joins without a space.
const INLINE_TAGS = [
  'a', 'abbr', 'b', 'bdi', 'bdo', 'cite', 'code', 'data', 'dfn', 'em', 'i', 'kbd', 'mark', 'q', 's',
  'samp', 'small', 'span', 'strong', 'sub', 'sup', 'time', 'u', 'var', 'font', 'tt', 'big', 'strike',
  'label', 'ins', 'del', 'wbr',
];
// Elements with per-tag handling in onopentag.
const SPECIAL_TAGS = ['a', 'area', 'link', 'frame', 'iframe', 'base', 'meta', 'html', 'title', 'img'];

// One map lookup per start tag gives everything the handler needs to know about the tag name.
const T_SPECIAL = 1;
const T_BOILER = 2;
const T_HIDDEN = 4;
const T_INLINE = 8;
const T_EXEMPT = 16;
const TAG_INFO = new Map<string, number>();
const mark = (names: readonly string[], bit: number): void => {
  for (const n of names) TAG_INFO.set(n, (TAG_INFO.get(n) ?? 0) | bit);
};
mark(SPECIAL_TAGS, T_SPECIAL);
mark(BOILERPLATE_TAGS, T_BOILER);
mark(HIDDEN_TAGS, T_HIDDEN);
mark(INLINE_TAGS, T_INLINE);
mark(CLASS_RULE_EXEMPT, T_EXEMPT);

const NOFOLLOW_REL = /(?:^|\s)(?:nofollow|ugc|sponsored)(?:\s|$)/i;
const FOLLOWED_LINK_REL = /(?:^|\s)(?:alternate|next|prev|previous)(?:\s|$)/i;
const UNFOLLOWED_LINK_REL = /(?:^|\s)(?:stylesheet|icon|shortcut|apple-touch-icon|mask-icon|preload|prefetch)(?:\s|$)/i;
const CANONICAL_REL = /(?:^|\s)canonical(?:\s|$)/i;
const ALTERNATE_REL = /(?:^|\s)alternate(?:\s|$)/i;
const FEED_TYPE = /^\s*application\/(?:rss|atom|rdf)\+xml\s*(?:;|$)/i;
// HTML whitespace is ASCII whitespace; a no-break space is content. Only runs that are not
// already a single space are matched, which makes the replace several times faster on prose.
const WS = /[\t\n\f\r][ \t\n\f\r]*| [\t\n\f\r ]+/g;

function collapse(s: string, max: number): string {
  const c = s.replace(WS, ' ').trim();
  return c.length > max ? c.slice(0, max).trimEnd() : c;
}

/** Robots directives from a meta content or header value: noindex/nofollow/none (else ignored). */
export function parseRobotsDirectives(value: string): { noindex: boolean; nofollow: boolean } {
  let noindex = false;
  let nofollow = false;
  for (const raw of value.toLowerCase().split(/[\s,]+/)) {
    if (raw === 'noindex') noindex = true;
    else if (raw === 'nofollow') nofollow = true;
    else if (raw === 'none') noindex = nofollow = true;
  }
  return { noindex, nofollow };
}

/** `0; url=/next` → `/next`; null when the content carries no URL. */
function refreshTarget(content: string): string | null {
  // delay (required), optional ; or , then the URL with an optional `url=` prefix
  const m = /^\s*(?:\d+(?:\.\d*)?|\.\d+)\s*(?:[;,]\s*)?(?:url\s*=\s*)?(.*)$/is.exec(content);
  if (!m || !m[1]) return null;
  let target = m[1].trim();
  const q = target.charAt(0);
  if (q === '"' || q === "'") {
    const end = target.indexOf(q, 1);
    target = end > 0 ? target.slice(1, end) : target.slice(1);
  }
  return target === '' ? null : target;
}

interface Occurrence {
  raw: string;
  tag: LinkTag;
  nofollow: boolean;
  anchor: string;
  feed?: true;
}

// Per-element flags on the element stack.
const F_BOILER = 1; // starts a boilerplate region
const F_HIDDEN = 2; // starts an invisible region
const F_ANCHOR = 4; // an <a> whose text is collected as anchor text
const F_TITLE = 8;
const F_SVG = 16;
const F_BREAK = 32; // block-level: separates words

/** Extracts everything the parser needs from one HTML page. Never throws on malformed HTML. */
export function extractPage(html: string, pageUrl: string, opts: ExtractOptions = {}): Extracted {
  return extractPageDecoding(html, pageUrl, opts, false);
}

/**
 * extractPage with character references decoded by htmlparser2's tokenizer as it reads
 * (`inTokenizer`), or afterwards, in the text nodes and attribute values that hold an '&' (what
 * extractPage does: the tokenizer then skips through text to the next '<' instead of stepping a
 * character at a time, a third of a simulated page's parse time). Both decode with the same
 * decoder (entities, which htmlparser2 uses) in the same modes; a test holds them equal.
 */
export function extractPageDecoding(html: string, pageUrl: string, opts: ExtractOptions, inTokenizer: boolean): Extracted {
  const maxText = opts.maxTextChars ?? DEFAULT_MAX_TEXT;
  const walk = new PageWalk(pageUrl, (opts.botToken ?? 'meguri').toLowerCase(), maxText, inTokenizer);
  const parser = new Parser(walk, { decodeEntities: inTokenizer });
  try {
    parser.end(html);
  } catch {
    // htmlparser2 is lenient; this only guards against the unexpected. Keep what was gathered.
  }
  walk.finish();

  const pageNorm = normalizeUrl(pageUrl, undefined, opts);
  const self = pageNorm.ok ? pageNorm.url : pageUrl;
  const baseUrl = walk.baseHref ?? self;
  const { links, invalidLinks, skippedLinks } = resolveLinks(walk.occurrences, self, baseUrl, opts, opts.maxLinks ?? DEFAULT_MAX_LINKS);
  let canonical: string | null = null;
  if (walk.canonicalHref !== null) {
    const r = normalizeUrl(walk.canonicalHref, baseUrl, opts);
    if (r.ok) canonical = r.url;
  }
  const { text, breaks } = mainText(walk, maxText);
  const { title, lang, noindex, nofollowAll } = walk;
  return { title, lang, baseUrl, canonical, noindex, nofollowAll, links, invalidLinks, skippedLinks, text, breaks };
}

/**
 * The pass over the page, as htmlparser2's handler: an element stack with the regions it is in
 * (boilerplate, hidden, svg, title, anchor), the link occurrences, the page's metadata, and the
 * main and boilerplate text with the offsets of their block breaks.
 */
class PageWalk {
  readonly occurrences: Occurrence[] = [];
  title: string | null = null;
  lang: string | null = null;
  baseHref: string | null = null;
  canonicalHref: string | null = null;
  noindex = false;
  nofollowAll = false;
  readonly main: string[] = [];
  mainLen = 0;
  readonly aux: string[] = [];
  // Exact offsets of the block breaks in the joined main / aux text.
  readonly mainBreaks: number[] = [];
  readonly auxBreaks: number[] = [];

  private readonly stack: number[] = [];
  private boilerDepth = 0;
  private hiddenDepth = 0;
  private svgDepth = 0;
  private titleDepth = 0;
  private anchorOcc: Occurrence | null = null;
  private anchorLen = 0;
  private titleBuf = '';
  private auxLen = 0;
  private mainChars = 0;
  private auxChars = 0;
  private pendingBreak = false;

  constructor(
    private readonly pageUrl: string,
    private readonly botToken: string,
    private readonly maxText: number,
    private readonly inTokenizer: boolean,
  ) {}

  onopentag(name: string, attribs: Record<string, string>): void {
    if (!this.inTokenizer) {
      for (const key in attribs) {
        const value = attribs[key]!;
        if (value.indexOf('&') >= 0) attribs[key] = decodeHTMLAttribute(value);
      }
    }
    const info = TAG_INFO.get(name) ?? 0;
    let flags = info & T_SPECIAL ? this.special(name, attribs) : 0;
    flags |= this.regionFlags(name, attribs, info);
    if ((info & T_INLINE) === 0) {
      flags |= F_BREAK;
      this.pendingBreak = true;
      if (this.anchorOcc !== null) this.anchorOcc.anchor += ' ';
    }
    if (flags & F_BOILER) this.boilerDepth++;
    if (flags & F_HIDDEN) this.hiddenDepth++;
    if (flags & F_SVG) this.svgDepth++;
    this.stack.push(flags);
  }

  ontext(raw: string): void {
    if (this.titleDepth === 0 && this.hiddenDepth > 0) return;
    // Undecoded, a text node comes whole (it ends at the next tag, which no reference spans)
    // and decodes as the tokenizer would have decoded it piece by piece.
    const data = this.inTokenizer || raw.indexOf('&') < 0 ? raw : decodeHTML(raw);
    if (this.titleDepth > 0) {
      if (this.titleBuf.length < MAX_TITLE_CHARS * 2) this.titleBuf += data;
      return;
    }
    if (this.anchorOcc !== null && this.anchorLen < MAX_ANCHOR_CHARS * 2) {
      this.anchorOcc.anchor += data;
      this.anchorLen += data.length;
    }
    if (this.boilerDepth === 0) {
      if (this.mainLen < this.maxText) {
        if (this.pendingBreak) {
          this.main.push(' ');
          this.mainBreaks.push(this.mainChars);
          this.mainChars++;
          this.pendingBreak = false;
        }
        this.main.push(data);
        this.mainChars += data.length;
        this.mainLen += data.length + 1;
      }
    } else if (this.auxLen < this.maxText && this.mainLen === 0) {
      if (this.pendingBreak) {
        this.aux.push(' ');
        this.auxBreaks.push(this.auxChars);
        this.auxChars++;
      }
      this.aux.push(data);
      this.auxChars += data.length;
      this.auxLen += data.length + 1;
    }
  }

  onclosetag(): void {
    const flags = this.stack.pop();
    if (flags === undefined) return;
    if (flags & F_BOILER) this.boilerDepth--;
    if (flags & F_HIDDEN) this.hiddenDepth--;
    if (flags & F_SVG) this.svgDepth--;
    if (flags & F_TITLE) {
      this.titleDepth--;
      this.title = collapse(this.titleBuf, MAX_TITLE_CHARS);
    }
    if (flags & F_ANCHOR) this.anchorOcc = null;
    if (flags & F_BREAK) {
      this.pendingBreak = true;
      if (this.anchorOcc !== null) this.anchorOcc.anchor += ' ';
    }
  }

  /** After the pass: a title never closed ends with the page. */
  finish(): void {
    if (this.titleDepth > 0 && this.title === null) this.title = collapse(this.titleBuf, MAX_TITLE_CHARS);
  }

  private addOccurrence(raw: string, tag: LinkTag, nofollow: boolean): Occurrence {
    const occ: Occurrence = { raw, tag, nofollow, anchor: '' };
    this.occurrences.push(occ);
    return occ;
  }

  /** The tags that carry links or page metadata; returns the element's anchor and title flags. */
  private special(name: string, attribs: Record<string, string>): number {
    let flags = 0;
    switch (name) {
      case 'a':
      case 'area': {
        const href = attribs.href;
        if (href !== undefined) {
          const rel = attribs.rel;
          const occ = this.addOccurrence(href, name, rel !== undefined && NOFOLLOW_REL.test(rel));
          if (name === 'a') {
            this.anchorOcc = occ;
            this.anchorLen = 0;
            flags |= F_ANCHOR;
          } else if (attribs.alt) {
            occ.anchor = attribs.alt.slice(0, MAX_ANCHOR_CHARS * 2);
          }
        }
        break;
      }
      case 'link': {
        const href = attribs.href;
        const rel = attribs.rel;
        if (href !== undefined && rel !== undefined) {
          if (CANONICAL_REL.test(rel)) {
            if (this.canonicalHref === null) this.canonicalHref = href;
          } else if (FOLLOWED_LINK_REL.test(rel) && !UNFOLLOWED_LINK_REL.test(rel)) {
            const occ = this.addOccurrence(href, 'link', NOFOLLOW_REL.test(rel));
            if (ALTERNATE_REL.test(rel) && attribs.type !== undefined && FEED_TYPE.test(attribs.type)) occ.feed = true;
          }
        }
        break;
      }
      case 'frame':
      case 'iframe':
        if (attribs.src !== undefined) this.addOccurrence(attribs.src, name, false);
        break;
      case 'base':
        if (this.baseHref === null && attribs.href !== undefined) {
          const r = normalizeUrl(attribs.href, this.pageUrl);
          if (r.ok) this.baseHref = r.url;
        }
        break;
      case 'meta':
        this.meta(attribs);
        break;
      case 'html':
        if (this.lang === null && attribs.lang) {
          const l = attribs.lang.trim();
          if (l !== '') this.lang = l.slice(0, MAX_LANG_CHARS);
        }
        break;
      case 'title':
        if (this.title === null && this.svgDepth === 0) {
          flags |= F_TITLE;
          this.titleDepth++;
        }
        break;
      case 'img':
        if (this.anchorOcc !== null && attribs.alt && this.anchorLen < MAX_ANCHOR_CHARS * 2) {
          this.anchorOcc.anchor += ' ' + attribs.alt;
          this.anchorLen += attribs.alt.length + 1;
        }
        break;
    }
    return flags;
  }

  /** `<meta name=robots|bot>` directives and `<meta http-equiv=refresh>` targets. */
  private meta(attribs: Record<string, string>): void {
    const metaName = attribs.name;
    if (metaName !== undefined && attribs.content !== undefined) {
      const n = metaName.trim().toLowerCase();
      if (n === 'robots' || n === this.botToken) {
        const d = parseRobotsDirectives(attribs.content);
        this.noindex ||= d.noindex;
        this.nofollowAll ||= d.nofollow;
      }
    } else if (attribs['http-equiv'] !== undefined && attribs.content !== undefined) {
      if (attribs['http-equiv'].trim().toLowerCase() === 'refresh') {
        const target = refreshTarget(attribs.content);
        if (target !== null) this.addOccurrence(target, 'refresh', false);
      }
    }
  }

  /** Whether the element starts a boilerplate (and a hidden, an svg) region. */
  private regionFlags(name: string, attribs: Record<string, string>, info: number): number {
    let flags = 0;
    if (info & T_BOILER) {
      flags |= F_BOILER;
      if (info & T_HIDDEN) flags |= F_HIDDEN;
      if (name === 'svg') flags |= F_SVG;
    } else if (this.boilerDepth === 0) {
      // Attribute heuristics only matter while still in main content.
      const role = attribs.role;
      if (
        attribs.hidden !== undefined ||
        (role !== undefined && BOILERPLATE_ROLES.has(role.trim().toLowerCase())) ||
        ((info & T_EXEMPT) === 0 &&
          ((attribs.class !== undefined && BOILERPLATE_WORDS.test(attribs.class)) || (attribs.id !== undefined && BOILERPLATE_WORDS.test(attribs.id))))
      ) {
        flags |= F_BOILER;
        if (attribs.hidden !== undefined) flags |= F_HIDDEN;
      }
    }
    return flags;
  }
}

/**
 * The occurrences resolved against the base URL and deduplicated by normalised URL (the first
 * occurrence's tag, the first non-empty anchor; nofollow only when every occurrence is), at most
 * `maxLinks`; links to the page itself and unresolvable ones are counted, not kept.
 */
function resolveLinks(
  occurrences: readonly Occurrence[],
  self: string,
  baseUrl: string,
  opts: ExtractOptions,
  maxLinks: number,
): { links: ExtractedLink[]; invalidLinks: number; skippedLinks: number } {
  const links: ExtractedLink[] = [];
  const byUrl = new Map<string, ExtractedLink>();
  // raw href → normalised URL, or one of the two markers (never valid URLs themselves)
  const resolved = new Map<string, string>();
  const INVALID = '!';
  const SKIPPED = '';
  const resolve = urlResolver(baseUrl, opts);
  let invalidLinks = 0;
  let skippedLinks = 0;
  for (const occ of occurrences) {
    let url = resolved.get(occ.raw);
    if (url === undefined) {
      const r = resolve(occ.raw);
      if (r.ok) url = r.url === self ? SKIPPED : r.url;
      else url = r.reason === 'invalid' || r.reason === 'too-long' ? INVALID : SKIPPED;
      resolved.set(occ.raw, url);
    }
    if (url === INVALID) {
      invalidLinks++;
      continue;
    }
    if (url === SKIPPED) {
      skippedLinks++;
      continue;
    }
    const existing = byUrl.get(url);
    if (existing !== undefined) {
      existing.nofollow &&= occ.nofollow;
      if (occ.feed) existing.feed = true;
      if (existing.anchor === '' && occ.anchor !== '') existing.anchor = collapse(occ.anchor, MAX_ANCHOR_CHARS);
      continue;
    }
    if (links.length >= maxLinks) continue;
    const link: ExtractedLink = {
      url,
      nofollow: occ.nofollow,
      anchor: occ.anchor === '' ? '' : collapse(occ.anchor, MAX_ANCHOR_CHARS),
      tag: occ.tag,
    };
    if (occ.feed) link.feed = true;
    byUrl.set(url, link);
    links.push(link);
  }
  return { links, invalidLinks, skippedLinks };
}

/** The main text (or, when the page has none, the visible boilerplate text) and its block breaks. */
function mainText(walk: PageWalk, maxText: number): { text: string; breaks: number[] } {
  // Whitespace is left as in the source: the fingerprint tokeniser skips it anyway, and
  // collapsing ~20 KB of prose on every page would cost as much as the link work.
  const joined = (walk.mainLen > 0 ? walk.main : walk.aux).join('');
  let text = joined.trim();
  if (text.length > maxText) text = text.slice(0, maxText);
  // Break offsets move with the leading whitespace trimmed; those outside the text go.
  const lead = joined.length - joined.trimStart().length;
  const breaks: number[] = [];
  for (const at of walk.mainLen > 0 ? walk.mainBreaks : walk.auxBreaks) if (at - lead > 0 && at - lead < text.length) breaks.push(at - lead);
  return { text, breaks };
}
