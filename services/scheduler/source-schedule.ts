/**
 * When a sitemap or a feed is read again: each has a schedule of its own, apart from the page
 * revisit estimator, that starts at a default interval (a day) and adapts to what the document
 * shows, within [base / 24, base × 7].
 *
 * Feeds adapt to the rate of new items. The rate observed at a fetch is the number of items not
 * seen before over the time since the previous fetch; at the first fetch, the spread of the item
 * dates gives it ((n − 1) items over newest − oldest). Rates are smoothed (EMA, weight ½) and the
 * next interval is the time one new item takes at that rate, so a feed gaining ten items a day is
 * read about every 2.4 h and one that stopped is backed off (× 2 per fetch without new items). A
 * fetch whose items were all new may have missed some: the interval is at least halved. The
 * feed's own ttl (RSS `<ttl>`, `sy:updatePeriod`) is a floor: no reading it more often than it asks.
 *
 * Sitemaps adapt to whether they changed (body hash): halved when changed, × 1.5 when not.
 */

export interface SourceScheduleOptions {
  /** Interval of a document with nothing observed yet (first re-read). */
  baseMs: number;
  minMs: number;
  maxMs: number;
}

export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;

/** The default schedule bounds for a base interval: [base / 24, base × 7]. */
export function scheduleFor(baseMs: number): SourceScheduleOptions {
  return { baseMs, minMs: Math.max(1, Math.round(baseMs / 24)), maxMs: baseMs * 7 };
}

export interface FeedObservation {
  /** Interval that led to this fetch (undefined: first fetch). */
  previousIntervalMs?: number;
  /** Time since the previous fetch (undefined: first fetch). */
  elapsedMs?: number;
  /** Items listed now that were not listed at the previous fetch (at the first fetch: all). */
  newItems: number;
  /** Items listed now. */
  items: number;
  /** Item dates, for the first estimate. */
  newest?: number;
  oldest?: number;
  /** The feed's own refresh hint. */
  ttlMs?: number;
  /** Smoothed new-item rate so far (items per ms). */
  rate?: number;
}

export interface FeedPlan {
  intervalMs: number;
  /** Smoothed new-item rate after this fetch (items per ms); undefined while unknown. */
  rate?: number;
}

function clamp(ms: number, lo: number, hi: number): number {
  return Math.round(Math.min(hi, Math.max(lo, ms)));
}

export function nextFeedInterval(o: FeedObservation, s: SourceScheduleOptions): FeedPlan {
  const first = o.previousIntervalMs === undefined || o.elapsedMs === undefined || !(o.elapsedMs > 0);
  let observed: number | undefined;
  if (!first) observed = o.newItems / o.elapsedMs!;
  else if (o.items >= 2 && o.newest !== undefined && o.oldest !== undefined && o.newest > o.oldest) observed = (o.items - 1) / (o.newest - o.oldest);
  const rate = observed === undefined ? o.rate : o.rate === undefined ? observed : (o.rate + observed) / 2;
  const floor = Math.max(s.minMs, o.ttlMs ?? 0);
  let interval: number;
  if (rate !== undefined && rate > 0) interval = 1 / rate;
  else if (first) interval = s.baseMs;
  else interval = o.previousIntervalMs! * 2;
  // Every listed item was new: items may have scrolled off unseen.
  if (!first && o.items > 0 && o.newItems >= o.items) interval = Math.min(interval, o.previousIntervalMs! / 2);
  const plan: FeedPlan = { intervalMs: clamp(interval, Math.min(floor, s.maxMs), s.maxMs) };
  if (rate !== undefined) plan.rate = rate;
  return plan;
}

/** Next interval of a sitemap: halved when its content changed, × 1.5 when not, base at first. */
export function nextSitemapInterval(previousIntervalMs: number | undefined, changed: boolean | undefined, s: SourceScheduleOptions): number {
  if (previousIntervalMs === undefined || changed === undefined) return clamp(s.baseMs, s.minMs, s.maxMs);
  return clamp(changed ? previousIntervalMs / 2 : previousIntervalMs * 1.5, s.minMs, s.maxMs);
}

/** Which of `current` item id hashes were not in `previous`. */
export function newItemCount(previous: readonly string[] | undefined, current: readonly string[]): number {
  if (previous === undefined) return current.length;
  const seen = new Set(previous);
  let n = 0;
  for (const id of current) if (!seen.has(id)) n++;
  return n;
}

/** Sitemap `<changefreq>` as a change-interval hint, ms (always → an hour, never → 400 days). */
export function changeFreqMs(freq: string | undefined): number | undefined {
  switch (freq) {
    case 'always':
    case 'hourly':
      return HOUR_MS;
    case 'daily':
      return DAY_MS;
    case 'weekly':
      return 7 * DAY_MS;
    case 'monthly':
      return 30 * DAY_MS;
    case 'yearly':
      return 365 * DAY_MS;
    case 'never':
      return 400 * DAY_MS;
    default:
      return undefined;
  }
}
