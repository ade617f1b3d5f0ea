/**
 * Discovery: seeds and links arriving on `links` become queued URLs, or add score to URLs already
 * known (incremental PageRank and its VR/AR cut-offs, Yamada et al.). The trap bounds — depth, CGI hops,
 * redirect hops, the site's page cap, URL template budgets and the query restriction — are applied
 * here, before anything is queued.
 */
import type { ProcessorContext } from '../runtime/index.ts';
import { NOT_IN_MEMORY } from '../runtime/index.ts';
import { SCHEMA_VERSION } from '../../schemas/index.ts';
import type { UnbundledLinksRecord, DiscoveredLink, SeedLink, RedirectHop, ServerRecord, SourceKind } from '../../schemas/index.ts';
import { SCOPE_PREFIX, SERVER_PREFIX, countAtDepth, blcTieBreak, decodeOutLinks, outLinksKey, queueKey, roundScore } from './state.ts';
import type { HostState, PartitionStats, UrlState } from './state.ts';
import { canonicalUrl, moveToOrigin } from '../common/aliases.ts';
import { hostKey, siteOf, stripUrlParams } from '../common/url.ts';
import { packLinks } from '../common/link-bundles.ts';
import { REDIRECT_QUEUE_BOOST, pastHopLimit, queueScore } from './redirects.ts';
import { hasRoom, hostState, hostStateInMemory, noteScore, ruleFor, schedule, siteUnderCap, siteUnderCapInMemory } from './partition.ts';
import { hostName, passesFilter, scopeEntry } from './scope.ts';
import { classify, sampled, serverRoot } from '../common/discovery.ts';
import type { Partition } from './partition.ts';
import { adoptSource, applyHints, countDiscovery, hintFields, hintsOf, isUrgent } from './sources.ts';
import type { LinkHints } from './sources.ts';

/** Removes the configured session/tracking parameters from a seed's or link's URL, in place. */
export function stripTrackingParams(p: Partition, v: UnbundledLinksRecord): void {
  if (v.type !== 'outcome') v.url = stripUrlParams(v.url, p.stripFilter);
}

/** Header of a record moved to its canonical host: it is never moved again (no alias ping-pong). */
const ALIAS_HOP_HEADER = 'meguri-alias-hop';

/**
 * A seed or link on an alias host (the alias file, or a learned alias of the host) goes to its
 * canonical host's partition instead; true when it was forwarded. Scope-only seed copies stay (they
 * are meant for this partition), with their URL on the canonical host.
 */
export async function forwardToCanonical(p: Partition, v: UnbundledLinksRecord, host: string, headers: Readonly<Record<string, string>>, ctx: ProcessorContext): Promise<boolean> {
  const forwarded = forwardToCanonicalInMemory(p, v, host, headers, ctx);
  if (forwarded !== undefined || v.type === 'outcome') return forwarded ?? false;
  return forwardTo(p, v, learnedOrigin(v.url, await p.hosts.get(host)), ctx);
}

/**
 * forwardToCanonical without a promise; undefined when it needs the host's state from RocksDB.
 * `host` is the host key of the record's URL.
 */
export function forwardToCanonicalInMemory(p: Partition, v: UnbundledLinksRecord, host: string, headers: Readonly<Record<string, string>>, ctx: ProcessorContext): boolean | undefined {
  if (v.type === 'outcome' || headers[ALIAS_HOP_HEADER] !== undefined) return false;
  const url = canonicalUrl(v.url, p.aliases);
  if (url !== v.url) return forwardTo(p, v, url, ctx);
  const state = p.hosts.peek(host);
  return state === NOT_IN_MEMORY ? undefined : forwardTo(p, v, learnedOrigin(v.url, state), ctx);
}

/** `url` on the origin its host is a learned alias of (the host state's `al`), or `url` itself. */
function learnedOrigin(url: string, state: HostState | PartitionStats | undefined): string {
  const learned = (state as HostState | undefined)?.alias;
  return learned === undefined ? url : moveToOrigin(url, learned);
}

function forwardTo(p: Partition, v: SeedLink | DiscoveredLink, url: string, ctx: ProcessorContext): boolean {
  if (url === v.url || (v.type === 'seed' && v.scopeOnly)) return false;
  ctx.emit('links', hostKey(url), { ...v, url }, { headers: { [ALIAS_HOP_HEADER]: '1' } });
  p.stats.aliasForwarded = (p.stats.aliasForwarded ?? 0) + 1;
  return true;
}

export async function onSeed(p: Partition, seed: SeedLink, ctx: ProcessorContext): Promise<void> {
  // Every seed extends a host/domain scope, on every partition (the CLI sends each partition a
  // scope-only copy); only the partition owning the seed's host queues it.
  const host = hostKey(seed.scopeOnly ? canonicalUrl(seed.url, p.aliases) : seed.url);
  if (p.scope.add(host)) p.queueStore.put(SCOPE_PREFIX + scopeEntry(p.scope.mode, host)!, '');
  if (seed.scopeOnly) return;
  // Discovery mode: every seed is a start site of its own.
  await discover(p, seed.url, 0, 0, 1, ctx, { seed: true, ...(p.options.mode === 'discovery' ? { startSite: hostName(host) } : {}), ...(seed.kind ? { source: seed.kind } : {}) });
}

/**
 * Discovery mode (Hoshino et al.): an external link reports its host as a server (once) and is not
 * fetched; an internal one is followed within the depth limit if it is in the sample.
 */
async function onDiscoveryLink(p: Partition, link: DiscoveredLink, ctx: ProcessorContext): Promise<void> {
  const start = link.startSite ?? hostName(hostKey(link.source));
  const host = hostKey(link.url);
  if (classify(start, host) === 'external') {
    await recordServer(p, link, start, ctx);
    return;
  }
  if (!passesFilter(link.url, p.urlFilter)) {
    if (!(await p.urls.get(link.url))) p.stats.outOfScopeSkipped++;
    return;
  }
  if (link.depth > p.options.maxDepth) {
    if (!(await p.urls.get(link.url))) p.stats.depthSkipped++;
    return;
  }
  if (link.redirect && pastHopLimit(link.redirect)) {
    p.stats.redirectLimitReached = (p.stats.redirectLimitReached ?? 0) + 1;
    return;
  }
  if (!sampled(link.url, start, p.options.sampleRate, p.options.sampleSeed)) {
    if (!(await p.urls.get(link.url))) p.stats.sampleSkipped = (p.stats.sampleSkipped ?? 0) + 1;
    return;
  }
  await discover(p, link.url, link.depth, link.cgiHops, link.contribution, ctx, { startSite: start, ...(link.redirect ? { redirect: link.redirect } : {}) });
}

/** A host first seen as an external link: one `servers` record; with followServers, a new start site. */
async function recordServer(p: Partition, link: DiscoveredLink, start: string, ctx: ProcessorContext): Promise<void> {
  const host = hostKey(link.url);
  const key = SERVER_PREFIX + host;
  if ((await p.queueStore.get(key)) !== undefined) return;
  p.queueStore.put(key, '');
  p.stats.externalServers = (p.stats.externalServers ?? 0) + 1;
  p.stats.serversByDepth = countAtDepth(p.stats.serversByDepth, link.depth);
  const record: ServerRecord = { v: SCHEMA_VERSION, host, firstUrl: link.url, startSite: start, depth: link.depth, time: ctx.now() };
  ctx.emit('servers', host, record);
  if (p.options.followServers) await discover(p, serverRoot(link.url), 0, 0, 1, ctx, { seed: true, startSite: hostName(host) });
}

/** The link's target may be queued: inside the crawl scope and passing include/exclude. */
export function inScope(p: Partition, url: string): boolean {
  return p.scope.includes(hostKey(url)) && passesFilter(url, p.urlFilter);
}

export async function onLink(p: Partition, link: DiscoveredLink, ctx: ProcessorContext): Promise<void> {
  if (link.propagated) {
    // Score passed on by another partition's fetched page: it updates a known URL only.
    const known = await p.urls.get(link.url);
    if (known) await receive(p, link.url, known, link.contribution, link.depth, true, ctx);
    return;
  }
  if (p.options.mode === 'discovery') {
    await onDiscoveryLink(p, link, ctx);
    return;
  }
  if (!inScope(p, link.url)) {
    if (!(await p.urls.get(link.url))) p.stats.outOfScopeSkipped++;
    return;
  }
  // A sitemap (robots.txt, a sitemap index) or a feed a page announced: a source, taken like a seed.
  if (link.kind) {
    await discover(p, link.url, link.depth, 0, link.contribution, ctx, { seed: true, source: link.kind });
    return;
  }
  if (link.depth > p.options.maxDepth) {
    if (!(await p.urls.get(link.url))) p.stats.depthSkipped++;
    return;
  }
  if (link.cgiHops > p.options.maxCgiHops) {
    if (!(await p.urls.get(link.url))) p.stats.cgiSkipped++;
    return;
  }
  if (link.redirect && pastHopLimit(link.redirect)) {
    p.stats.redirectLimitReached = (p.stats.redirectLimitReached ?? 0) + 1;
    return;
  }
  const hints = hintsOf(link);
  await discover(p, link.url, link.depth, link.cgiHops, link.contribution, ctx, { ...(link.redirect ? { redirect: link.redirect } : {}), ...(hints ? { hints } : {}) });
}

/**
 * onLink without a promise, for the commonest links: those whose target's state is in memory (the
 * batch prefetched it). A known target receives score; a new one is queued when its site count,
 * template entry and host state are in memory too (discoverNewInMemory); an out-of-bounds one is
 * counted. False when the link needs onLink (sources, hints of a known URL, redirects, discovery
 * mode, or a read), and nothing was changed then; a PassOn when the target passes score on (passOn).
 */
export function onLinkInMemory(p: Partition, link: DiscoveredLink, host: string, ctx: ProcessorContext, templateKey?: string): boolean | PassOn {
  const known = p.urls.peek(link.url);
  if (known === NOT_IN_MEMORY) return false;
  if (link.propagated) return known ? (receiveScore(p, link.url, host, known, link.contribution, link.depth, true) ?? true) : true;
  if (p.options.mode === 'discovery' || link.kind !== undefined || link.redirect !== undefined) return false;
  if (!(p.scope.includes(host) && passesFilter(link.url, p.urlFilter))) {
    if (!known) p.stats.outOfScopeSkipped++;
    return true;
  }
  if (link.depth > p.options.maxDepth) {
    if (!known) p.stats.depthSkipped++;
    return true;
  }
  if (link.cgiHops > p.options.maxCgiHops) {
    if (!known) p.stats.cgiSkipped++;
    return true;
  }
  const hints = hintsOf(link);
  // A new URL of a sitemap or feed queues with its hints like any link; a known one may be revisited
  // because of them (applyHints), which stays on the async path.
  if (!known) return discoverNewInMemory(p, link.url, host, link.depth, link.cgiHops, link.contribution, ctx.now(), hints, templateKey);
  if (hints !== undefined) return false;
  return receiveScore(p, link.url, host, known, linkGain(p, link.contribution), link.depth, false) ?? true;
}

/** What one link adds to its target's priority under the configured ordering (Yamada et al.'s strategies). */
function linkGain(p: Partition, contribution: number): number {
  const ordering = p.options.ordering;
  return ordering === 'bf' ? 0 : ordering === 'blc' ? 1 : contribution;
}

/**
 * A URL was found: queue it if new, or let it receive the link's score if known. A redirect
 * target (`redirect`: the chain that led to it) is queued ahead of the host's other new URLs and
 * fetched with the chain; a known one is not fetched again (which also ends redirect loops).
 */
async function discover(
  p: Partition,
  url: string,
  depth: number,
  cgiHops: number,
  contribution: number,
  ctx: ProcessorContext,
  origin: { seed?: boolean; redirect?: RedirectHop[]; startSite?: string; source?: SourceKind; hints?: LinkHints } = {},
): Promise<void> {
  const { seed = false, source, hints } = origin;
  let known = await p.urls.get(url);
  const gain = linkGain(p, contribution);
  if (known) {
    // Sources and sitemap/feed hints (sources.ts): a known URL may become a source, or be dated
    // after its last fetch and revisited now.
    if (source) known = adoptSource(p, url, known, source, ctx.now());
    if (hints) known = applyHints(p, url, known, hints, ctx.now());
    await receive(p, url, known, gain, depth, false, ctx);
    return;
  }
  const host = hostKey(url);
  // An operator's rule for the host (--host-rules) goes first: a blocked host gets nothing queued.
  const rule = ruleFor(p, host);
  if (rule && (rule.block === true || (!seed && rule.maxDepth !== undefined && depth > rule.maxDepth))) {
    p.stats.hostRuleSkipped++;
    return;
  }
  // Trap bounds (docs/politeness.md, "Traps and caps"): the site's page cap, the URL template's
  // budget and the query restriction. A seed is always taken.
  if (!seed && !(await siteUnderCap(p, host))) {
    p.stats.siteCapSkipped++;
    return;
  }
  const admission = await p.templates.admit(host, url, seed, rule?.judgeTraps !== false);
  if (!admission.ok) {
    countRefusal(p, admission.reason, (await p.hosts.get(host)) as HostState | undefined, host);
    return;
  }
  queueNew(p, url, host, depth, cgiHops, gain, admission.round, await hostState(p, host, url), rule, ctx.now(), origin);
}

/** A new URL refused by its template or the query restriction; template skips also count per host. */
function countRefusal(p: Partition, reason: 'template-budget' | 'query', state: HostState | undefined, host: string): void {
  if (reason === 'query') {
    p.stats.querySkipped++;
    return;
  }
  p.stats.templateSkipped++;
  if (state !== undefined) {
    state.templateSkipped = (state.templateSkipped ?? 0) + 1;
    p.hosts.put(host, state);
  }
}

/**
 * discover() of a new URL without a promise, for a link that is no seed, source or redirect (a
 * sitemap's or feed's hints are kept) whose site count, template entry and host state are in memory
 * (the batch prefetched them). False, with nothing changed, when one of them is not: the link then
 * takes discover().
 */
function discoverNewInMemory(p: Partition, url: string, host: string, depth: number, cgiHops: number, contribution: number, now: number, hints: LinkHints | undefined, templateKey: string | undefined): boolean {
  const rule = ruleFor(p, host);
  if (rule && (rule.block === true || (rule.maxDepth !== undefined && depth > rule.maxDepth))) {
    p.stats.hostRuleSkipped++;
    return true;
  }
  const underCap = siteUnderCapInMemory(p, host);
  if (underCap === NOT_IN_MEMORY) return false;
  if (!underCap) {
    p.stats.siteCapSkipped++;
    return true;
  }
  // Read before the template counts the URL, so that a miss changes nothing.
  if (p.hosts.peek(host) === NOT_IN_MEMORY) return false;
  const admission = p.templates.admitInMemory(host, url, false, templateKey, rule?.judgeTraps !== false);
  if (admission === NOT_IN_MEMORY) return false;
  if (!admission.ok) {
    countRefusal(p, admission.reason, p.hosts.peek(host) as HostState | undefined, host);
    return true;
  }
  const state = hostStateInMemory(p, host, url);
  if (state === NOT_IN_MEMORY) throw new Error(`host state of ${host} left memory during a batch`);
  queueNew(p, url, host, depth, cgiHops, linkGain(p, contribution), admission.round, state, rule, now, hints ? { hints } : {});
  return true;
}

/** Queues a new URL that passed the trap bounds (the tail of discover()). */
function queueNew(
  p: Partition,
  url: string,
  host: string,
  depth: number,
  cgiHops: number,
  gain: number,
  round: number,
  state: HostState,
  rule: ReturnType<typeof ruleFor>,
  now: number,
  origin: { redirect?: RedirectHop[]; startSite?: string; source?: SourceKind; hints?: LinkHints },
): void {
  const { redirect, startSite, source, hints } = origin;
  if (rule?.maxPages !== undefined && (state.distinctPages ?? 0) >= rule.maxPages) {
    p.stats.hostRuleSkipped++;
    return;
  }
  // BLC breaks ties by fewer '/' in the URL, then by a shorter URL (Yamada et al.), below one link's worth.
  const score = noteScore(p, roundScore(p.options.ordering === 'blc' ? gain + blcTieBreak(url) : gain));
  // A redirect target goes ahead of its host's template rounds: it stands for a page already asked
  // for; so do sources, feed items and links new on daily pages (fetched at once, Akamine et al.).
  const urgent = isUrgent(source, hints);
  const q = queueKey(host, urgent ? REDIRECT_QUEUE_BOOST + score : queueScore(score, redirect), p.stats.seq++, redirect || urgent ? 0 : round);
  p.queues.enqueue(host, state, q, url);
  p.urls.put(url, { status: 'queued', depth, cgiHops, score, queueKey: q, ...(redirect ? { redirectChain: redirect } : {}), ...(startSite !== undefined ? { startSite } : {}), ...(source ? { source } : {}), ...hintFields(hints) });
  if (redirect) p.stats.redirectTargetsQueued = (p.stats.redirectTargetsQueued ?? 0) + 1;
  countDiscovery(p, hints);
  p.stats.urlsKnown++;
  p.hosts.put(host, state);
  if (hasRoom(p, host, state)) schedule(p, host, Math.max(state.nextAt, now));
}

/** Score a fetched page passes on along its stored out-links (passOn). */
export interface PassOn {
  readonly url: string;
  readonly depth: number;
  readonly amount: number;
}

async function receive(p: Partition, url: string, known: UrlState, gain: number, depth: number, propagated: boolean, ctx: ProcessorContext): Promise<void> {
  const passing = receiveScore(p, url, hostKey(url), known, gain, depth, propagated);
  if (passing) await passOn(p, passing, ctx);
}

/**
 * A known URL receives score. Queued, it moves up its host's queue (incremental PageRank, DL1).
 * Fetched, under the VR or AR cut-off it may pass the score on along its stored out-links (the
 * PassOn returned): VR when the amount is at least `orderingValueRatio` times its score (a
 * passed-on amount below that does not even update it), AR once its accumulated receipts reach
 * `orderingAccumulatedRatio` of it.
 *
 * `known` is updated in place: a link to a known URL is the commonest record, and a new object per
 * link would outlive the young generation in the store's cache (a failed batch drops that cache, so
 * an in-place change never survives as committed state).
 */
function receiveScore(p: Partition, url: string, host: string, known: UrlState, gain: number, depth: number, propagated: boolean): PassOn | undefined {
  if (known.status === 'queued' && known.queueKey) {
    if (!(gain > 0)) {
      if (depth < known.depth) {
        known.depth = depth;
        p.urls.put(url, known);
      }
      return undefined;
    }
    known.score = noteScore(p, roundScore(known.score + gain));
    if (depth < known.depth) known.depth = depth;
    // A due revisit keeps its place in the known queue (ordered by γ); only its score grows.
    // Any other queued URL moves up in memory only: the stored entry keeps its key, and a reload of
    // the host's queue orders it by the score stored with the URL (queueOrder).
    if (!known.queuedAsRevisit) p.queues.rescore(host, known.queueKey, known.score);
    p.urls.put(url, known);
    return undefined;
  }
  const ordering = p.options.ordering;
  if (known.lastFetchAt === undefined || known.status === 'inflight' || !(gain > 0) || (ordering !== 'ipr-vr' && ordering !== 'ipr-ar')) return undefined;
  const before = known.score;
  if (ordering === 'ipr-vr') {
    const passes = gain >= p.options.orderingValueRatio * before;
    if (propagated && !passes) return undefined;
    known.score = noteScore(p, roundScore(before + gain));
    p.urls.put(url, known);
    return passes ? { url, depth: known.depth, amount: gain } : undefined;
  }
  known.score = noteScore(p, roundScore(before + gain));
  const pending = (known.scoreToPass ?? 0) + gain;
  if (pending >= p.options.orderingAccumulatedRatio * known.score) {
    // Left out of the stored JSON; `y ?? 0` reads it as nothing received.
    known.scoreToPass = undefined;
    p.urls.put(url, known);
    return { url, depth: known.depth, amount: pending };
  }
  known.scoreToPass = pending;
  p.urls.put(url, known);
  return undefined;
}

/** Passes `amount` on equally over a fetched page's stored out-links, to whichever partitions own them. */
export async function passOn(p: Partition, { url, depth, amount }: PassOn, ctx: ProcessorContext): Promise<void> {
  const stored = await p.queueStore.get(outLinksKey(url));
  if (!stored) return;
  const targets = decodeOutLinks(stored, url);
  if (targets.length === 0) return;
  const share = amount / targets.length;
  const now = ctx.now();
  const site = siteOf(hostKey(url));
  const links = targets.map((target): DiscoveredLink => ({
      v: SCHEMA_VERSION,
      type: 'link',
      url: target,
      source: url,
      depth: depth + 1,
      cgiHops: 0,
      contribution: share,
      sameSite: siteOf(hostKey(target)) === site,
      foundAt: now,
      propagated: true,
  }));
  for (const { key, value } of packLinks(links)) ctx.emit('links', key, value);
  p.stats.scorePassedOn++;
}
