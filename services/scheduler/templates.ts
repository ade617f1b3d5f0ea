/**
 * URL templates (the incremental archive crawler paper's remedy for hosts that generate URLs): URLs of one host that differ only
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
 * A template is a trap only on evidence of both halves of one (the incremental archive crawler
 * paper's remedy, with the evidence a small site cannot give): its pages are the same page — once
 * `trapProbePages` pages of it were fetched, at least `trapDuplicateShare` of them carry the main
 * text of its first (text fingerprints within the Hamming threshold: a session id, a random token
 * or a tracking path in the URL, and the same page behind it) — and it keeps producing new URLs:
 * at least `trapNewUrls` new URLs of it were found after its first page was fetched (admitted or
 * over its budget), the growth a trap shows with every page it serves (fresh ids, deeper paths,
 * new parameter values) and a real site's listed pages do not (12 articles linked from a home page
 * all arrive before the first is fetched, however alike their text). Then no further URL of it is admitted or fetched; the URLs
 * skipped are counted per host. Templates of distinct pages (products, articles, days) keep their
 * budget.
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

/** The URL without its query: the form Hoshino et al.'s query restriction marks as visited. */
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
/** Hoshino et al.'s visited forms (URLs without their query), same store. */
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
  /** new URLs of it found since its first page was fetched, admitted or over the budget (counted up to trapNewUrls) */
  g?: number;
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

/** The two halves of a trap's evidence in a template entry (pure). */
export interface TrapEvidence {
  /** pages of it fetched, and the share of those after the first that carry the first's main text */
  readonly fetched: number;
  readonly duplicateShare: number;
  /** URLs of it admitted since its first page was fetched */
  readonly newUrls: number;
  /** both halves hold: its pages are one page, and it keeps producing URLs */
  readonly trap: boolean;
}

export type TrapRules = Pick<TemplateRules, 'trapProbePages' | 'trapDuplicateShare' | 'trapNewUrls'>;

export function trapEvidence(entry: TemplateEntry, rules: TrapRules): TrapEvidence {
  const fetched = entry.f ?? 0;
  const duplicateShare = fetched > 1 ? (entry.d ?? 0) / (fetched - 1) : 0;
  const newUrls = entry.g ?? 0;
  const duplicates = rules.trapProbePages > 0 && fetched >= Math.max(2, rules.trapProbePages) && duplicateShare >= rules.trapDuplicateShare;
  return { fetched, duplicateShare, newUrls, trap: duplicates && newUrls >= rules.trapNewUrls };
}

/**
 * A new URL of the template was found: the entry to store when it is admitted (`admitted`), or when
 * it is refused but still counts as growth (over the budget, not yet judged, growth below
 * trapNewUrls); undefined when a refusal changes nothing (pure).
 */
export function afterNewUrl(entry: TemplateEntry, admitted: boolean, rules: Pick<TemplateRules, 'trapNewUrls'>): TemplateEntry | undefined {
  const grows = entry.g !== undefined && entry.t !== 1 && (admitted || entry.g < rules.trapNewUrls);
  if (!admitted && !grows) return undefined;
  return { ...entry, ...(admitted ? { n: entry.n + 1 } : {}), ...(grows ? { g: (entry.g ?? 0) + 1 } : {}) };
}

/**
 * One more first fetch of a template's page: whether it proved the template a trap (pure; the
 * ledger stores the result). `near(a, b)`: the two text fingerprints are the same content.
 */
export function afterFirstFetch(entry: TemplateEntry, fingerprint: string, rules: TrapRules, near: (a: string, b: string) => boolean): TemplateEntry {
  if (entry.t === 1) return entry;
  const f = (entry.f ?? 0) + 1;
  const first = entry.p ?? fingerprint;
  const d = (entry.d ?? 0) + (entry.p !== undefined && near(entry.p, fingerprint) ? 1 : 0);
  // The growth is counted from the first fetch on.
  const next: TemplateEntry = { ...entry, f, d, p: first, g: entry.g ?? 0 };
  // The first page is the representative; the share is over the pages compared with it.
  if (trapEvidence(next, rules).trap) next.t = 1;
  return next;
}

export interface TemplateRules {
  /** New URLs admitted per template at most (0: no limit). */
  readonly maxUrlsPerTemplate: number;
  /** URLs per template in queue round 0 (see templateRound). */
  readonly templateRoundSize: number;
  /** off; form: one URL per query-less form (Hoshino et al.); all: no URL with a query. */
  readonly queryRestriction: 'off' | 'form' | 'all';
  /** First fetches of a template after which it is judged (0: never). */
  readonly trapProbePages: number;
  /** Share of them with the first page's text that makes the template a trap. */
  readonly trapDuplicateShare: number;
  /** URLs of the template admitted after its first page was fetched, at least, for it to be a trap. */
  readonly trapNewUrls: number;
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
   * Seeds (`force`) are always admitted (and counted). `traps` false (a host rule's
   * `judgeTraps: false`): a template judged a trap is admitted like any other, within its budget.
   */
  async admit(host: string, url: string, force = false, traps = true): Promise<Admission> {
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
    return this.count(key, decodeEntry(await this.store.get(key)), force, formKey, traps);
  }

  /**
   * admit() without a promise: NOT_IN_MEMORY, with nothing counted, when the template's entry would
   * take a read or the query restriction has to look a form up.
   */
  admitInMemory(host: string, url: string, force = false, key?: string, traps = true): Admission | typeof NOT_IN_MEMORY {
    const restriction = this.rules.queryRestriction;
    const hasQuery = url.indexOf('?') >= 0;
    if (!force && restriction === 'all' && hasQuery) return { ok: false, reason: 'query' };
    if (restriction === 'form' && hasQuery) return NOT_IN_MEMORY;
    key ??= templateKey(host, url);
    const stored = this.store.peek(key);
    if (stored === NOT_IN_MEMORY) return NOT_IN_MEMORY;
    return this.count(key, decodeEntry(stored), force, undefined, traps);
  }

  /** The admission decision for a template entry; counts the URL when it is admitted. */
  private count(key: string, entry: TemplateEntry, force: boolean, formKey: string | undefined, traps: boolean): Admission {
    const refused = !force && ((traps && entry.t === 1) || (this.rules.maxUrlsPerTemplate > 0 && entry.n >= this.rules.maxUrlsPerTemplate));
    const next = afterNewUrl(entry, !refused, this.rules);
    if (next !== undefined) this.store.put(key, JSON.stringify(next));
    if (refused) return { ok: false, reason: 'template-budget' };
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
