/**
 * Outcomes: the fetcher's answer to a request, back through `links`. It ends that request of the
 * host's requests in flight, applies robots.txt or the page's result (retries, site page counts, template verdicts,
 * validators, change tracking, a same-host redirect target marked known), and lets the politeness
 * policy decide when the host may be asked again. Duplicates and answers to re-issued requests are
 * counted and dropped.
 */
import type { ProcessorContext } from '../runtime/index.ts';
import type { OutcomeLink } from '../../schemas/index.ts';
import { boundRules, forAgent, fromJSON, rulesForFetchResult, toJSON } from './robots/index.ts';
import { countAtDepth, encodeOutLinks, outLinksKey, packMd5, queueKey, roundScore, takeInFlight } from './state.ts';
import type { HostState, UrlState } from './state.ts';
import { hammingDistance } from '../common/fingerprint.ts';
import { hostKey, siteOf } from '../common/url.ts';
import { afterOutcome, emptyPoliteness, isHostFailure, loadReport, siteCapKey } from './politeness/index.ts';
import { countRedirectOutcome, ipBelongsToHost, queueScore } from './redirects.ts';
import { failedRevisit, trackChange } from './revisits.ts';
import { keptHashes } from './change-diff.ts';
import { learnedAlias } from '../common/aliases.ts';
import { agentFor, noteScore, releaseIp, ruleFor, schedule } from './partition.ts';
import type { OutcomeHost, Partition } from './partition.ts';
import { registerSitemaps, sourceOutcome } from './sources.ts';

/** robots.txt outcomes that end a host's queue: no request to it can ever be made. */
const UNREACHABLE_HOST_CODES: ReadonlySet<string> = new Set(['MEGURI_ERR_DNS', 'MEGURI_ERR_FORBIDDEN_ADDRESS']);

/** An outcome of a request to `host` (hostKey(outcome.url), found once for the batch it came in). */
export async function onOutcome(p: Partition, outcome: OutcomeLink, host: string, ctx: ProcessorContext): Promise<void> {
  const state = (await p.hosts.get(host)) as HostState | undefined;
  const now = ctx.now();
  const inflight = state ? takeInFlight(state, outcome.requestId) : undefined;
  if (!state || !inflight) {
    // A duplicate (at-least-once fetcher) or an answer to a request already re-issued.
    if (outcome.reason !== 'robots') p.stats.duplicateFetches++;
    return;
  }
  releaseIp(p, inflight.requestId);
  // Only the address that answered for this host: a redirected robots.txt may name another host's.
  if (ipBelongsToHost(host, outcome)) state.ip = outcome.serverIp;
  p.deadlines.delete(inflight.requestId);
  if (inflight.kind === 'address') {
    // Only the name was resolved: nothing was asked of the server, so no interval runs.
    state.addressAskedAt = now;
    p.hosts.put(host, state);
    if (state.queued > 0) schedule(p, host, Math.max(now, state.nextAt));
    return;
  }
  if (inflight.kind === 'robots') {
    applyRobots(p, host, state, outcome, now);
    // The host's sitemaps become sources once robots.txt answered (sources.ts).
    if (!state.robotsParked) registerSitemaps(p, state, fromJSON(state.robots!).sitemaps, outcome.url, ctx);
    // The name does not resolve, or resolves to an address the fetcher refuses to dial: the host
    // does not exist (for us); its URLs cannot be fetched.
    if (outcome.errorCode !== undefined && UNREACHABLE_HOST_CODES.has(outcome.errorCode)) await dropQueue(p, host, state, 'error', { now, ctx });
  } else {
    const before = { L: state.politeness?.L ?? 0, overloaded: state.overload !== undefined };
    countRedirectOutcome(p.stats, outcome);
    await applyPageOutcome(p, outcome, { name: host, state }, now, ctx);
    publishLoad(p, host, state, before);
  }
  // The politeness policy decides when the host may be asked again (docs/politeness.md). Its
  // interval runs from the end of the fetch, not from this outcome's arrival: parsing and the
  // topic hops put no load on the server. Kept within [issued + server time, now], so a fetcher
  // clock that is off moves it by at most the frontier hop.
  const endedAt = Math.min(now, Math.max(outcome.fetchedAt, inflight.issuedAt + outcome.fetch.totalMs));
  const next = afterOutcome(state.politeness ?? emptyPoliteness(), outcome, endedAt, p.politeness, state.crawlDelayMs !== undefined ? { crawlDelayMs: state.crawlDelayMs } : {});
  state.politeness = next.state;
  // An operator's minimum interval for the host (--host-rules) on top of the policy's.
  const minIntervalS = ruleFor(p, host)?.minIntervalS;
  state.nextAt = minIntervalS !== undefined ? Math.max(next.nextAt, endedAt + minIntervalS * 1000) : next.nextAt;
  p.parked.track(host, state, now);
  p.hosts.put(host, state);
  if (state.queued > 0) schedule(p, host, state.robotsParked ? (state.robotsDueAt ?? state.nextAt) : state.nextAt);
}

/** The host's load report row for the Prometheus board (the incremental archive crawler paper's figures, see `meguri stats hosts`). */
function publishLoad(p: Partition, host: string, state: HostState, before: { L: number; overloaded: boolean }): void {
  const row = loadReport(host, state.politeness ?? emptyPoliteness(), p.politeness, state.crawlDelayMs !== undefined ? { crawlDelayMs: state.crawlDelayMs } : {});
  p.board.update({ ...row, overloaded: row.overloaded || state.overload !== undefined, stretch: state.overload?.factor ?? 1 }, before, { overloaded: state.overload !== undefined });
}

/**
 * Gives up every queued URL of a host, marking them with `status`. With `hostDead` (its name does
 * not resolve), known pages waiting for a revisit count one more failed revisit instead: retried
 * in a day, and reported gone once the host stayed dead `goneAfterHostFailures` times.
 */
async function dropQueue(p: Partition, host: string, state: HostState, status: 'error' | 'gone', dead?: { now: number; ctx: ProcessorContext }): Promise<void> {
  for (const { key, url } of await p.queues.all(host)) {
    p.queues.remove(host, key);
    const u = await p.urls.get(url);
    if (u && u.status === 'queued') {
      const { queueKey: _q, queuedAsRevisit: _v, ...rest } = u;
      if (dead && p.options.revisit && u.lastFetchAt !== undefined) {
        failedRevisit(p, url, rest, state, dead.now, dead.ctx);
        continue;
      }
      p.urls.put(url, { ...rest, status });
      p.stats.errors++;
    }
  }
  p.queues.clearCount(state);
}

function applyRobots(p: Partition, host: string, state: HostState, outcome: OutcomeLink, now: number): void {
  p.stats.robotsFetched++;
  const robots = outcome.robots;
  const decision = rulesForFetchResult({
    ...(robots && robots.status > 0 ? { status: robots.status } : {}),
    ...(robots?.body !== undefined ? { body: robots.body } : {}),
    ...(robots?.errorCode || outcome.errorCode ? { error: new Error(robots?.errorCode ?? outcome.errorCode) } : {}),
    nowMs: now,
    unreachableSinceMs: state.robotsUnreachableSince ?? null,
    parseOptions: { agent: agentFor(p, host) },
  });
  // The parser sent the first 500 KiB of a longer file: its rules apply, the rest was ignored.
  if (robots?.truncated === true) decision.rules.truncated = true;
  const rules = boundRules(decision.rules, agentFor(p, host));
  state.robots = toJSON(rules);
  state.robotsUnreachableSince = decision.unreachableSinceMs;
  state.robotsParked = decision.outcome === 'unreachable';
  state.robotsDueAt = now + Math.min(decision.recheckAfterMs, p.options.robotsRecheckMs);
  const agent = agentFor(p, host);
  const matcher = forAgent(rules, agent);
  state.crawlDelayMs = matcher.crawlDelay !== undefined ? Math.round(matcher.crawlDelay * 1000) : undefined;
  p.matchers.set(host, { agent, matcher });
}

async function applyPageOutcome(p: Partition, outcome: OutcomeLink, at: OutcomeHost, now: number, ctx: ProcessorContext): Promise<void> {
  const { name: host, state } = at;
  const u = await p.urls.get(outcome.url);
  const first = !u || u.lastFetchAt === undefined;
  // The server could not answer this time (429, 5xx, a timeout, a reset): a new page is asked for
  // again after the host's back-off or Retry-After, a bounded number of times, before it counts
  // as an error. Known pages need no retry: their next revisit is one.
  if (first && u && (u.retries ?? 0) < p.options.pageRetries && isHostFailure(outcome, p.politeness)) {
    const q = queueKey(host, queueScore(u.score, u.redirectChain), p.stats.seq++);
    p.queues.enqueue(host, state, q, outcome.url);
    p.urls.put(outcome.url, { ...u, status: 'queued', queueKey: q, retries: (u.retries ?? 0) + 1 });
    p.stats.pageRetries = (p.stats.pageRetries ?? 0) + 1;
    return;
  }
  p.stats.pagesFetched++;
  if (first) p.stats.uniqueUrlsFetched++;
  // A root that permanently redirects to another host: the host is an alias of it (the incremental archive crawler paper).
  const alias = outcome.result === 'redirect' ? learnedAlias(outcome.url, outcome.status, outcome.location) : undefined;
  if (alias !== undefined && state.alias !== alias) {
    state.alias = alias;
    p.stats.aliasesLearned = (p.stats.aliasesLearned ?? 0) + 1;
    ctx.logger.info({ host, canonical: alias }, 'host learned as an alias: its links move to the canonical host');
  }
  if (first && p.options.mode === 'discovery') p.stats.pagesByDepth = countAtDepth(p.stats.pagesByDepth, u?.depth ?? 0);
  // A sitemap or feed is not a page of its site: no page count, no template verdict, no change events.
  const document = u?.source === 'sitemap' || u?.source === 'feed';
  // A distinct page of its site: a new URL that got an answer from the server (Muraoka et al.'s cap).
  if (first && !document && outcome.result !== 'error') {
    await p.sites.count(siteCapKey(host, p.politeness, siteOf));
    state.distinctPages = (state.distinctPages ?? 0) + 1;
  }
  if (outcome.offLanguage) p.stats.offLanguage = (p.stats.offLanguage ?? 0) + 1;
  if (first && !document && outcome.result === 'ok' && outcome.fingerprint) {
    const threshold = p.options.changeHammingThreshold;
    if (await p.templates.firstFetch(host, outcome.url, outcome.fingerprint, (a, b) => hammingDistance(a, b) <= threshold)) {
      ctx.logger.info({ url: outcome.url }, 'URL template serves the same page under every URL and keeps producing new ones: a trap, no more of it is fetched');
    }
  }
  p.stats.bytes += outcome.fetch.bytes;
  state.fetched++;
  const failed = outcome.result === 'error' || outcome.result === 'server-error';
  if (failed) p.stats.errors++;
  const status = outcome.result === 'gone' ? 'gone' : failed ? 'error' : 'done';
  const notModified = outcome.result === 'not-modified';
  const etag = outcome.validators?.etag ?? (notModified ? u?.etag : undefined);
  const lastModified = outcome.validators?.lastModified ?? (notModified ? u?.lastModified : undefined);
  const next: UrlState = {
    status,
    depth: u?.depth ?? 0,
    cgiHops: u?.cgiHops ?? 0,
    score: noteScore(p, roundScore((u?.score ?? 0) + 1)),
    lastFetchAt: now,
    httpStatus: outcome.status,
    ...(outcome.md5 ? { md5: packMd5(outcome.md5) } : u?.md5 ? { md5: u.md5 } : {}),
    ...(outcome.fingerprint ? { fingerprint: outcome.fingerprint } : u?.fingerprint ? { fingerprint: u.fingerprint } : {}),
    ...(etag ? { etag } : {}),
    // With an ETag, If-None-Match decides and If-Modified-Since is ignored (RFC 9110 13.1.3):
    // Last-Modified is kept only for servers without ETags (fewer bytes per known URL).
    ...(!etag && lastModified ? { lastModified } : {}),
    ...(u?.estimator ? { estimator: u.estimator } : {}),
    ...(u?.startSite !== undefined ? { startSite: u.startSite } : {}),
    ...(u?.source ? { source: u.source } : {}),
    ...(u?.sitemapPriority !== undefined ? { sitemapPriority: u.sitemapPriority } : {}),
    ...keptHashes(u, outcome, p.options.revisit),
  };
  if (p.options.revisit && !document) trackChange(p, outcome, u, next, first, now, ctx, at);
  // Sources are read again on their own schedule (a daily page's overrides the estimator's).
  if (next.source) await sourceOutcome(p, outcome, next, now);
  p.urls.put(outcome.url, next);
  // VR/AR pass score on from fetched pages later: keep their out-links, compactly, beside the queues.
  if ((p.options.ordering === 'ipr-vr' || p.options.ordering === 'ipr-ar') && outcome.outLinks && outcome.outLinks.length > 0) {
    p.queueStore.put(outLinksKey(outcome.url), encodeOutLinks(outcome.outLinks, outcome.url));
  }
  // A same-host redirect target is now known too: do not fetch it again as a new URL.
  if (outcome.finalUrl && outcome.finalUrl !== outcome.url && hostKey(outcome.finalUrl) === host) {
    const target = await p.urls.get(outcome.finalUrl);
    if (!target) {
      const { estimator: _r, nextRevisitAt: _n, ...known } = next;
      p.urls.put(outcome.finalUrl, known);
      p.stats.urlsKnown++;
    } else if (target.status === 'queued' && target.queueKey) {
      p.queues.dequeue(host, state, target.queueKey);
      const { queueKey: _q, ...rest } = target;
      p.urls.put(outcome.finalUrl, { ...rest, status: 'done', lastFetchAt: now });
    }
  }
}
