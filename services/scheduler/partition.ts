/**
 * What one scheduler partition holds while it runs: its stores, its counters and the in-memory
 * indexes rebuilt from the stores on start (ready heap, in-flight deadlines, robots matchers). The
 * concern modules (discovery, dispatch, outcomes, revisits, lost) are functions over this record;
 * the small helpers they share live here.
 */
import type { KeyValueStore } from '../runtime/index.ts';
import { NOT_IN_MEMORY } from '../runtime/index.ts';
import type { AgentMatcher } from './robots/index.ts';
import type { SchedulerOptions } from './options.ts';
import type { ReadyHeap } from './ready-heap.ts';
import type { QueueCache } from './queue-cache.ts';
import type { TemplateLedger } from './templates.ts';
import type { SiteLedger } from './site-cap.ts';
import type { HostState, PartitionStats, UrlState } from './state.ts';
import type { Deadlines } from './deadlines.ts';
import { REVISIT_PREFIX, STATS_KEY, inFlightCount, revisitKey } from './state.ts';
import type { CrawlProgress } from './progress.ts';
import type { PolitenessConfig } from './politeness/index.ts';
import { siteCapKey, underPageCap } from './politeness/index.ts';
import type { HostLoadBoard } from './load-metrics.ts';
import type { IpSlots } from './ip-slots.ts';
import type { RevisitOptions } from '../revisit/estimator.ts';
import type { ParamFilter } from '../common/url.ts';
import { siteOf } from '../common/url.ts';
import type { ParkedHosts } from './parking.ts';
import type { CrawlScope, UrlFilter } from './scope.ts';
import type { HostRule, HostRulesSource } from './host-rules.ts';

/** A page budget shared by the scheduler partitions of one process (`meguri crawl --max-pages`). */
export interface FetchBudget {
  /** Takes one page from the budget; false when it is spent. */
  tryTake(): boolean;
}

export interface Partition {
  readonly partition: number;
  readonly options: SchedulerOptions;
  readonly politeness: PolitenessConfig;
  readonly revisitRules: RevisitOptions;
  /** Session and tracking parameters removed from every URL taken in (this scheduler decides identity). */
  readonly stripFilter: ParamFilter;
  readonly urls: KeyValueStore<UrlState>;
  readonly hosts: KeyValueStore<HostState | PartitionStats>;
  readonly queueStore: KeyValueStore<string>;
  readonly queues: QueueCache;
  readonly templates: TemplateLedger;
  /** The seeds' hosts or domains (every partition holds every seed's entry) and the include/exclude rules. */
  readonly scope: CrawlScope;
  readonly urlFilter: UrlFilter;
  /** Server aliases from the settings (alias host name → canonical host name). */
  readonly aliases: ReadonlyMap<string, string>;
  /** Per-host overrides (--host-rules), read on every use so a reloaded file applies at once. */
  readonly hostRules: HostRulesSource | undefined;
  readonly sites: SiteLedger;
  stats: PartitionStats;
  readonly heap: ReadyHeap;
  /** host → time it is scheduled in the heap (older heap entries are stale). */
  readonly scheduled: Map<string, number>;
  /** Each request in flight: its host and the time it counts as lost (deadlines.ts). */
  readonly deadlines: Deadlines;
  /** host → robots.txt matcher for the agent it was built for */
  readonly matchers: Map<string, { agent: string; matcher: AgentMatcher }>;
  /** Hosts parked (robots.txt unreachable, or failing) and the URLs queued on them, for --until-idle. */
  readonly parked: ParkedHosts;
  readonly progress: CrawlProgress | undefined;
  readonly budget: FetchBudget | undefined;
  readonly board: HostLoadBoard;
  readonly ipSlots: IpSlots;
  /** ids of this partition's requests counted in ipSlots */
  readonly ipCounted: Set<string>;
  /**
   * Every long-term queue key below this one has been swept. The sweep starts here rather than at
   * the start of the index: the entries it deleted stay behind in RocksDB as tombstones until
   * compaction carries them to the last level, and a scan from the start would step over all of
   * them on every sweep (hundreds of thousands in a partition of 10^7 URLs). Kept in memory only;
   * a partition that starts (or is rebuilt after a failed batch) begins at REVISIT_PREFIX.
   */
  revisitFloor: string;
}

/** The host an outcome is about: its key, computed once per outcome, and its state as read for it. */
export interface OutcomeHost {
  readonly name: string;
  readonly state: HostState;
}

/** The floor of a partition that has not swept yet: the start of the long-term queue. */
export const INITIAL_REVISIT_FLOOR = REVISIT_PREFIX;

/**
 * Files a known URL in the long-term queue at `dueAt`. Every write of a revisit index entry goes
 * through here, so an entry filed below the sweep's floor (a clock that stepped back, a revisit
 * moved earlier) lowers the floor and is still swept.
 */
export function fileRevisit(p: Pick<Partition, 'queueStore' | 'revisitFloor'>, dueAt: number, url: string): void {
  const key = revisitKey(dueAt, url);
  if (key < p.revisitFloor) p.revisitFloor = key;
  p.queueStore.put(key, '');
}

export function ruleFor(p: Partition, host: string): HostRule | undefined {
  return p.hostRules?.current().ruleFor(host);
}

/** The User-Agent the host is asked with (a host rule may set its own). */
export function agentFor(p: Partition, host: string): string {
  return ruleFor(p, host)?.userAgent ?? p.options.userAgent;
}

export function schedule(p: Partition, host: string, at: number): void {
  const current = p.scheduled.get(host);
  if (current !== undefined && current <= at) return;
  p.scheduled.set(host, at);
  p.heap.push(at, host);
}

/** A request in flight holds a slot of its IP (per-IP cap, ip-slots.ts). */
export function countIp(p: Partition, inflight: { requestId: string; ip?: string }): void {
  if (inflight.ip === undefined) return;
  p.ipSlots.started(inflight.requestId, inflight.ip);
  p.ipCounted.add(inflight.requestId);
}

/** A request in flight is lost if no outcome comes by `at` (sweepLost). */
export function setDeadline(p: Partition, requestId: string, host: string, at: number): void {
  p.deadlines.set(requestId, host, at);
}

/** The request ended (answered, re-issued or given up): its IP slot frees. */
export function releaseIp(p: Partition, requestId: string): void {
  if (p.ipCounted.delete(requestId)) p.ipSlots.finished(requestId);
}

/** The host's request limit: politeness.maxPerHost, or its host rule's. */
export function maxPerHostFor(p: Partition, host: string): number {
  return ruleFor(p, host)?.maxPerHost ?? p.politeness.maxPerHost;
}

/** The host may be asked for another request now (dispatchHost decides which, and whether). */
export function hasRoom(p: Partition, host: string, state: HostState): boolean {
  return state.inflight === undefined || inFlightCount(state) < maxPerHostFor(p, host);
}

/** The host's state, or a fresh one (counted as a new host) for the first URL of a host. */
export async function hostState(p: Partition, host: string, url: string): Promise<HostState> {
  const existing = (await p.hosts.get(host)) as HostState | undefined;
  return existing ?? newHostState(p, url);
}

/** hostState() without a promise; NOT_IN_MEMORY (and nothing counted) when the state would take a read. */
export function hostStateInMemory(p: Partition, host: string, url: string): HostState | typeof NOT_IN_MEMORY {
  const existing = p.hosts.peek(host) as HostState | undefined | typeof NOT_IN_MEMORY;
  if (existing === NOT_IN_MEMORY) return NOT_IN_MEMORY;
  return existing ?? newHostState(p, url);
}

function newHostState(p: Partition, url: string): HostState {
  const u = new URL(url);
  p.stats.hosts++;
  return { queued: 0, fetched: 0, nextAt: 0, scheme: u.protocol === 'https:' ? 'https' : 'http' };
}

/** Keeps the partition's highest score (the α normaliser of revisit selection); returns the score. */
export function noteScore(p: Partition, score: number): number {
  if (score > (p.stats.maxScore ?? 0)) p.stats.maxScore = score;
  return score;
}

/** The site of `host` has fetched fewer distinct pages than its cap. */
export async function siteUnderCap(p: Partition, host: string): Promise<boolean> {
  return underPageCap(await p.sites.pages(siteCapKey(host, p.politeness, siteOf)), p.politeness);
}

/** siteUnderCap() without a promise; NOT_IN_MEMORY when the site's count would take a read. */
export function siteUnderCapInMemory(p: Partition, host: string): boolean | typeof NOT_IN_MEMORY {
  const pages = p.sites.pagesInMemory(siteCapKey(host, p.politeness, siteOf));
  return pages === NOT_IN_MEMORY ? NOT_IN_MEMORY : underPageCap(pages, p.politeness);
}

export function report(p: Partition): void {
  p.progress?.update(p.partition, p.stats, { queued: p.queues.total, inflight: p.deadlines.size, parked: p.parked.queued });
}

export function saveStats(p: Partition): void {
  p.hosts.put(STATS_KEY, p.stats);
  report(p);
}
