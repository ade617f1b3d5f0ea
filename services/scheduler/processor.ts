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
 *
 * This class only routes: records and timers go to the concern modules — discovery.ts (seeds and
 * links), outcomes.ts (fetch results), dispatch.ts (requests), revisits.ts (change tracking and the
 * long-term queue), lost.ts (requests without an outcome), batch-prefetch.ts (a batch's reads, made
 * at once) — all functions over one Partition record.
 */
import type { Processor, ProcessorContext, InputRecord } from '../runtime/index.ts';
import type { LinksRecord } from '../../schemas/index.ts';
import type { SchedulerOptions } from './options.ts';
import { ReadyHeap } from './ready-heap.ts';
import { QueueCache } from './queue-cache.ts';
import { SCOPE_PREFIX, STATS_KEY, emptyStats, inFlightOf, queueOrder } from './state.ts';
import { CrawlScope, compileUrlFilter } from './scope.ts';
import type { HostRulesSource } from './host-rules.ts';
import { DEFAULT_REVISIT_OPTIONS } from '../revisit/estimator.ts';
import { paramFilter } from '../common/url.ts';
import { TemplateLedger } from './templates.ts';
import { SiteLedger } from './site-cap.ts';
import type { HostState, PartitionStats, QueueRank, UrlState } from './state.ts';
import type { CrawlProgress } from './progress.ts';
import { politenessFromSchedulerOptions } from './politeness/index.ts';
import { HostLoadBoard } from './load-metrics.ts';
import { IpSlots } from './ip-slots.ts';
import { INITIAL_REVISIT_FLOOR, countIp, hasRoom, report, saveStats, schedule, setDeadline } from './partition.ts';
import type { FetchBudget, Partition } from './partition.ts';
import { forwardToCanonical, forwardToCanonicalInMemory, onLink, onLinkInMemory, onSeed, passOn } from './discovery.ts';
import { dispatch } from './dispatch.ts';
import { onOutcome } from './outcomes.ts';
import { gatherBatch } from './batch-prefetch.ts';
import { Deadlines } from './deadlines.ts';
import { ParkedHosts } from './parking.ts';
import { sweepRevisits } from './revisits.ts';
import { sweepLost } from './lost.ts';

export type { FetchBudget } from './partition.ts';

export interface SchedulerExtras {
  readonly progress?: CrawlProgress;
  readonly budget?: FetchBudget;
  /** Where the partition publishes its host load figures for Prometheus (set by schedulerService). */
  readonly loadBoards?: Map<number, HostLoadBoard>;
  /** Requests in flight per server IP, shared by the partitions of this process (set by schedulerService). */
  readonly ipSlots?: IpSlots;
  /** Per-host rules (--host-rules), swapped by a file watcher while the crawl runs. */
  readonly hostRules?: HostRulesSource;
}

export class SchedulerProcessor implements Processor<LinksRecord> {
  private p!: Partition;
  private readonly board = new HostLoadBoard();
  private readonly ipSlots: IpSlots;
  /** host → id of its request counted in ipSlots */
  private readonly ipCounted = new Set<string>();

  constructor(
    readonly partition: number,
    private readonly options: SchedulerOptions,
    private readonly extras: SchedulerExtras = {},
  ) {
    this.ipSlots = extras.ipSlots ?? new IpSlots();
  }

  async init(ctx: ProcessorContext): Promise<void> {
    const options = this.options;
    const urls = ctx.store<UrlState>('urls');
    const hosts = ctx.store<HostState | PartitionStats>('hosts');
    const queueStore = ctx.store<string>('queues');
    const p: Partition = {
      partition: this.partition,
      options,
      politeness: politenessFromSchedulerOptions(options, options.politeness),
      revisitRules: { ...DEFAULT_REVISIT_OPTIONS, goal: options.revisitGoal, ...options.revisitPolicy },
      stripFilter: paramFilter(options.stripParams),
      urls,
      hosts,
      queueStore,
      queues: new QueueCache(queueStore, async (host, stored) => {
        await urls.prefetch(stored.map((e) => e.url));
        const ranks: QueueRank[] = [];
        for (const e of stored) ranks.push(queueOrder(host, e.key, await urls.get(e.url)));
        return ranks;
      }),
      templates: new TemplateLedger(queueStore, options, async (url) => (await urls.get(url)) !== undefined),
      sites: new SiteLedger(queueStore),
      scope: new CrawlScope(options.scope),
      urlFilter: compileUrlFilter(options.include, options.exclude),
      hostRules: this.extras.hostRules,
      aliases: new Map(Object.entries(options.aliases).map(([a, c]) => [a.toLowerCase(), c.toLowerCase()])),
      stats: { ...emptyStats(), ...((await hosts.get(STATS_KEY)) as PartitionStats | undefined) },
      heap: new ReadyHeap(),
      scheduled: new Map(),
      deadlines: new Deadlines(),
      matchers: new Map(),
      parked: new ParkedHosts(options.idleParkedMs),
      revisitFloor: INITIAL_REVISIT_FLOOR,
      progress: this.extras.progress,
      budget: this.extras.budget,
      board: this.board,
      ipSlots: this.ipSlots,
      ipCounted: this.ipCounted,
    };
    this.p = p;
    for await (const [key] of queueStore.range({ prefix: SCOPE_PREFIX })) p.scope.restore(key.slice(SCOPE_PREFIX.length));
    const now = ctx.now();
    for await (const [host, value] of hosts.range({ lt: STATS_KEY })) {
      const state = value as HostState;
      p.queues.countRestored(state);
      p.parked.track(host, state, now);
      p.board.load(state.politeness?.L ?? 0, state.overload !== undefined);
      for (const inflight of inFlightOf(state)) {
        setDeadline(p, inflight.requestId, host, inflight.issuedAt + options.requestTimeoutMs);
        countIp(p, inflight);
      }
      if (state.queued > 0 && hasRoom(p, host, state)) schedule(p, host, state.nextAt);
    }
    report(p);
    this.extras.loadBoards?.set(this.partition, this.board);
    ctx.schedule(options.dispatchIntervalMs, (c) => this.tick(c));
    // The long-term queue also holds the next reads of sources (sitemaps, feeds, daily pages).
    ctx.schedule(options.revisitSweepMs, (c) => sweepRevisits(p, c));
  }

  close(): void {
    // The partition moves on: its hosts stop waiting for IP slots, and its requests in flight no
    // longer hold this process's slots (each freed one goes to a host of another partition).
    this.ipSlots.release(this.p);
    for (const requestId of this.ipCounted) this.ipSlots.finished(requestId);
    this.ipCounted.clear();
    if (this.extras.loadBoards?.get(this.partition) === this.board) this.extras.loadBoards.delete(this.partition);
  }

  async process(records: readonly InputRecord<LinksRecord>[], ctx: ProcessorContext): Promise<void> {
    const p = this.p;
    const { values, origins, hostKeys, templateKeys } = await gatherBatch(p, records);
    for (let i = 0; i < values.length; i++) {
      const v = values[i]!;
      const headers = origins[i]!.headers;
      // Most records are links to known URLs, handled without a promise; the rest take the async path.
      const host = hostKeys[i]!;
      const forwarded = forwardToCanonicalInMemory(p, v, host, headers, ctx) ?? (await forwardToCanonical(p, v, host, headers, ctx));
      if (forwarded) continue;
      if (v.type === 'link') {
        const handled = onLinkInMemory(p, v, host, ctx, templateKeys?.[i]);
        if (handled === false) await onLink(p, v, ctx);
        else if (handled !== true) await passOn(p, handled, ctx);
      } else if (v.type === 'outcome') await onOutcome(p, v, host, ctx);
      else await onSeed(p, v, ctx);
    }
    await dispatch(p, ctx);
    saveStats(p);
  }

  private async tick(ctx: ProcessorContext): Promise<void> {
    const p = this.p;
    const dirty = (await sweepLost(p, ctx)) + (await dispatch(p, ctx));
    await p.parked.count(ctx.now(), async (host) => (await p.hosts.get(host)) as HostState | undefined);
    if (dirty > 0) saveStats(p);
    report(p);
  }
}
