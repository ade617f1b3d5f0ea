/**
 * The scheduler's per-partition processor: everything the crawl knows about the hosts of one
 * partition, and the only place that decides what is fetched when.
 *
 * Closed loop per host: at most one request in flight; the next one only after the outcome came
 * back through `links` and the host's interval passed. robots.txt is fetched before any page of a
 * host and re-fetched every `robotsRecheckMs`; a disallowed URL is never emitted. Requests whose
 * outcome never arrives are re-issued after `requestTimeoutMs`, at most `maxAttempts` times.
 *
 * Durable state lives in the stores (urls, hosts, queues); the in-memory ready heap and in-flight
 * deadlines are rebuilt from them in init(), so a moved or restarted partition continues exactly.
 */
import { randomUUID } from 'node:crypto';
import type { Processor, ProcessorContext, InputRecord, KeyValueStore } from '../runtime/index.ts';
import { SCHEMA_VERSION } from '../../schemas/index.ts';
import type { LinksRecord, OutcomeLink, DiscoveredLink, SeedLink, FrontierRecord } from '../../schemas/index.ts';
import { forAgent, fromJSON, rulesForFetchResult, toJSON } from './robots/index.ts';
import type { AgentMatcher } from './robots/index.ts';
import type { SchedulerOptions } from './options.ts';
import { ReadyHeap } from './ready-heap.ts';
import { QueueCache } from './queue-cache.ts';
import { STATS_KEY, blcTieBreak, decodeOutLinks, emptyStats, encodeOutLinks, knownQueueKey, md5Of, outLinksKey, packMd5, packRevisit, queueKey, queueKeyIsKnown, queueKeyRound, revisitKey, revisitKeyBound, revisitKeyUrl, revisitOf, roundScore, REVISIT_PREFIX } from './state.ts';
import { DEFAULT_REVISIT_OPTIONS, initialState as initialRevisit, update as updateRevisit, nextInterval as nextRevisitInterval, estimateInterval } from '../revisit/estimator.ts';
import type { RevisitOptions } from '../revisit/estimator.ts';
import { alphaFromScore, selectionProbability } from '../revisit/selection.ts';
import { hammingDistance } from '../shared/fingerprint.ts';
import { hostKey, paramFilter, siteOf, stripUrlParams } from '../shared/url.ts';
import type { ParamFilter } from '../shared/url.ts';
import { TemplateLedger, templateKey } from './templates.ts';
import { SITE_PREFIX, SiteLedger } from './site-cap.ts';
import type { ChangeRecord, RevisitRecord } from '../../schemas/index.ts';
import type { HostState, PartitionStats, UrlState } from './state.ts';
import type { CrawlProgress } from './progress.ts';
import { afterOutcome, applyRemedy, beforeRequest, changePageInterval, emptyPoliteness, hostInterval, isHostFailure, loadReport, politenessFromSchedulerOptions, remedyFor, siteCapKey, underPageCap } from './politeness/index.ts';
import type { PolitenessConfig } from './politeness/index.ts';
import { HostLoadBoard } from './load-metrics.ts';
import { countRedirectOutcome, ipBelongsToHost, pastHopLimit, queueScore } from './redirects.ts';
import { parkedForIdle } from './parking.ts';
import { IpSlots } from './ip-slots.ts';
import type { RedirectHop } from '../../schemas/index.ts';

/** A page budget shared by the scheduler partitions of one process (`meguri crawl --max-pages`). */
export interface FetchBudget {
  /** Takes one page from the budget; false when it is spent. */
  tryTake(): boolean;
}

export interface SchedulerExtras {
  readonly progress?: CrawlProgress;
  readonly budget?: FetchBudget;
  /** Where the partition publishes its host load figures for Prometheus (set by schedulerService). */
  readonly loadBoards?: Map<number, HostLoadBoard>;
  /** Requests in flight per server IP, shared by the partitions of this process (set by schedulerService). */
  readonly ipSlots?: IpSlots;
}


/** Fetch errors that say the host itself is unreachable, not just this page. */
const HOST_DEAD_CODES: ReadonlySet<string> = new Set(['MEGURI_ERR_DNS', 'MEGURI_ERR_CONNECT', 'MEGURI_ERR_CONNECT_TIMEOUT', 'MEGURI_ERR_FORBIDDEN_ADDRESS']);
/** robots.txt outcomes that end a host's queue: no request to it can ever be made. */
const UNREACHABLE_HOST_CODES: ReadonlySet<string> = new Set(['MEGURI_ERR_DNS', 'MEGURI_ERR_FORBIDDEN_ADDRESS']);

function robotsUrlFor(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}/robots.txt`;
}

export class SchedulerProcessor implements Processor<LinksRecord> {
  private urls!: KeyValueStore<UrlState>;
  private hosts!: KeyValueStore<HostState | PartitionStats>;
  private queues!: QueueCache;
  private queueStore!: KeyValueStore<string>;
  private templates!: TemplateLedger;
  private sites!: SiteLedger;
  /** Session and tracking parameters removed from every URL taken in (this scheduler decides identity). */
  private readonly stripFilter: ParamFilter;
  private stats: PartitionStats = emptyStats();
  private readonly heap = new ReadyHeap();
  /** host → time it is scheduled in the heap (older heap entries are stale). */
  private readonly scheduled = new Map<string, number>();
  /** host → time its in-flight request is considered lost. */
  private readonly deadlines = new Map<string, number>();
  private readonly matchers = new Map<string, AgentMatcher>();
  private queuedTotal = 0;
  /** Hosts parked (robots.txt unreachable, or failing) and the URLs queued on them, for --until-idle. */
  private readonly parkedHosts = new Set<string>();
  private parkedQueued = 0;
  private parkedCountedAt = -Infinity;

  private readonly progress: CrawlProgress | undefined;
  private readonly budget: FetchBudget | undefined;
  private readonly politeness: PolitenessConfig;
  private readonly revisitRules: RevisitOptions;
  private readonly loadBoards: Map<number, HostLoadBoard> | undefined;
  private readonly board = new HostLoadBoard();
  private readonly ipSlots: IpSlots;
  /** host → id of its request counted in ipSlots */
  private readonly ipCounted = new Map<string, string>();

  constructor(
    readonly partition: number,
    private readonly options: SchedulerOptions,
    extras: SchedulerExtras = {},
  ) {
    this.progress = extras.progress;
    this.budget = extras.budget;
    this.politeness = politenessFromSchedulerOptions(options, options.politeness);
    this.revisitRules = { ...DEFAULT_REVISIT_OPTIONS, ...options.revisitPolicy };
    this.loadBoards = extras.loadBoards;
    this.ipSlots = extras.ipSlots ?? new IpSlots();
    this.stripFilter = paramFilter(options.stripParams);
  }

  async init(ctx: ProcessorContext): Promise<void> {
    this.urls = ctx.store<UrlState>('urls');
    this.hosts = ctx.store<HostState | PartitionStats>('hosts');
    this.queueStore = ctx.store<string>('queues');
    this.queues = new QueueCache(this.queueStore);
    this.templates = new TemplateLedger(this.queueStore, this.options, async (url) => (await this.urls.get(url)) !== undefined);
    this.sites = new SiteLedger(this.queueStore);
    this.stats = { ...emptyStats(), ...((await this.hosts.get(STATS_KEY)) as PartitionStats | undefined) };
    const now = ctx.now();
    for await (const [host, value] of this.hosts.range({ lt: STATS_KEY })) {
      const state = value as HostState;
      this.queuedTotal += state.queued;
      this.trackParked(host, state, now);
      this.board.load(state.pol?.L ?? 0, state.ov !== undefined);
      if (state.inflight) {
        this.deadlines.set(host, state.inflight.issuedAt + this.options.requestTimeoutMs);
        this.countIp(host, state.inflight);
      }
      else if (state.queued > 0 || (state.robotsDueAt !== undefined && state.robotsDueAt <= now && state.queued > 0)) this.schedule(host, state.nextAt);
    }
    this.report();
    this.loadBoards?.set(this.partition, this.board);
    ctx.schedule(this.options.dispatchIntervalMs, (c) => this.tick(c));
    if (this.options.revisit) ctx.schedule(this.options.revisitSweepMs, (c) => this.sweepRevisits(c));
  }

  close(): void {
    // The partition moves on: its requests in flight no longer hold this process's IP slots.
    for (const requestId of this.ipCounted.values()) this.ipSlots.finished(requestId);
    this.ipCounted.clear();
    if (this.loadBoards?.get(this.partition) === this.board) this.loadBoards.delete(this.partition);
  }

  async process(records: readonly InputRecord<LinksRecord>[], ctx: ProcessorContext): Promise<void> {
    // One RocksDB round trip for every URL and host this batch touches, instead of one per record.
    const urls: string[] = [];
    const hosts = new Set<string>();
    const ledgerKeys: string[] = [];
    const batch = records.map((r) => this.withStrippedUrl(r));
    for (const r of batch) {
      const host = hostKey(r.value.url);
      urls.push(r.value.url);
      if (r.value.type === 'outcome' && r.value.finalUrl) urls.push(r.value.finalUrl);
      else if (r.value.type !== 'outcome' && !(r.value.type === 'link' && r.value.propagated)) ledgerKeys.push(templateKey(host, r.value.url));
      hosts.add(host);
    }
    for (const host of hosts) ledgerKeys.push(SITE_PREFIX + siteCapKey(host, this.politeness, siteOf));
    await Promise.all([this.urls.prefetch(urls), this.hosts.prefetch(hosts), this.queueStore.prefetch(ledgerKeys)]);
    for (const r of batch) {
      const v = r.value;
      if (v.type === 'link') await this.onLink(v, ctx);
      else if (v.type === 'outcome') await this.onOutcome(v, ctx);
      else await this.onSeed(v, ctx);
    }
    await this.dispatch(ctx);
    this.saveStats();
  }

  /** Seeds and links with the configured session/tracking parameters removed from their URL. */
  private withStrippedUrl(r: InputRecord<LinksRecord>): InputRecord<LinksRecord> {
    const v = r.value;
    if (v.type === 'outcome') return r;
    const url = stripUrlParams(v.url, this.stripFilter);
    return url === v.url ? r : { ...r, value: { ...v, url } };
  }

  private async tick(ctx: ProcessorContext): Promise<void> {
    const dirty = (await this.sweepLost(ctx)) + (await this.dispatch(ctx));
    await this.countParked(ctx.now());
    if (dirty > 0) this.saveStats();
    this.report();
  }

  private saveStats(): void {
    this.hosts.put(STATS_KEY, this.stats);
    this.report();
  }

  private report(): void {
    this.progress?.update(this.partition, this.stats, { queued: this.queuedTotal, inflight: this.deadlines.size, parked: this.parkedQueued });
  }

  /**
   * Parked for a while: robots.txt unreachable (the whole host disallowed until it answers), parked
   * after repeated failures, or backing off (a Retry-After, an exponential back-off), with the next
   * try more than `idleParkedMs` away (parking.ts). Short waits (the first robots.txt retry, a brief
   * back-off) are waited for like any other work.
   */
  private trackParked(host: string, state: HostState, now: number): void {
    if (parkedForIdle(state, now, this.options.idleParkedMs)) this.parkedHosts.add(host);
    else this.parkedHosts.delete(host);
  }

  /** URLs queued on parked hosts: work that waits on a retry, not on the crawl (recounted each second). */
  private async countParked(now: number): Promise<void> {
    if (now - this.parkedCountedAt < 1000) return;
    this.parkedCountedAt = now;
    let queued = 0;
    for (const host of this.parkedHosts) {
      const state = (await this.hosts.get(host)) as HostState | undefined;
      if (!state) this.parkedHosts.delete(host);
      else {
        this.trackParked(host, state, now);
        if (this.parkedHosts.has(host)) queued += state.queued;
      }
    }
    this.parkedQueued = queued;
  }

  private schedule(host: string, at: number): void {
    const current = this.scheduled.get(host);
    if (current !== undefined && current <= at) return;
    this.scheduled.set(host, at);
    this.heap.push(at, host);
  }

  /** The host's request in flight holds a slot of its IP (per-IP cap, ip-slots.ts). */
  private countIp(host: string, inflight: { requestId: string; ip?: string }): void {
    if (inflight.ip === undefined) return;
    this.ipSlots.started(inflight.requestId, inflight.ip);
    this.ipCounted.set(host, inflight.requestId);
  }

  private releaseIp(host: string): void {
    const requestId = this.ipCounted.get(host);
    if (requestId === undefined) return;
    this.ipCounted.delete(host);
    this.ipSlots.finished(requestId);
  }

  private async hostState(host: string, url: string): Promise<HostState> {
    const existing = (await this.hosts.get(host)) as HostState | undefined;
    if (existing) return existing;
    const u = new URL(url);
    this.stats.hosts++;
    return { queued: 0, fetched: 0, nextAt: 0, scheme: u.protocol === 'https:' ? 'https' : 'http' };
  }

  private async onSeed(seed: SeedLink, ctx: ProcessorContext): Promise<void> {
    await this.discover(seed.url, 0, 0, 1, ctx, { seed: true });
  }

  private async onLink(link: DiscoveredLink, ctx: ProcessorContext): Promise<void> {
    if (link.propagated) {
      // Score passed on by another partition's fetched page: it updates a known URL only.
      const known = await this.urls.get(link.url);
      if (known) await this.receive(link.url, known, link.contribution, link.depth, true, ctx);
      return;
    }
    if (link.depth > this.options.maxDepth) {
      if (!(await this.urls.get(link.url))) this.stats.depthSkipped++;
      return;
    }
    if (link.cgiHops > this.options.maxCgiHops) {
      if (!(await this.urls.get(link.url))) this.stats.cgiSkipped++;
      return;
    }
    if (link.redirect && pastHopLimit(link.redirect)) {
      this.stats.redirectLimitReached = (this.stats.redirectLimitReached ?? 0) + 1;
      return;
    }
    await this.discover(link.url, link.depth, link.cgiHops, link.contribution, ctx, link.redirect ? { redirect: link.redirect } : {});
  }

  /** What one link adds to its target's priority under the configured ordering (seed 003's strategies). */
  private linkGain(contribution: number): number {
    const ordering = this.options.ordering;
    return ordering === 'bf' ? 0 : ordering === 'blc' ? 1 : contribution;
  }

  /**
   * A URL was found: queue it if new, or let it receive the link's score if known. A redirect
   * target (`redirect`: the chain that led to it) is queued ahead of the host's other new URLs and
   * fetched with the chain; a known one is not fetched again (which also ends redirect loops).
   */
  private async discover(url: string, depth: number, cgiHops: number, contribution: number, ctx: ProcessorContext, origin: { seed?: boolean; redirect?: RedirectHop[] } = {}): Promise<void> {
    const { seed = false, redirect } = origin;
    const known = await this.urls.get(url);
    const gain = this.linkGain(contribution);
    if (known) {
      await this.receive(url, known, gain, depth, false, ctx);
      return;
    }
    const host = hostKey(url);
    // Trap bounds (docs/politeness.md, "Traps and caps"): the site's page cap, the URL template's
    // budget and the query restriction. A seed is always taken.
    if (!seed && !(await this.siteUnderCap(host))) {
      this.stats.siteCapSkipped++;
      return;
    }
    const admission = await this.templates.admit(host, url, seed);
    if (!admission.ok) {
      if (admission.reason === 'query') this.stats.querySkipped++;
      else this.stats.templateSkipped++;
      return;
    }
    const state = await this.hostState(host, url);
    // BLC breaks ties by fewer '/' in the URL, then by a shorter URL (seed 003), below one link's worth.
    const score = this.noteScore(roundScore(this.options.ordering === 'blc' ? gain + blcTieBreak(url) : gain));
    // A redirect target goes ahead of its host's template rounds: it stands for a page already asked for.
    const q = queueKey(host, queueScore(score, redirect), this.stats.seq++, redirect ? 0 : admission.round);
    this.queues.add(host, q, url);
    this.urls.put(url, { st: 'queued', d: depth, c: cgiHops, s: score, q, ...(redirect ? { rc: redirect } : {}) });
    if (redirect) this.stats.redirectTargetsQueued = (this.stats.redirectTargetsQueued ?? 0) + 1;
    this.stats.urlsKnown++;
    state.queued++;
    this.queuedTotal++;
    this.hosts.put(host, state);
    if (!state.inflight) this.schedule(host, Math.max(state.nextAt, ctx.now()));
  }

  /**
   * A known URL receives score. Queued, it moves up its host's queue (incremental PageRank, DL1).
   * Fetched, under the VR or AR cut-off it may pass the score on along its stored out-links: VR when
   * the amount is at least `orderingValueRatio` times its score (a passed-on amount below that does
   * not even update it), AR once its accumulated receipts reach `orderingAccumulatedRatio` of it.
   */
  private async receive(url: string, known: UrlState, gain: number, depth: number, propagated: boolean, ctx: ProcessorContext): Promise<void> {
    const host = hostKey(url);
    if (known.st === 'queued' && known.q) {
      if (!(gain > 0)) {
        if (depth < known.d) this.urls.put(url, { ...known, d: depth });
        return;
      }
      const score = this.noteScore(roundScore(known.s + gain));
      // A due revisit keeps its place in the known queue (ordered by γ); only its score grows.
      if (known.v) {
        this.urls.put(url, { ...known, s: score, d: Math.min(known.d, depth) });
        return;
      }
      this.queues.remove(host, known.q);
      const q = queueKey(host, queueScore(score, known.rc), this.stats.seq++, queueKeyRound(host, known.q));
      this.queues.add(host, q, url);
      this.urls.put(url, { ...known, s: score, d: Math.min(known.d, depth), q });
      return;
    }
    const ordering = this.options.ordering;
    if (known.f === undefined || known.st === 'inflight' || !(gain > 0) || (ordering !== 'ipr-vr' && ordering !== 'ipr-ar')) return;
    const before = known.s;
    if (ordering === 'ipr-vr') {
      const passes = gain >= this.options.orderingValueRatio * before;
      if (propagated && !passes) return;
      this.urls.put(url, { ...known, s: this.noteScore(roundScore(before + gain)) });
      if (passes) await this.passOn(url, known.d, gain, ctx);
      return;
    }
    const score = this.noteScore(roundScore(before + gain));
    const pending = (known.y ?? 0) + gain;
    if (pending >= this.options.orderingAccumulatedRatio * score) {
      const { y: _y, ...rest } = known;
      this.urls.put(url, { ...rest, s: score });
      await this.passOn(url, known.d, pending, ctx);
    } else this.urls.put(url, { ...known, s: score, y: pending });
  }

  /** Passes `amount` on equally over a fetched page's stored out-links, to whichever partitions own them. */
  private async passOn(url: string, depth: number, amount: number, ctx: ProcessorContext): Promise<void> {
    const stored = await this.queueStore.get(outLinksKey(url));
    if (!stored) return;
    const targets = decodeOutLinks(stored, url);
    if (targets.length === 0) return;
    const share = amount / targets.length;
    const now = ctx.now();
    const site = siteOf(hostKey(url));
    for (const target of targets) {
      const record: DiscoveredLink = {
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
      };
      ctx.emit('links', hostKey(target), record);
    }
    this.stats.scorePassedOn++;
  }

  private matcherFor(host: string, state: HostState): AgentMatcher | undefined {
    if (!state.robots) return undefined;
    const cached = this.matchers.get(host);
    if (cached) return cached;
    const matcher = forAgent(fromJSON(state.robots), this.options.userAgent);
    if (this.matchers.size > 50_000) this.matchers.clear();
    this.matchers.set(host, matcher);
    return matcher;
  }

  private intervalFor(state: HostState): number {
    return Math.max(this.options.minIntervalMs, state.crawlDelayMs ?? 0);
  }

  /** Emits requests for due hosts. Returns the number emitted. */
  private async dispatch(ctx: ProcessorContext): Promise<number> {
    const now = ctx.now();
    let emitted = 0;
    while (emitted < this.options.maxDispatchPerRound) {
      const top = this.heap.peekTime();
      if (top === undefined || top > now) break;
      const { time, host } = this.heap.pop()!;
      if (this.scheduled.get(host) !== time) continue;
      this.scheduled.delete(host);
      if (await this.dispatchHost(host, ctx)) emitted++;
    }
    return emitted;
  }

  private async dispatchHost(host: string, ctx: ProcessorContext): Promise<boolean> {
    const now = ctx.now();
    const state = (await this.hosts.get(host)) as HostState | undefined;
    if (!state || state.inflight || state.queued === 0) return false;
    if (state.nextAt > now) {
      this.schedule(host, state.nextAt);
      return false;
    }
    // Per-site page cap (seed 000): at the cap the site's new URLs are given up; revisits go on.
    if (!(await this.siteUnderCap(host)) && (await this.queues.headNew(host))) {
      await this.dropNewAtCap(host, state);
      this.hosts.put(host, state);
      if (state.queued === 0) return false;
    }
    // Parked after repeated failures, suspended after a long continuous run, or a Retry-After.
    const gate = beforeRequest(state.pol ?? emptyPoliteness(), now, this.politeness);
    if (!gate.ok) {
      this.schedule(host, gate.retryAt);
      return false;
    }
    // The host's address before anything is asked of its server, so the cap below sees every request.
    if (this.options.learnAddressFirst === true && state.ip === undefined && state.ia === undefined) {
      const first = await this.peekQueue(host);
      if (!first) return false;
      this.emitRequest(host, state, robotsUrlFor(first.url), 'address', { d: 0, c: 0, s: 0 }, 1, ctx);
      return true;
    }
    // Per-IP cap (seed 000): the host waits until a request to its server's address ends.
    if (!this.ipSlots.mayStart(state.ip, this.politeness.maxPerIp)) {
      this.ipSlots.waitFor(state.ip!, () => this.schedule(host, ctx.now()));
      this.schedule(host, now + Math.max(1, this.politeness.ipBusyRetryMs));
      return false;
    }
    // robots.txt first, and again whenever it is due.
    if (state.robots === undefined || (state.robotsDueAt !== undefined && state.robotsDueAt <= now)) {
      const first = await this.peekQueue(host);
      if (!first) return false;
      this.emitRequest(host, state, robotsUrlFor(first.url), 'robots', { d: 0, c: 0, s: 0 }, 1, ctx);
      return true;
    }
    const matcher = this.matcherFor(host, state);
    if (state.robotsParked) {
      this.schedule(host, state.robotsDueAt ?? now + this.options.robotsRecheckMs);
      return false;
    }
    for (;;) {
      const head = await this.nextFromQueue(host, state);
      if (!head) {
        this.hosts.put(host, state);
        return false;
      }
      const urlState = await this.urls.get(head.url);
      this.queues.remove(host, head.key);
      state.queued--;
      this.queuedTotal--;
      if (!urlState || urlState.st !== 'queued') continue;
      if (matcher && !matcher.isAllowed(head.url).allowed) {
        this.urls.put(head.url, { st: 'disallowed', d: urlState.d, c: urlState.c, s: urlState.s });
        this.stats.robotsDisallowedSkipped++;
        continue;
      }
      // A new URL whose template proved a trap after it was queued: its representative was fetched.
      if (!head.known && (await this.templates.isTrap(host, head.url))) {
        this.urls.put(head.url, { st: 'trap', d: urlState.d, c: urlState.c, s: urlState.s });
        this.stats.templateSkipped++;
        continue;
      }
      const overPartitionBudget = this.options.maxPagesPerPartition !== undefined && this.stats.pagesFetched + this.deadlines.size >= this.options.maxPagesPerPartition;
      if (overPartitionBudget || (this.budget && !this.budget.tryTake())) {
        // Out of budget: keep the URL queued so a later, larger budget can pick it up.
        this.queues.add(host, head.key, head.url);
        state.queued++;
        this.queuedTotal++;
        this.hosts.put(host, state);
        return false;
      }
      const { q: _q, ...rest } = urlState;
      this.urls.put(head.url, { ...rest, st: 'inflight' });
      if (head.both) state.ks = (state.ks ?? 0) + this.options.revisitKnownShare - (head.known ? 1 : 0);
      this.emitRequest(host, state, head.url, 'page', urlState, 1, ctx);
      return true;
    }
  }

  /**
   * The host's next URL: new URLs (discovery, by score) and known URLs due for a revisit (by γ)
   * share the host's requests — `revisitKnownShare` of them go to known URLs while both wait
   * (seed 004 splits the short-term queue equally). A credit balance in the host state keeps the
   * split exact over time; when only one kind waits it gets every request.
   */
  private async nextFromQueue(host: string, state: HostState): Promise<{ key: string; url: string; known: boolean; both: boolean } | undefined> {
    const [fresh, known] = await Promise.all([this.queues.headNew(host), this.queues.headKnown(host)]);
    if (!fresh && !known) return undefined;
    if (!known) return { ...fresh!, known: false, both: false };
    if (!fresh) return { ...known, known: true, both: false };
    const takeKnown = (state.ks ?? 0) + this.options.revisitKnownShare >= 1 - 1e-9;
    return takeKnown ? { ...known, known: true, both: true } : { ...fresh, known: false, both: true };
  }

  private peekQueue(host: string): Promise<{ key: string; url: string } | undefined> {
    return this.queues.head(host);
  }

  private emitRequest(
    host: string,
    state: HostState,
    url: string,
    kind: 'page' | 'robots' | 'address',
    u: Pick<UrlState, 'd' | 'c' | 's' | 'e' | 'l' | 'v' | 'rc'>,
    attempt: number,
    ctx: ProcessorContext,
  ): void {
    const now = ctx.now();
    const request: FrontierRecord = {
      v: SCHEMA_VERSION,
      requestId: randomUUID(),
      url,
      host,
      reason: kind === 'robots' || kind === 'address' ? kind : u.v ? 'revisit' : u.rc ? 'redirect' : 'new',
      score: u.s,
      depth: u.d,
      cgiHops: u.c,
      attempt,
      issuedAt: now,
      ...(u.e || u.l ? { validators: { ...(u.e ? { etag: u.e } : {}), ...(u.l ? { lastModified: u.l } : {}) } } : {}),
      ...(state.ip ? { ip: state.ip } : {}),
      ...(kind === 'page' && !u.v && u.rc ? { redirects: u.rc } : {}),
    };
    state.inflight = { requestId: request.requestId, url, kind, issuedAt: now, attempt, ...(kind !== 'address' && state.ip ? { ip: state.ip } : {}) };
    this.countIp(host, state.inflight);
    this.hosts.put(host, state);
    this.deadlines.set(host, now + this.options.requestTimeoutMs);
    // Keyed by the server's IP once known (seed 000's per-IP limit): all hosts on one IP go to the
    // same frontier partition, so a single fetcher enforces the per-IP cap for them.
    ctx.emit('frontier', state.ip ?? host, request);
  }

  /** Moves known URLs whose revisit time has come from the long-term queue into their host's queue. */
  private async sweepRevisits(ctx: ProcessorContext): Promise<void> {
    const now = ctx.now();
    const due: [string, string][] = [];
    for await (const entry of this.queueStore.range({ gte: REVISIT_PREFIX, lt: revisitKeyBound(now), limit: 1000 })) due.push(entry);
    // One RocksDB round trip for the URLs and hosts of the whole sweep.
    const dueUrls = due.map(([key, value]) => value || revisitKeyUrl(key));
    await Promise.all([this.urls.prefetch(dueUrls), this.hosts.prefetch(new Set(dueUrls.map(hostKey)))]);
    for (const [i, [key]] of due.entries()) {
      this.queueStore.delete(key);
      const url = dueUrls[i]!;
      const u = await this.urls.get(url);
      if (!u || u.st === 'queued' || u.st === 'inflight' || u.n === undefined || u.n > now) continue;
      const host = hostKey(url);
      const state = await this.hostState(host, url);
      if ((await this.queues.knownCount(host)) >= this.knownCapacity(state)) {
        // The host's short-term queue has no room for more revisits than it can serve in the
        // window: back to the long-term queue, accepted again later (seed 004: 3 days).
        const n = now + this.options.revisitDeferMs;
        this.urls.put(url, { ...u, n });
        this.queueStore.put(revisitKey(n, url), '');
        this.stats.revisitsDeferred++;
        continue;
      }
      const q = knownQueueKey(host, this.revisitPriority(u, now), this.stats.seq++);
      this.queues.add(host, q, url);
      const { n: _n, ...rest } = u;
      this.urls.put(url, { ...rest, st: 'queued', q, v: 1 });
      state.queued++;
      this.queuedTotal++;
      this.hosts.put(host, state);
      if (!state.inflight) this.schedule(host, Math.max(state.nextAt, now));
    }
    if (due.length > 0) this.saveStats();
  }

  /**
   * Known URLs a host's short-term queue holds at most: its share of the requests the host's
   * politeness interval allows within `shortTermWindowMs` (seed 004: one day, split equally).
   */
  private knownCapacity(state: HostState): number {
    const intervalMs = hostInterval(state.pol ?? emptyPoliteness(), this.politeness, state.crawlDelayMs !== undefined ? { crawlDelayMs: state.crawlDelayMs } : {}).ms;
    if (!(intervalMs > 0)) return Infinity;
    return Math.max(1, Math.floor((this.options.shortTermWindowMs / intervalMs) * this.options.revisitKnownShare));
  }

  /**
   * Seed 001's γ(p,t) = α(p) + (1 − α(p))·β(p,t) for a due known URL: α from its importance score,
   * β the chance it changed since the last fetch given its estimated change interval. Due URLs of a
   * host are taken in γ order, so when the host's share of requests is short the pages most likely
   * to have changed, or most important, go first.
   */
  private revisitPriority(u: UrlState, now: number): number {
    const r = revisitOf(u);
    const tau = (r ? estimateInterval(r) : null) ?? (u.w ?? 86_400_000) / 1000;
    const tCrawl = (u.f ?? now) / 1000;
    // α relative to the most important page this partition knows, so importance spreads over [0, ½].
    return selectionProbability(alphaFromScore(u.s, { maxScore: Math.max(1, this.stats.maxScore ?? 1), alphaMax: 0.5, log: true }), now / 1000, tCrawl, tau);
  }

  /** Keeps the partition's highest score (the α normaliser); returns the score. */
  private noteScore(score: number): number {
    if (score > (this.stats.maxScore ?? 0)) this.stats.maxScore = score;
    return score;
  }

  /** Re-issues requests whose outcome never came (a fetcher died with them). */
  private async sweepLost(ctx: ProcessorContext): Promise<number> {
    const now = ctx.now();
    let changed = 0;
    for (const [host, deadline] of this.deadlines) {
      if (deadline > now) continue;
      const state = (await this.hosts.get(host)) as HostState | undefined;
      this.deadlines.delete(host);
      if (!state?.inflight) continue;
      const lost = state.inflight;
      this.releaseIp(host);
      changed++;
      if (lost.attempt < this.options.maxAttempts) {
        ctx.logger.warn({ host, url: lost.url, attempt: lost.attempt }, 'request lost; re-issuing');
        const u = lost.kind === 'page' ? await this.urls.get(lost.url) : undefined;
        this.emitRequest(host, state, lost.url, lost.kind, u ?? { d: 0, c: 0, s: 0 }, lost.attempt + 1, ctx);
        continue;
      }
      ctx.logger.warn({ host, url: lost.url }, 'request lost too often; giving up the URL');
      this.stats.lost++;
      state.inflight = undefined;
      state.nextAt = now + this.intervalFor(state);
      if (lost.kind === 'page') {
        const u = await this.urls.get(lost.url);
        if (u) this.urls.put(lost.url, { ...u, st: 'lost' });
      } else if (lost.kind === 'address') {
        // No answer about the address: go on without it (the fetcher resolves the name itself).
        state.ia = now;
      } else {
        // robots.txt never answered: treat as unreachable (complete disallow, retry later).
        state.robots = toJSON(rulesForFetchResult({ error: new Error('robots.txt request lost'), nowMs: now, unreachableSinceMs: state.robotsUnreachableSince ?? null }).rules);
        state.robotsParked = true;
        state.robotsDueAt = now + 60_000;
        this.trackParked(host, state, now);
      }
      this.hosts.put(host, state);
      if (state.queued > 0) this.schedule(host, state.nextAt);
    }
    return changed;
  }

  private async onOutcome(outcome: OutcomeLink, ctx: ProcessorContext): Promise<void> {
    const host = hostKey(outcome.url);
    const state = (await this.hosts.get(host)) as HostState | undefined;
    const now = ctx.now();
    if (!state?.inflight || state.inflight.requestId !== outcome.requestId) {
      // A duplicate (at-least-once fetcher) or an answer to a request already re-issued.
      if (outcome.reason !== 'robots') this.stats.duplicateFetches++;
      return;
    }
    const inflight = state.inflight;
    state.inflight = undefined;
    this.releaseIp(host);
    // Only the address that answered for this host: a redirected robots.txt may name another host's.
    if (ipBelongsToHost(host, outcome)) state.ip = outcome.serverIp;
    this.deadlines.delete(host);
    if (inflight.kind === 'address') {
      // Only the name was resolved: nothing was asked of the server, so no interval runs.
      state.ia = now;
      this.hosts.put(host, state);
      if (state.queued > 0) this.schedule(host, Math.max(now, state.nextAt));
      return;
    }
    if (inflight.kind === 'robots') {
      this.applyRobots(host, state, outcome, now);
      // The name does not resolve, or resolves to an address the fetcher refuses to dial: the host
      // does not exist (for us); its URLs cannot be fetched.
      if (outcome.errorCode !== undefined && UNREACHABLE_HOST_CODES.has(outcome.errorCode)) await this.dropQueue(host, state, 'error', { now, ctx });
    } else {
      const before = { L: state.pol?.L ?? 0, overloaded: state.ov !== undefined };
      countRedirectOutcome(this.stats, outcome);
      await this.applyPageOutcome(outcome, state, now, ctx);
      this.publishLoad(host, state, before);
    }
    // The politeness policy decides when the host may be asked again (docs/politeness.md). Its
    // interval runs from the end of the fetch, not from this outcome's arrival: parsing and the
    // topic hops put no load on the server. Kept within [issued + server time, now], so a fetcher
    // clock that is off moves it by at most the frontier hop.
    const endedAt = Math.min(now, Math.max(outcome.fetchedAt, inflight.issuedAt + outcome.fetch.totalMs));
    const next = afterOutcome(state.pol ?? emptyPoliteness(), outcome, endedAt, this.politeness, state.crawlDelayMs !== undefined ? { crawlDelayMs: state.crawlDelayMs } : {});
    state.pol = next.state;
    state.nextAt = next.nextAt;
    this.trackParked(host, state, now);
    this.hosts.put(host, state);
    if (state.queued > 0) this.schedule(host, state.robotsParked ? (state.robotsDueAt ?? state.nextAt) : state.nextAt);
  }

  /** The host's load report row for the Prometheus board (seed 004's figures, see `meguri stats hosts`). */
  private publishLoad(host: string, state: HostState, before: { L: number; overloaded: boolean }): void {
    const row = loadReport(host, state.pol ?? emptyPoliteness(), this.politeness, state.crawlDelayMs !== undefined ? { crawlDelayMs: state.crawlDelayMs } : {});
    this.board.update({ ...row, overloaded: row.overloaded || state.ov !== undefined, stretch: state.ov?.f ?? 1 }, before, { overloaded: state.ov !== undefined });
  }

  /** The site of `host` has fetched fewer distinct pages than its cap. */
  private async siteUnderCap(host: string): Promise<boolean> {
    return underPageCap(await this.sites.pages(siteCapKey(host, this.politeness, siteOf)), this.politeness);
  }

  /** The site is at its page cap: its queued new URLs are given up (marked `capped`); due revisits stay. */
  private async dropNewAtCap(host: string, state: HostState): Promise<void> {
    for (const { key, url } of await this.queues.all(host)) {
      if (queueKeyIsKnown(host, key)) continue;
      this.queues.remove(host, key);
      state.queued--;
      this.queuedTotal--;
      const u = await this.urls.get(url);
      if (u && u.st === 'queued' && !u.v) {
        const { q: _q, ...rest } = u;
        this.urls.put(url, { ...rest, st: 'capped' });
        this.stats.siteCapSkipped++;
      }
    }
  }

  /**
   * Gives up every queued URL of a host, marking them with `status`. With `hostDead` (its name does
   * not resolve), known pages waiting for a revisit count one more failed revisit instead: retried
   * in a day, and reported gone once the host stayed dead `goneAfterHostFailures` times.
   */
  private async dropQueue(host: string, state: HostState, status: 'error' | 'gone', dead?: { now: number; ctx: ProcessorContext }): Promise<void> {
    for (const { key, url } of await this.queues.all(host)) {
      this.queues.remove(host, key);
      const u = await this.urls.get(url);
      if (u && u.st === 'queued') {
        const { q: _q, v: _v, ...rest } = u;
        if (dead && this.options.revisit && u.f !== undefined) {
          this.failedRevisit(url, rest, state, dead.now, dead.ctx);
          continue;
        }
        this.urls.put(url, { ...rest, st: status });
        this.stats.errors++;
      }
    }
    this.queuedTotal -= state.queued;
    state.queued = 0;
  }

  /** A known page's revisit found its host dead before any request: count it, retry, or give the page up. */
  private failedRevisit(url: string, u: UrlState, host: HostState, now: number, ctx: ProcessorContext): void {
    const failures = (u.x ?? 0) + 1;
    this.stats.revisits++;
    const gone = failures >= this.options.goneAfterHostFailures;
    let next: UrlState;
    if (gone) {
      const { w: _w, n: _n, ...rest } = u;
      next = { ...rest, st: 'gone', x: failures };
      host.pol = changePageInterval(host.pol ?? emptyPoliteness(), u.w, undefined);
      const change: ChangeRecord = { v: SCHEMA_VERSION, url, time: now, kind: 'gone' };
      ctx.emit('changes', url, change);
    } else {
      const n = now + 86_400_000;
      next = { ...u, st: 'done', x: failures, n };
      this.queueStore.put(revisitKey(n, url), '');
    }
    this.urls.put(url, next);
    const r = revisitOf(u);
    const estimate = r ? estimateInterval(r) : null;
    const event: RevisitRecord = {
      v: SCHEMA_VERSION,
      url,
      time: now,
      result: gone ? 'gone' : 'error',
      estimatedChangeIntervalS: estimate === null ? null : Math.round(estimate),
      nextVisitAt: next.n ?? now,
    };
    ctx.emit('revisits', url, event);
  }

  private applyRobots(host: string, state: HostState, outcome: OutcomeLink, now: number): void {
    this.stats.robotsFetched++;
    const robots = outcome.robots;
    const decision = rulesForFetchResult({
      ...(robots && robots.status > 0 ? { status: robots.status } : {}),
      ...(robots?.body !== undefined ? { body: robots.body } : {}),
      ...(robots?.errorCode || outcome.errorCode ? { error: new Error(robots?.errorCode ?? outcome.errorCode) } : {}),
      nowMs: now,
      unreachableSinceMs: state.robotsUnreachableSince ?? null,
      parseOptions: { agent: this.options.userAgent },
    });
    state.robots = toJSON(decision.rules);
    state.robotsUnreachableSince = decision.unreachableSinceMs;
    state.robotsParked = decision.outcome === 'unreachable';
    state.robotsDueAt = now + Math.min(decision.recheckAfterMs, this.options.robotsRecheckMs);
    this.matchers.delete(host);
    const matcher = forAgent(decision.rules, this.options.userAgent);
    state.crawlDelayMs = matcher.crawlDelay !== undefined ? Math.round(matcher.crawlDelay * 1000) : undefined;
    this.matchers.set(host, matcher);
  }

  private async applyPageOutcome(outcome: OutcomeLink, state: HostState, now: number, ctx: ProcessorContext): Promise<void> {
    const u = await this.urls.get(outcome.url);
    const first = !u || u.f === undefined;
    // The server could not answer this time (429, 5xx, a timeout, a reset): a new page is asked for
    // again after the host's back-off or Retry-After, a bounded number of times, before it counts
    // as an error. Known pages need no retry: their next revisit is one.
    if (first && u && (u.t ?? 0) < this.options.pageRetries && isHostFailure(outcome, this.politeness)) {
      const host = hostKey(outcome.url);
      const q = queueKey(host, queueScore(u.s, u.rc), this.stats.seq++);
      this.queues.add(host, q, outcome.url);
      this.urls.put(outcome.url, { ...u, st: 'queued', q, t: (u.t ?? 0) + 1 });
      state.queued++;
      this.queuedTotal++;
      this.stats.pageRetries = (this.stats.pageRetries ?? 0) + 1;
      return;
    }
    this.stats.pagesFetched++;
    if (first) this.stats.uniqueUrlsFetched++;
    // A distinct page of its site: a new URL that got an answer from the server (seed 000's cap).
    if (first && outcome.result !== 'error') await this.sites.count(siteCapKey(hostKey(outcome.url), this.politeness, siteOf));
    if (first && outcome.result === 'ok' && outcome.fingerprint) {
      const threshold = this.options.changeHammingThreshold;
      if (await this.templates.firstFetch(hostKey(outcome.url), outcome.url, outcome.fingerprint, (a, b) => hammingDistance(a, b) <= threshold)) {
        ctx.logger.info({ url: outcome.url }, 'URL template serves the same page under every URL: a trap, no more of it is fetched');
      }
    }
    this.stats.bytes += outcome.fetch.bytes;
    state.fetched++;
    const failed = outcome.result === 'error' || outcome.result === 'server-error';
    if (failed) this.stats.errors++;
    const status = outcome.result === 'gone' ? 'gone' : failed ? 'error' : 'done';
    const notModified = outcome.result === 'not-modified';
    const etag = outcome.validators?.etag ?? (notModified ? u?.e : undefined);
    const lastModified = outcome.validators?.lastModified ?? (notModified ? u?.l : undefined);
    const next: UrlState = {
      st: status,
      d: u?.d ?? 0,
      c: u?.c ?? 0,
      s: this.noteScore(roundScore((u?.s ?? 0) + 1)),
      f: now,
      h: outcome.status,
      ...(outcome.md5 ? { m: packMd5(outcome.md5) } : u?.m ? { m: u.m } : {}),
      ...(outcome.fingerprint ? { p: outcome.fingerprint } : u?.p ? { p: u.p } : {}),
      ...(etag ? { e: etag } : {}),
      // With an ETag, If-None-Match decides and If-Modified-Since is ignored (RFC 9110 13.1.3):
      // Last-Modified is kept only for servers without ETags (fewer bytes per known URL).
      ...(!etag && lastModified ? { l: lastModified } : {}),
      ...(u?.r ? { r: u.r } : {}),
    };
    if (this.options.revisit) this.trackChange(outcome, u, next, first, now, ctx, state);
    this.urls.put(outcome.url, next);
    // VR/AR pass score on from fetched pages later: keep their out-links, compactly, beside the queues.
    if ((this.options.ordering === 'ipr-vr' || this.options.ordering === 'ipr-ar') && outcome.outLinks && outcome.outLinks.length > 0) {
      this.queueStore.put(outLinksKey(outcome.url), encodeOutLinks(outcome.outLinks, outcome.url));
    }
    // A same-host redirect target is now known too: do not fetch it again as a new URL.
    if (outcome.finalUrl && outcome.finalUrl !== outcome.url && hostKey(outcome.finalUrl) === hostKey(outcome.url)) {
      const target = await this.urls.get(outcome.finalUrl);
      if (!target) {
        const { r: _r, n: _n, ...known } = next;
        this.urls.put(outcome.finalUrl, known);
        this.stats.urlsKnown++;
      } else if (target.st === 'queued' && target.q) {
        this.queues.remove(hostKey(outcome.finalUrl), target.q);
        state.queued--;
        this.queuedTotal--;
        const { q: _q, ...rest } = target;
        this.urls.put(outcome.finalUrl, { ...rest, st: 'done', f: now });
      }
    }
  }

  /**
   * Change detection and the revisit loop (seeds 001 and 004): decides new / changed / unchanged /
   * gone, feeds the change-rate estimator, files the URL in the long-term queue at its next visit,
   * and reports `revisits` and `changes` events. A different MD5 whose text fingerprint is within
   * the Hamming threshold is a boilerplate-only change (ads, dates, menus): not a content change.
   */
  private trackChange(outcome: OutcomeLink, previous: UrlState | undefined, next: UrlState, first: boolean, now: number, ctx: ProcessorContext, host: HostState): void {
    const nowS = now / 1000;
    let result: RevisitRecord['result'];
    if (outcome.result === 'gone') result = 'gone';
    else if (outcome.result === 'error' || outcome.result === 'server-error' || outcome.result === 'client-error') result = 'error';
    else if (outcome.result === 'not-modified') result = 'unchanged';
    else if (!outcome.md5 || outcome.md5 === md5Of(previous)) result = 'unchanged';
    else if (outcome.fingerprint && previous?.p && hammingDistance(outcome.fingerprint, previous.p) <= this.options.changeHammingThreshold) result = 'unchanged';
    else result = 'changed';
    // A host that stays unreachable across revisits (its name gone, its server refusing or silent)
    // is dead, and so are its pages (seed 004: servers and domains die).
    if (!first && result === 'error' && outcome.errorCode !== undefined && HOST_DEAD_CODES.has(outcome.errorCode)) {
      const failures = (previous?.x ?? 0) + 1;
      if (failures >= this.options.goneAfterHostFailures) {
        result = 'gone';
        next.st = 'gone';
      }
      next.x = failures;
    }

    const pointer = outcome.page;
    const change = (kind: ChangeRecord['kind']): void => {
      const record: ChangeRecord = {
        v: SCHEMA_VERSION,
        url: outcome.url,
        time: now,
        kind,
        ...(outcome.title ? { title: outcome.title } : {}),
        ...(next.m ? { md5: md5Of(next)! } : {}),
        ...(next.p ? { fingerprint: next.p } : {}),
        ...(pointer && kind !== 'gone' ? { page: pointer } : {}),
      };
      ctx.emit('changes', outcome.url, record);
    };

    if (first) {
      if (outcome.result === 'ok') change('new');
      const lastModified = outcome.validators?.lastModified ? Date.parse(outcome.validators.lastModified) / 1000 : undefined;
      next.r = packRevisit(initialRevisit(nowS, lastModified !== undefined && Number.isFinite(lastModified) ? lastModified : undefined));
    } else {
      this.stats.revisits++;
      if (result === 'changed') {
        this.stats.changed++;
        change('changed');
      } else if (result === 'gone' && previous?.st !== 'gone') change('gone');
      const known = revisitOf(next);
      if (result !== 'error' && known) next.r = packRevisit(updateRevisit(known, { at: nowS, changed: result === 'changed' }));
    }
    if (result === 'unchanged' && !first && previous?.m && outcome.md5 && md5Of(previous) !== outcome.md5) next.m = packMd5(outcome.md5);

    // Next visit: the estimator's interval; a failed fetch is retried in a day; a gone page is not revisited.
    let nextVisitAt: number | undefined;
    let intervalMs: number | undefined;
    const revisit = revisitOf(next);
    if (result !== 'gone' && revisit) {
      const intervalS = result === 'error' ? 86_400 : nextRevisitInterval(revisit, Math.random, this.revisitRules).interval;
      intervalMs = Math.round(intervalS * 1000);
      next.w = intervalMs;
    } else delete next.w;
    // Seed 004's server load index L_i = Σ 1/T_ij, kept incrementally as page intervals change.
    if (previous?.w !== intervalMs) host.pol = changePageInterval(host.pol ?? emptyPoliteness(), previous?.w, intervalMs);
    if (intervalMs !== undefined) {
      // An overloaded host (1/L_i below its politeness interval) gets its intervals stretched or
      // delayed until the schedule fits (seed 004's remedies).
      const allowedMs = hostInterval(host.pol ?? emptyPoliteness(), this.politeness, host.crawlDelayMs !== undefined ? { crawlDelayMs: host.crawlDelayMs } : {}).ms;
      const remedy = remedyFor(host.pol ?? emptyPoliteness(), allowedMs, this.options.overloadRemedy);
      if (remedy.overloaded) {
        this.stats.overloadedRevisits++;
        host.ov = { a: allowedMs, k: remedy.remedy, f: remedy.factor, d: remedy.delayMs };
      } else delete host.ov;
      nextVisitAt = now + (result === 'error' ? intervalMs : applyRemedy(intervalMs, remedy));
      next.n = nextVisitAt;
      // The key holds the URL; the value stays empty (one copy of the URL fewer per known page).
      this.queueStore.put(revisitKey(nextVisitAt, outcome.url), '');
    }
    if (!first) {
      const estimate = revisit ? estimateInterval(revisit) : null;
      const event: RevisitRecord = {
        v: SCHEMA_VERSION,
        url: outcome.url,
        time: now,
        result,
        ...(previous?.m ? { previousHash: md5Of(previous)! } : {}),
        ...(outcome.md5 ? { newHash: outcome.md5 } : {}),
        estimatedChangeIntervalS: estimate === null ? null : Math.round(estimate),
        nextVisitAt: nextVisitAt ?? now,
      };
      ctx.emit('revisits', outcome.url, event);
    }
  }
}
