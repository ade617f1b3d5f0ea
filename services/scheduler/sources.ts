/**
 * Sources: URLs the crawl re-reads on a schedule of their own rather than the revisit
 * estimator's — sitemaps (robots.txt `Sitemap:` lines, else /sitemap.xml; children of sitemap
 * indexes), feeds (--feeds-file, and feeds pages announce) and daily pages (--daily-file, seed
 * 001's news/QA crawler). A source is a URL state with `k` set; it is fetched with reason
 * `sitemap` / `feed` (a daily page as a page, flagged `daily`), goes first in its host's queues,
 * and is filed in the long-term queue at its next read time:
 *   sitemap  nextSitemapInterval (halved on change, × 1.5 when not), base --sitemap-interval;
 *   feed     nextFeedInterval (rate of new items), base --feed-interval;
 *   daily    every --daily-interval, whatever the estimator says (the page's changes are still
 *            tracked and reported like any page's).
 * What a sitemap or feed lists arrives as discovered links (via=sitemap/feed, see the parser);
 * the hints they carry are applied here: `lastmod` newer than a known URL's last fetch brings its
 * revisit forward to now, `priority` becomes the URL's α hint (revisit selection γ).
 *
 * Per-source memory (last interval, smoothed item rate, item id hashes, body hash) lives in the
 * queues store under SOURCE_PREFIX, beside the host queues.
 */
import type { ProcessorContext } from '../runtime/index.ts';
import { SCHEMA_VERSION } from '../../schemas/index.ts';
import type { DiscoveredLink, OutcomeLink, SourceKind } from '../../schemas/index.ts';
import { revisitKey } from './state.ts';
import type { HostState, UrlState } from './state.ts';
import { hostKey } from '../common/url.ts';
import { newItemCount, nextFeedInterval, nextSitemapInterval, scheduleFor } from './source-schedule.ts';
import type { Partition } from './partition.ts';
import { fileRevisit } from './partition.ts';

/** Source memory in the queues store: a prefix no host name, queue or index key starts with. */
export const SOURCE_PREFIX = '\u0010';

interface SourceMemory {
  /** interval chosen at the last read, ms */
  i?: number;
  /** time of the last read, ms */
  t?: number;
  /** smoothed new-item rate, items per ms (feeds) */
  r?: number;
  /** item id hashes of the last read, concatenated (feeds) */
  ids?: string;
  /** body MD5 of the last read (sitemaps) */
  h?: string;
}

export interface LinkHints {
  via?: DiscoveredLink['via'];
  lastmod?: number;
  priority?: number;
  changefreq?: DiscoveredLink['changefreq'];
}

export function hintsOf(link: DiscoveredLink): LinkHints | undefined {
  if (link.via === undefined && link.lastmod === undefined && link.priority === undefined && link.changefreq === undefined) return undefined;
  const h: LinkHints = {};
  if (link.via !== undefined) h.via = link.via;
  if (link.lastmod !== undefined) h.lastmod = link.lastmod;
  if (link.priority !== undefined) h.priority = link.priority;
  if (link.changefreq !== undefined) h.changefreq = link.changefreq;
  return h;
}

/** Feed items and links new on daily pages are fetched before the rest of their host's queue. */
export function isUrgent(source: SourceKind | undefined, hints: LinkHints | undefined): boolean {
  return source !== undefined || hints?.via === 'feed' || hints?.via === 'daily';
}

/** Counts a new URL by how it was found (stats crawl). */
export function countDiscovery(p: Partition, hints: LinkHints | undefined): void {
  const via = hints?.via;
  if (via === 'sitemap') p.stats.sitemapUrls = (p.stats.sitemapUrls ?? 0) + 1;
  else if (via === 'feed') p.stats.feedItemsNew = (p.stats.feedItemsNew ?? 0) + 1;
  else if (via === 'daily') p.stats.dailyNewLinks = (p.stats.dailyNewLinks ?? 0) + 1;
}

/** Moves a known URL's next visit to `at` (it must not be queued or in flight). */
function revisitAt(p: Partition, url: string, u: UrlState, at: number): void {
  if (u.nextRevisitAt !== undefined) p.queueStore.delete(revisitKey(u.nextRevisitAt, url));
  p.urls.put(url, { ...u, nextRevisitAt: at });
  fileRevisit(p, at, url);
}

/**
 * A known URL is (now also) a source: from now on it is read on the source's schedule, starting
 * with a read as soon as its host allows.
 */
export function adoptSource(p: Partition, url: string, known: UrlState, kind: SourceKind, now: number): UrlState {
  if (known.source === kind) return known;
  const next: UrlState = { ...known, source: kind };
  if (known.status === 'queued' || known.status === 'inflight') p.urls.put(url, next);
  else revisitAt(p, url, next, now);
  return next;
}

/**
 * A sitemap or feed listed a URL that is already known: a `lastmod` after its last fetch means it
 * changed, so its revisit comes forward to now; a sitemap `priority` becomes its α hint.
 */
export function applyHints(p: Partition, url: string, known: UrlState, hints: LinkHints, now: number): UrlState {
  let next = known;
  if (hints.priority !== undefined && known.sitemapPriority !== hints.priority) next = { ...next, sitemapPriority: hints.priority };
  const fetchedAt = known.lastFetchAt;
  const changed = hints.lastmod !== undefined && fetchedAt !== undefined && hints.lastmod > fetchedAt;
  if (changed && (known.status === 'done' || known.status === 'error') && !(known.nextRevisitAt !== undefined && known.nextRevisitAt <= now)) {
    revisitAt(p, url, next, now);
    p.stats.lastmodRevisits = (p.stats.lastmodRevisits ?? 0) + 1;
    return { ...next, nextRevisitAt: now };
  }
  if (next !== known) p.urls.put(url, next);
  return next;
}

/** The fields a new URL found through a sitemap or feed keeps until its first fetch. */
export function hintFields(hints: LinkHints | undefined): Pick<UrlState, 'sitemapPriority' | 'listedModifiedAt' | 'changeFreq'> {
  if (hints === undefined) return {};
  return {
    ...(hints.priority !== undefined ? { sitemapPriority: hints.priority } : {}),
    ...(hints.lastmod !== undefined ? { listedModifiedAt: hints.lastmod } : {}),
    ...(hints.changefreq !== undefined ? { changeFreq: hints.changefreq } : {}),
  };
}

/**
 * robots.txt was read: the host's sitemaps (its `Sitemap:` lines, else /sitemap.xml) become
 * sources, once per host. Sent as links to whichever partition owns each sitemap's host.
 */
export function registerSitemaps(p: Partition, state: HostState, listed: readonly string[], robotsUrl: string, ctx: ProcessorContext): void {
  if (!p.options.sitemaps || state.sitemapsKnown) return;
  state.sitemapsKnown = true;
  const origin = new URL(robotsUrl).origin;
  const urls: string[] = [];
  for (const raw of listed) {
    try {
      const u = new URL(raw, origin);
      if ((u.protocol === 'http:' || u.protocol === 'https:') && !urls.includes(u.href)) urls.push(u.href);
    } catch {
      /* not a URL: ignored like any bad robots.txt line */
    }
    if (urls.length >= 50) break;
  }
  if (urls.length === 0) urls.push(`${origin}/sitemap.xml`);
  const now = ctx.now();
  for (const url of urls) {
    const link: DiscoveredLink = { v: SCHEMA_VERSION, type: 'link', url, source: robotsUrl, depth: 0, cgiHops: 0, contribution: 0, sameSite: true, foundAt: now, kind: 'sitemap' };
    ctx.emit('links', hostKey(url), link);
  }
  p.stats.sitemapsRegistered = (p.stats.sitemapsRegistered ?? 0) + urls.length;
}

async function memoryOf(p: Partition, url: string): Promise<SourceMemory> {
  const raw = await p.queueStore.get(SOURCE_PREFIX + url);
  if (raw === undefined) return {};
  try {
    return JSON.parse(raw) as SourceMemory;
  } catch {
    return {};
  }
}

/**
 * The outcome of a source's read: count it, adapt its schedule and file its next read. `next` is
 * the URL state being written for it (its `nextRevisitAt` is set here).
 */
export async function sourceOutcome(p: Partition, outcome: OutcomeLink, next: UrlState, now: number): Promise<void> {
  const kind = next.source;
  if (kind === undefined) return;
  const url = outcome.url;
  const failed = outcome.result === 'error' || outcome.result === 'server-error' || outcome.result === 'client-error';
  if (kind === 'daily') {
    p.stats.dailyFetched = (p.stats.dailyFetched ?? 0) + 1;
    if (outcome.result === 'gone') return;
    fileNext(p, url, next, now + p.options.dailyIntervalMs);
    return;
  }
  const memory = await memoryOf(p, url);
  const doc = outcome.document;
  if (kind === 'sitemap') {
    p.stats.sitemapsFetched = (p.stats.sitemapsFetched ?? 0) + 1;
    if (failed) p.stats.sitemapErrors = (p.stats.sitemapErrors ?? 0) + 1;
  } else {
    p.stats.feedsFetched = (p.stats.feedsFetched ?? 0) + 1;
    if (failed) p.stats.feedErrors = (p.stats.feedErrors ?? 0) + 1;
  }
  // A sitemap or feed that is gone (404/410) is dropped; one that failed is read again after a day.
  if (outcome.result === 'gone') {
    p.queueStore.delete(SOURCE_PREFIX + url);
    return;
  }
  const schedule = scheduleFor(kind === 'feed' ? p.options.feedIntervalMs : p.options.sitemapIntervalMs);
  let interval: number;
  const elapsed = memory.t !== undefined ? now - memory.t : undefined;
  if (failed) interval = schedule.baseMs;
  else if (kind === 'sitemap') {
    const changed = outcome.result === 'not-modified' ? false : memory.h === undefined || outcome.md5 === undefined ? undefined : memory.h !== outcome.md5;
    interval = nextSitemapInterval(memory.i, changed, schedule);
    if (outcome.md5 !== undefined) memory.h = outcome.md5;
  } else {
    const ids = doc?.itemIds ?? [];
    const previous = memory.ids === undefined ? undefined : (memory.ids.match(/.{8}/g) ?? []);
    const unchanged = outcome.result === 'not-modified';
    const plan = nextFeedInterval(
      {
        ...(memory.i !== undefined ? { previousIntervalMs: memory.i } : {}),
        ...(elapsed !== undefined ? { elapsedMs: elapsed } : {}),
        newItems: unchanged ? 0 : newItemCount(previous, ids),
        items: unchanged ? (previous?.length ?? 0) : ids.length,
        ...(doc?.newest !== undefined ? { newest: doc.newest } : {}),
        ...(doc?.oldest !== undefined ? { oldest: doc.oldest } : {}),
        ...(doc?.ttlMs !== undefined ? { ttlMs: doc.ttlMs } : {}),
        ...(memory.r !== undefined ? { rate: memory.r } : {}),
      },
      schedule,
    );
    interval = plan.intervalMs;
    if (plan.rate !== undefined) memory.r = plan.rate;
    if (!unchanged) memory.ids = ids.join('');
  }
  memory.i = interval;
  memory.t = now;
  p.queueStore.put(SOURCE_PREFIX + url, JSON.stringify(memory));
  fileNext(p, url, next, now + interval);
}

function fileNext(p: Partition, url: string, next: UrlState, at: number): void {
  if (next.nextRevisitAt !== undefined && next.nextRevisitAt !== at) p.queueStore.delete(revisitKey(next.nextRevisitAt, url));
  next.nextRevisitAt = at;
  fileRevisit(p, at, url);
}
