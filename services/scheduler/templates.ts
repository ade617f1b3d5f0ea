/**
 * URL templates (seed 004's remedy for hosts that generate URLs): URLs of one host that differ only
 * in parameter values, or in numeric or id-like path segments, share a template. A spider trap —
 * fresh session ids, endless calendars, a random token in every link — is one or a few templates
 * with an unbounded supply of URLs, so a budget per template bounds it while the host's other pages
 * are crawled as usual.
 *
 * The template of a normalised URL (host excluded, the scheduler keys it by host):
 *   - each path segment (its extension aside) that is an identifier becomes `{id}`: a number, a
 *     UUID, 8+ hex digits, a token of 8+ letters and digits with both in it (hashes, session
 *     tokens), or of 24+ such characters (`/p/12.html` → `/p/{id}.html`, `/2024/05/` →
 *     `/{id}/{id}/`); in other segments every run of digits becomes `#` (`page-2` → `page-#`);
 *     path parameters keep their names only (`;jsessionid=X` → `;jsessionid`);
 *   - the query keeps its parameter names, sorted and without duplicates (`?b=2&a=1&a=3` → `?a&b`).
 *
 * A template whose pages all look the same is a trap that keeps one representative (seed 004): once
 * `trapProbePages` pages of it were fetched and at least `trapDuplicateShare` of them carry the
 * same text as its first (text fingerprints within the Hamming threshold — a session id, a
 * random token or a tracking path in the URL, and the same page behind it), no further URL of it
 * is admitted or fetched. Templates of distinct pages (products, articles, days) keep their budget.
 *
 * Queue order inside a host: the n-th URL admitted to a template (n from 0) is queued in round
 * 0 while n < roundSize, then in round 1 + ⌊log2(n / roundSize)⌋. A host's queue is taken round by
 * round (by score within a round), so the first `roundSize` URLs of every template come before a
 * big template's later URLs: one template with ten thousand URLs cannot keep a host's other pages
 * waiting, whatever their scores.
 */
import { createHash } from 'node:crypto';
import type { KeyValueStore } from '../runtime/index.ts';
import { NOT_IN_MEMORY } from '../runtime/index.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TOKEN = /^[A-Za-z0-9_-]+$/;
const HAS_DIGIT = /[0-9]/;
const DIGITS = /[0-9]+/g;
const ALL_DIGITS = /^[0-9]+$/;
const HEX = /^[0-9a-f]+$/i;

/** A whole segment that is an identifier: a number, a UUID, hex of 8+, or a long mixed token. */
function isIdLike(stem: string): boolean {
  if (ALL_DIGITS.test(stem) || UUID.test(stem)) return true;
  if (stem.length < 8 || !TOKEN.test(stem)) return false;
  if (HEX.test(stem)) return true;
  return (HAS_DIGIT.test(stem) && /[A-Za-z]/.test(stem)) || stem.length >= 24;
}

function segmentTemplate(segment: string): string {
  if (segment === '') return segment;
  const semi = segment.indexOf(';');
  if (semi >= 0) {
    const names = segment
      .slice(semi + 1)
      .split(';')
      .map((p) => {
        const eq = p.indexOf('=');
        return eq < 0 ? p : p.slice(0, eq);
      });
    return [segmentTemplate(segment.slice(0, semi)), ...names].join(';');
  }
  const dot = segment.lastIndexOf('.');
  // An extension (`.html`, `.php`) is part of the shape, not of the id.
  const stem = dot > 0 && segment.length - dot <= 6 ? segment.slice(0, dot) : segment;
  const ext = stem.length < segment.length ? segment.slice(stem.length) : '';
  if (isIdLike(stem)) return '{id}' + ext;
  return segment.replace(DIGITS, '#');
}

/**
 * The template of a normalised absolute URL (path and query shape, host excluded). URLs that are
 * not absolute http(s) URLs are their own template.
 */
export function urlTemplate(url: string): string {
  const hostStart = url.indexOf('://');
  const pathStart = hostStart < 0 ? -1 : url.indexOf('/', hostStart + 3);
  if (pathStart < 0) return url;
  const q = url.indexOf('?', pathStart);
  const path = q < 0 ? url.slice(pathStart) : url.slice(pathStart, q);
  let template = path.split('/').map(segmentTemplate).join('/');
  if (q >= 0 && q < url.length - 1) {
    const names = new Set<string>();
    for (const pair of url.slice(q + 1).split('&')) {
      if (pair === '') continue;
      const eq = pair.indexOf('=');
      names.add(eq < 0 ? pair : pair.slice(0, eq));
    }
    template += '?' + [...names].sort().join('&');
  }
  return template;
}

/** Ids of recently seen templates: a host has few templates and every new URL asks for one. */
const recentIds = new Map<string, string>();
const RECENT_IDS_KEPT = 20_000;

/** Short stored key of a template: 16 base64url characters of its SHA-1 (collisions ≈ 2^-48 per pair). */
export function templateId(template: string): string {
  let id = recentIds.get(template);
  if (id === undefined) {
    id = createHash('sha1').update(template).digest('base64url').slice(0, 16);
    if (recentIds.size >= RECENT_IDS_KEPT) recentIds.clear();
    recentIds.set(template, id);
  }
  return id;
}

/** The queue round of the n-th URL (from 0) admitted to a template. */
export function templateRound(n: number, roundSize: number): number {
  if (n < roundSize) return 0;
  return Math.min(MAX_ROUND, 1 + Math.floor(Math.log2(n / roundSize)));
}

export const MAX_ROUND = 999;

/** The URL without its query: the form seed 002's query restriction marks as visited. */
export function queryLessForm(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}

/**
 * Template ledger: per host and template, the number of new URLs admitted (durable, in the
 * partition's `queues` store under a prefix no host name or other entry starts with). Only counts
 * are stored — one short entry per template, read through the store's bounded cache — so a host
 * with millions of templates costs disk, not memory.
 */
export const TEMPLATE_PREFIX = '\u0003';
/** Seed 002's visited forms (URLs without their query), same store. */
export const QUERY_FORM_PREFIX = '\u0004';

export type Admission = { ok: true; round: number } | { ok: false; reason: 'template-budget' | 'query' };

/** What the ledger keeps per template (short names: one entry per template of every host). */
export interface TemplateEntry {
  /** new URLs admitted */
  n: number;
  /** pages of it fetched for the first time, and how many of them matched the first one's text */
  f?: number;
  d?: number;
  /** text fingerprint (hex) of its first fetched page */
  p?: string;
  /** set once it proved a trap: nothing more of it is admitted or fetched */
  t?: 1;
}

export function decodeEntry(stored: string | undefined): TemplateEntry {
  if (stored === undefined) return { n: 0 };
  if (/^[0-9]+$/.test(stored)) return { n: Number(stored) };
  try {
    const e = JSON.parse(stored) as TemplateEntry;
    return typeof e.n === 'number' ? e : { n: 0 };
  } catch {
    return { n: 0 };
  }
}

/**
 * One more first fetch of a template's page: whether it proved the template a trap (pure; the
 * ledger stores the result). `near(a, b)`: the two text fingerprints are the same content.
 */
export function afterFirstFetch(entry: TemplateEntry, fingerprint: string, rules: Pick<TemplateRules, 'trapProbePages' | 'trapDuplicateShare'>, near: (a: string, b: string) => boolean): TemplateEntry {
  if (entry.t === 1) return entry;
  const f = (entry.f ?? 0) + 1;
  const first = entry.p ?? fingerprint;
  const d = (entry.d ?? 0) + (entry.p !== undefined && near(entry.p, fingerprint) ? 1 : 0);
  const next: TemplateEntry = { ...entry, f, d, p: first };
  // The first page is the representative; the share is over the pages compared with it.
  if (rules.trapProbePages > 0 && f >= Math.max(2, rules.trapProbePages) && d >= rules.trapDuplicateShare * (f - 1)) next.t = 1;
  return next;
}

export interface TemplateRules {
  /** New URLs admitted per template at most (0: no limit). */
  readonly maxUrlsPerTemplate: number;
  /** URLs per template in queue round 0 (see templateRound). */
  readonly templateRoundSize: number;
  /** off; form: one URL per query-less form (seed 002); all: no URL with a query. */
  readonly queryRestriction: 'off' | 'form' | 'all';
  /** First fetches of a template after which it is judged (0: never). */
  readonly trapProbePages: number;
  /** Share of them with the first page's text that makes the template a trap. */
  readonly trapDuplicateShare: number;
}

export function templateKey(host: string, url: string): string {
  return `${TEMPLATE_PREFIX}${host}\u0000${templateId(urlTemplate(url))}`;
}

export class TemplateLedger {
  constructor(
    private readonly store: KeyValueStore<string>,
    private readonly rules: TemplateRules,
    /** Whether a URL is known to the partition (a query-less form that is itself a known page). */
    private readonly isKnown: (url: string) => Promise<boolean>,
  ) {}

  /**
   * Decides whether a new URL of `host` may be queued and in which round; counts it when it is.
   * Seeds (`force`) are always admitted (and counted).
   */
  async admit(host: string, url: string, force = false): Promise<Admission> {
    const restriction = this.rules.queryRestriction;
    const hasQuery = url.indexOf('?') >= 0;
    if (!force && restriction === 'all' && hasQuery) return { ok: false, reason: 'query' };
    let formKey: string | undefined;
    if (restriction === 'form' && hasQuery) {
      const form = queryLessForm(url);
      formKey = QUERY_FORM_PREFIX + form;
      if (!force && ((await this.store.get(formKey)) !== undefined || (await this.isKnown(form)))) return { ok: false, reason: 'query' };
    }
    const key = templateKey(host, url);
    return this.count(key, decodeEntry(await this.store.get(key)), force, formKey);
  }

  /**
   * admit() without a promise: NOT_IN_MEMORY, with nothing counted, when the template's entry would
   * take a read or the query restriction has to look a form up.
   */
  admitInMemory(host: string, url: string, force = false, key?: string): Admission | typeof NOT_IN_MEMORY {
    const restriction = this.rules.queryRestriction;
    const hasQuery = url.indexOf('?') >= 0;
    if (!force && restriction === 'all' && hasQuery) return { ok: false, reason: 'query' };
    if (restriction === 'form' && hasQuery) return NOT_IN_MEMORY;
    key ??= templateKey(host, url);
    const stored = this.store.peek(key);
    if (stored === NOT_IN_MEMORY) return NOT_IN_MEMORY;
    return this.count(key, decodeEntry(stored), force, undefined);
  }

  /** The admission decision for a template entry; counts the URL when it is admitted. */
  private count(key: string, entry: TemplateEntry, force: boolean, formKey: string | undefined): Admission {
    if (!force && (entry.t === 1 || (this.rules.maxUrlsPerTemplate > 0 && entry.n >= this.rules.maxUrlsPerTemplate))) return { ok: false, reason: 'template-budget' };
    this.store.put(key, JSON.stringify({ ...entry, n: entry.n + 1 }));
    if (formKey !== undefined) this.store.put(formKey, '');
    return { ok: true, round: templateRound(entry.n, this.rules.templateRoundSize) };
  }

  /** The template entry of `url`. */
  async entry(host: string, url: string): Promise<TemplateEntry> {
    return decodeEntry(await this.store.get(templateKey(host, url)));
  }

  /** A page of the template was fetched for the first time; returns true when that made the template a trap. */
  async firstFetch(host: string, url: string, fingerprint: string, near: (a: string, b: string) => boolean): Promise<boolean> {
    const key = templateKey(host, url);
    const before = decodeEntry(await this.store.get(key));
    const after = afterFirstFetch(before, fingerprint, this.rules, near);
    if (after !== before) this.store.put(key, JSON.stringify(after));
    return after.t === 1 && before.t !== 1;
  }

  /** The template of `url` proved a trap: its queued URLs are not fetched. */
  async isTrap(host: string, url: string): Promise<boolean> {
    return decodeEntry(await this.store.get(templateKey(host, url))).t === 1;
  }
}
