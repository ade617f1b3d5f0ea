/**
 * Revisits (Akamine et al. and the incremental archive crawler paper): change detection on every fetch of a known page, the change-rate
 * estimator, the long-term queue keyed by next visit time, and the sweep that moves due known URLs
 * into their host's short-term queue (ordered by γ, bounded by what the host's interval allows).
 */
import type { ProcessorContext } from '../runtime/index.ts';
import { SCHEMA_VERSION } from '../../schemas/index.ts';
import type { ChangeRecord, OutcomeLink, RevisitRecord } from '../../schemas/index.ts';
import { knownQueueKey, md5Of, packMd5, packRevisit, revisitKeyBound, revisitKeyUrl, revisitOf } from './state.ts';
import type { HostState, UrlState } from './state.ts';
import { initialState as initialRevisit, update as updateRevisit, nextInterval as nextRevisitInterval, estimateInterval } from '../revisit/estimator.ts';
import { alphaFromScore, selectionProbability } from '../revisit/selection.ts';
import { hostMultiplierStep } from '../revisit/allocation.ts';
import { logUniformGrid } from '../revisit/posterior.ts';
import type { RateGrid } from '../revisit/posterior.ts';
import { contribution, movePool, pooledGrid } from '../revisit/pooled.ts';
import type { RevisitState } from '../revisit/estimator.ts';
import { hammingDistance } from '../common/fingerprint.ts';
import { hostKey } from '../common/url.ts';
import { applyRemedy, changePageInterval, emptyPoliteness, hostInterval, remedyFor } from './politeness/index.ts';
import { fileRevisit, hasRoom, hostState, saveStats, schedule } from './partition.ts';
import type { OutcomeHost, Partition } from './partition.ts';
import { changeFreqMs } from './source-schedule.ts';
import { textChange } from './change-diff.ts';

/** Fetch errors that say the host itself is unreachable, not just this page. */
const HOST_DEAD_CODES: ReadonlySet<string> = new Set(['MEGURI_ERR_DNS', 'MEGURI_ERR_CONNECT', 'MEGURI_ERR_CONNECT_TIMEOUT', 'MEGURI_ERR_FORBIDDEN_ADDRESS']);

/** Due entries one sweep moves at most. */
export const SWEEP_LIMIT = 1000;

/**
 * The sweep's floor after it read `due` (in key order) from [floor, bound): past the last entry
 * read when the limit cut the read short, else the bound itself (nothing below it is left). Entries
 * the sweep files again below the new floor lower it through fileRevisit().
 */
export function floorAfterSweep(floor: string, bound: string, due: readonly (readonly [string, unknown])[], limit: number): string {
  const next = due.length >= limit ? due[due.length - 1]![0] : bound;
  return next > floor ? next : floor;
}

/** Moves known URLs whose revisit time has come from the long-term queue into their host's queue. */
export async function sweepRevisits(p: Partition, ctx: ProcessorContext): Promise<void> {
  const now = ctx.now();
  const due: [string, string][] = [];
  const bound = revisitKeyBound(now);
  for await (const entry of p.queueStore.range({ gte: p.revisitFloor, lt: bound, limit: SWEEP_LIMIT })) due.push(entry);
  p.revisitFloor = floorAfterSweep(p.revisitFloor, bound, due, SWEEP_LIMIT);
  // One RocksDB round trip for the URLs and hosts of the whole sweep.
  const dueUrls = due.map(([key, value]) => value || revisitKeyUrl(key));
  await Promise.all([p.urls.prefetch(dueUrls), p.hosts.prefetch(new Set(dueUrls.map(hostKey)))]);
  for (const [i, [key]] of due.entries()) {
    p.queueStore.delete(key);
    const url = dueUrls[i]!;
    const u = await p.urls.get(url);
    if (!u || u.status === 'queued' || u.status === 'inflight' || u.nextRevisitAt === undefined || u.nextRevisitAt > now) continue;
    const host = hostKey(url);
    const state = await hostState(p, host, url);
    // Sources (sitemaps, feeds, daily pages) are read on their own schedule: never deferred, first in line.
    // An empty queue (state.queued counts its entries) is not read from RocksDB to be counted.
    if (u.source === undefined && state.queued > 0 && (await p.queues.knownCount(host)) >= knownCapacity(p, state)) {
      // The host's short-term queue has no room for more revisits than it can serve in the
      // window: back to the long-term queue, accepted again later (the incremental archive crawler paper: 3 days).
      const n = now + p.options.revisitDeferMs;
      p.urls.put(url, { ...u, nextRevisitAt: n });
      fileRevisit(p, n, url);
      p.stats.revisitsDeferred++;
      continue;
    }
    const q = knownQueueKey(host, u.source !== undefined ? 1 : revisitPriority(p, u, now), p.stats.seq++);
    p.queues.enqueue(host, state, q, url);
    const { nextRevisitAt: _n, ...rest } = u;
    p.urls.put(url, { ...rest, status: 'queued', queueKey: q, queuedAsRevisit: true });
    p.hosts.put(host, state);
    if (hasRoom(p, host, state)) schedule(p, host, Math.max(state.nextAt, now));
  }
  if (due.length > 0) saveStats(p);
}

/**
 * Known URLs a host's short-term queue holds at most: its share of the requests the host's
 * politeness interval allows within `shortTermWindowMs` (the incremental archive crawler paper: one day, split equally).
 */
function knownCapacity(p: Partition, state: HostState): number {
  const intervalMs = hostInterval(state.politeness ?? emptyPoliteness(), p.politeness, state.crawlDelayMs !== undefined ? { crawlDelayMs: state.crawlDelayMs } : {}).ms;
  if (!(intervalMs > 0)) return Infinity;
  return Math.max(1, Math.floor((p.options.shortTermWindowMs / intervalMs) * p.options.revisitKnownShare));
}

/**
 * Akamine et al.'s γ(p,t) = α(p) + (1 − α(p))·β(p,t) for a due known URL: α from its importance score,
 * β the chance it changed since the last fetch given its estimated change interval. Due URLs of a
 * host are taken in γ order, so when the host's share of requests is short the pages most likely
 * to have changed, or most important, go first.
 */
function revisitPriority(p: Partition, u: UrlState, now: number): number {
  const r = revisitOf(u);
  const tau = (r ? estimateInterval(r) : null) ?? (u.revisitIntervalMs ?? 86_400_000) / 1000;
  const tCrawl = (u.lastFetchAt ?? now) / 1000;
  // α relative to the most important page this partition knows, so importance spreads over [0, ½];
  // a sitemap <priority> (u.sitemapPriority, 0..1) speaks for the page's importance on the same scale.
  const alpha = alphaFromScore(u.score, { maxScore: Math.max(1, p.stats.maxScore ?? 1), alphaMax: 0.5, log: true });
  return selectionProbability(u.sitemapPriority !== undefined ? Math.max(alpha, 0.5 * u.sitemapPriority) : alpha, now / 1000, tCrawl, tau);
}

/**
 * Importance as the goal allocation's weight: w = 1/(1 − α), α the page's share of Akamine et al.'s
 * selection rule (log IPR score relative to the partition's highest, at most ½; a sitemap
 * <priority> speaks on the same scale), so pages weigh between 1 and 2.
 */
function importanceWeight(p: Partition, u: UrlState): number {
  const alpha = alphaFromScore(u.score, { maxScore: Math.max(1, p.stats.maxScore ?? 1), alphaMax: 0.5, log: true });
  const a = u.sitemapPriority !== undefined ? Math.max(alpha, 0.5 * u.sitemapPriority) : alpha;
  return 1 / (1 - Math.min(0.5, Math.max(0, a)));
}

/**
 * The per-host constraint of the goal allocation (Kolobov et al., SIGIR 2019): the host may take
 * one request per politeness interval (Crawl-delay and the adaptive interval included), of which
 * revisits get `revisitKnownShare` while other URLs wait in its queue. When the planned revisit
 * load L = Σ 1/T exceeds that, the host's multiplier rises (a dual step) so that each page's next
 * interval is the Lagrangian solution under the host's budget, not a uniform stretch; it falls back
 * towards the crawl's μ0 when the host has room. The stretch/delay remedy still covers the pages
 * planned before the multiplier caught up.
 */
function updateHostMultiplier(p: Partition, hostName: string, host: HostState, allowedMs: number): void {
  if (!(allowedMs > 0)) return;
  // New URLs take their share only while some wait (queued counts the due known URLs too); a host
  // whose queue is not in memory is taken to have some when anything is queued.
  const fresh = p.queues.cachedNewCount(hostName) ?? host.queued;
  const share = fresh > 0 ? p.options.revisitKnownShare : 1;
  const capacity = (1000 / allowedMs) * share;
  const planned = Object.values(host.politeness?.lh ?? {}).reduce((n, c) => n + c, 0);
  const k = hostMultiplierStep(p.revisitRules.goal, host.revisitFactor ?? 1, host.politeness?.L ?? 0, capacity, 1 / Math.max(1, planned));
  if (k > 1) host.revisitFactor = k;
  else delete host.revisitFactor;
}

/**
 * Empirical Bayes per host (services/revisit/pooled.ts): moves the page's evidence in its host's
 * pooled histogram from `before` to `after` (undefined: none, e.g. gone) and returns the prior the
 * page gets from its host's other pages, or undefined while the host has too few (the base prior).
 * Sources (sitemaps, feeds, daily pages) keep their own schedule and stay out of the pool.
 */
function pooledPrior(p: Partition, host: HostState, before: RevisitState | undefined, after: RevisitState | undefined): RateGrid | undefined {
  const rules = p.revisitRules;
  if (rules.allocation !== 'goal' || !rules.posterior || !rules.pooled) return undefined;
  const base = logUniformGrid(rules.priorMinS, rules.priorMaxS);
  const own = contribution(after, base);
  const pool = movePool(host.pooledRates, contribution(before, base), own);
  if (pool) host.pooledRates = pool;
  else delete host.pooledRates;
  return pooledGrid(pool, base, own);
}

/** The estimator state a URL contributes to its host's pool (none when gone or a source). */
function pooledState(u: UrlState | undefined): RevisitState | undefined {
  return u && u.status !== 'gone' && u.source === undefined ? revisitOf(u) : undefined;
}

/** A known page's revisit found its host dead before any request: count it, retry, or give the page up. */
export function failedRevisit(p: Partition, url: string, u: UrlState, host: HostState, now: number, ctx: ProcessorContext): void {
  const failures = (u.unreachableRevisits ?? 0) + 1;
  p.stats.revisits++;
  const gone = failures >= p.options.goneAfterHostFailures;
  let next: UrlState;
  if (gone) {
    const { revisitIntervalMs: _w, nextRevisitAt: _n, ...rest } = u;
    next = { ...rest, status: 'gone', unreachableRevisits: failures };
    host.politeness = changePageInterval(host.politeness ?? emptyPoliteness(), u.revisitIntervalMs, undefined);
    pooledPrior(p, host, pooledState(u), undefined);
    const change: ChangeRecord = { v: SCHEMA_VERSION, url, time: now, kind: 'gone' };
    ctx.emit('changes', url, change);
  } else {
    const n = now + 86_400_000;
    next = { ...u, status: 'done', unreachableRevisits: failures, nextRevisitAt: n };
    fileRevisit(p, n, url);
  }
  p.urls.put(url, next);
  const r = revisitOf(u);
  const estimate = r ? estimateInterval(r) : null;
  const event: RevisitRecord = {
    v: SCHEMA_VERSION,
    url,
    time: now,
    result: gone ? 'gone' : 'error',
    estimatedChangeIntervalS: estimate === null ? null : Math.round(estimate),
    nextVisitAt: next.nextRevisitAt ?? now,
  };
  ctx.emit('revisits', url, event);
}

/**
 * Change detection and the revisit loop (Akamine et al. and the incremental archive crawler paper): decides new / changed / unchanged /
 * gone, feeds the change-rate estimator, files the URL in the long-term queue at its next visit,
 * and reports `revisits` and `changes` events. A different MD5 whose text fingerprint is within
 * the Hamming threshold is a boilerplate-only change (ads, dates, menus): not a content change.
 */
export function trackChange(p: Partition, outcome: OutcomeLink, previous: UrlState | undefined, next: UrlState, first: boolean, now: number, ctx: ProcessorContext, at: OutcomeHost): void {
  const host = at.state;
  const nowS = now / 1000;
  let result: RevisitRecord['result'];
  if (outcome.result === 'gone') result = 'gone';
  else if (outcome.result === 'error' || outcome.result === 'server-error' || outcome.result === 'client-error') result = 'error';
  else if (outcome.result === 'not-modified') result = 'unchanged';
  else if (!outcome.md5 || outcome.md5 === md5Of(previous)) result = 'unchanged';
  else if (outcome.fingerprint && previous?.fingerprint && hammingDistance(outcome.fingerprint, previous.fingerprint) <= p.options.changeHammingThreshold) result = 'unchanged';
  else result = 'changed';
  // A host that stays unreachable across revisits (its name gone, its server refusing or silent)
  // is dead, and so are its pages (the incremental archive crawler paper: servers and domains die).
  if (!first && result === 'error' && outcome.errorCode !== undefined && HOST_DEAD_CODES.has(outcome.errorCode)) {
    const failures = (previous?.unreachableRevisits ?? 0) + 1;
    if (failures >= p.options.goneAfterHostFailures) {
      result = 'gone';
      next.status = 'gone';
    }
    next.unreachableRevisits = failures;
  }

  const pointer = outcome.page;
  const change = (kind: ChangeRecord['kind']): void => {
    const record: ChangeRecord = {
      v: SCHEMA_VERSION,
      url: outcome.url,
      time: now,
      kind,
      ...(outcome.title ? { title: outcome.title } : {}),
      ...(next.md5 ? { md5: md5Of(next)! } : {}),
      ...(next.fingerprint ? { fingerprint: next.fingerprint } : {}),
      ...(pointer && kind !== 'gone' ? { page: pointer } : {}),
      ...(outcome.lang && kind !== 'gone' ? { lang: outcome.lang } : {}),
      ...textChange(outcome, previous, next, kind),
    };
    ctx.emit('changes', outcome.url, record);
  };

  if (first) {
    if (outcome.result === 'ok') change('new');
    // τ of a page without history: its Last-Modified, else the date a sitemap or feed gave it,
    // else its sitemap <changefreq> (as if it last changed that long ago).
    const header = outcome.validators?.lastModified ? Date.parse(outcome.validators.lastModified) / 1000 : undefined;
    const freqMs = changeFreqMs(previous?.changeFreq);
    const lastModified =
      header !== undefined && Number.isFinite(header) ? header : previous?.listedModifiedAt !== undefined ? previous.listedModifiedAt / 1000 : freqMs !== undefined ? nowS - freqMs / 1000 : undefined;
    next.estimator = packRevisit(initialRevisit(nowS, lastModified));
  } else {
    p.stats.revisits++;
    if (result === 'changed') {
      p.stats.changed++;
      change('changed');
    } else if (result === 'gone' && previous?.status !== 'gone') change('gone');
    const known = revisitOf(next);
    if (result !== 'error' && known) next.estimator = packRevisit(updateRevisit(known, { at: nowS, changed: result === 'changed' }));
  }
  if (result === 'unchanged' && !first && previous?.md5 && outcome.md5 && md5Of(previous) !== outcome.md5) next.md5 = packMd5(outcome.md5);

  // Next visit: the estimator's interval; a failed fetch is retried in a day; a gone page is not revisited.
  let nextVisitAt: number | undefined;
  let intervalMs: number | undefined;
  const revisit = revisitOf(next);
  const prior = pooledPrior(p, host, pooledState(previous), result === 'gone' ? undefined : pooledState(next));
  if (result !== 'gone' && revisit) {
    const ctxAlloc = { weight: importanceWeight(p, next), multiplier: host.revisitFactor ?? 1, ...(prior ? { prior } : {}) };
    const intervalS = result === 'error' ? 86_400 : nextRevisitInterval(revisit, Math.random, p.revisitRules, ctxAlloc).interval;
    intervalMs = Math.round(intervalS * 1000);
    next.revisitIntervalMs = intervalMs;
  } else delete next.revisitIntervalMs;
  // The incremental archive crawler paper's server load index L_i = Σ 1/T_ij, kept incrementally as page intervals change.
  if (previous?.revisitIntervalMs !== intervalMs) host.politeness = changePageInterval(host.politeness ?? emptyPoliteness(), previous?.revisitIntervalMs, intervalMs);
  if (intervalMs !== undefined) {
    // An overloaded host (1/L_i below its politeness interval) gets its intervals stretched or
    // delayed until the schedule fits (the incremental archive crawler paper's remedies).
    const allowedMs = hostInterval(host.politeness ?? emptyPoliteness(), p.politeness, host.crawlDelayMs !== undefined ? { crawlDelayMs: host.crawlDelayMs } : {}).ms;
    const remedy = remedyFor(host.politeness ?? emptyPoliteness(), allowedMs, p.options.overloadRemedy);
    if (p.revisitRules.allocation === 'goal') updateHostMultiplier(p, at.name, host, allowedMs);
    if (remedy.overloaded) {
      p.stats.overloadedRevisits++;
      host.overload = { allowedIntervalMs: allowedMs, remedy: remedy.remedy, factor: remedy.factor, delayMs: remedy.delayMs };
    } else delete host.overload;
    nextVisitAt = now + (result === 'error' ? intervalMs : applyRemedy(intervalMs, remedy));
    next.nextRevisitAt = nextVisitAt;
    // The key holds the URL; the value stays empty (one copy of the URL fewer per known page).
    fileRevisit(p, nextVisitAt, outcome.url);
  }
  if (!first) {
    const estimate = revisit ? estimateInterval(revisit) : null;
    const event: RevisitRecord = {
      v: SCHEMA_VERSION,
      url: outcome.url,
      time: now,
      result,
      ...(previous?.md5 ? { previousHash: md5Of(previous)! } : {}),
      ...(outcome.md5 ? { newHash: outcome.md5 } : {}),
      estimatedChangeIntervalS: estimate === null ? null : Math.round(estimate),
      nextVisitAt: nextVisitAt ?? now,
    };
    ctx.emit('revisits', outcome.url, event);
  }
}
