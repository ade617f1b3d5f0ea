/**
 * URL templates (seed 004's remedy for hosts that generate URLs): URLs of one host that differ only
 * in parameter values, or in numeric or id-like path segments, share a template. A spider trap —
 * fresh session ids, endless calendars, a random token in every link — is one or a few templates
 * with an unbounded supply of URLs, so a budget per template bounds it while the host's other pages
 * are crawled as usual.
 *
 * The template of a normalised URL (host excluded, the scheduler keys it by host):
 *   - each path segment: a UUID, or a token of 8+ letters and digits with at least one digit (hex
 *     ids, hashes, session tokens), or of 24+ such characters, becomes `{id}`; otherwise every run
 *     of digits becomes `#` (`/p/12.html` → `/p/#.html`, `/2024/05/` → `/#/#/`); path parameters
 *     keep their names only (`;jsessionid=X` → `;jsessionid`);
 *   - the query keeps its parameter names, sorted and without duplicates (`?b=2&a=1&a=3` → `?a&b`).
 *
 * Queue order inside a host: the n-th URL admitted to a template (n from 0) is queued in round
 * 0 while n < roundSize, then in round 1 + ⌊log2(n / roundSize)⌋. A host's queue is taken round by
 * round (by score within a round), so the first `roundSize` URLs of every template come before a
 * big template's later URLs: one template with ten thousand URLs cannot keep a host's other pages
 * waiting, whatever their scores.
 */
import { createHash } from 'node:crypto';
import type { KeyValueStore } from '../runtime/index.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TOKEN = /^[A-Za-z0-9_-]+$/;
const HAS_DIGIT = /[0-9]/;
const DIGITS = /[0-9]+/g;

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
  if (UUID.test(stem)) return '{id}' + ext;
  if (TOKEN.test(stem) && ((stem.length >= 8 && HAS_DIGIT.test(stem) && /[A-Za-z]/.test(stem)) || stem.length >= 24)) return '{id}' + ext;
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

/** Short stored key of a template: 16 base64url characters of its SHA-1 (collisions ≈ 2^-48 per pair). */
export function templateId(template: string): string {
  return createHash('sha1').update(template).digest('base64url').slice(0, 16);
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

export interface TemplateRules {
  /** New URLs admitted per template at most (0: no limit). */
  readonly maxUrlsPerTemplate: number;
  /** URLs per template in queue round 0 (see templateRound). */
  readonly templateRoundSize: number;
  /** off; form: one URL per query-less form (seed 002); all: no URL with a query. */
  readonly queryRestriction: 'off' | 'form' | 'all';
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
    const n = Number((await this.store.get(key)) ?? 0);
    if (!force && this.rules.maxUrlsPerTemplate > 0 && n >= this.rules.maxUrlsPerTemplate) return { ok: false, reason: 'template-budget' };
    this.store.put(key, String(n + 1));
    if (formKey !== undefined) this.store.put(formKey, '');
    return { ok: true, round: templateRound(n, this.rules.templateRoundSize) };
  }

  /** URLs admitted to the template of `url` so far. */
  async admitted(host: string, url: string): Promise<number> {
    return Number((await this.store.get(templateKey(host, url))) ?? 0);
  }
}
