/**
 * `meguri stats hosts`: the per-host politeness and load report of the incremental archive crawler paper (load index L_i,
 * theoretical access interval 1/L_i, mean/max fetch time, R_i, overloaded) and the new URLs each
 * host lost to a URL template's budget or trap verdict (undone by a host rule), read from the
 * scheduler's state stores in a data directory (an embedded crawl's log, or a scheduler pod's volume).
 * The stores are opened read-only in effect; a running process holding them makes this fail clearly.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { TaskStores } from '../runtime/task-stores.ts';
import { embeddedLogDir, silentLogger } from '../runtime/index.ts';
import { SharedLog } from '../runtime/embedded/log.ts';
import { stateKeyPrefix } from '../runtime/embedded/keys.ts';
import { changelogTopicName } from '../../topology/index.ts';
import type { KeyValueStore } from '../runtime/store.ts';
import { STATS_KEY, emptyStats } from '../scheduler/state.ts';
import { withStateCodecs } from '../scheduler/state-codec.ts';
import type { HostState, PartitionStats } from '../scheduler/state.ts';
import { emptyPoliteness, loadReport, politenessConfig } from '../scheduler/politeness/index.ts';
import type { LoadRow, OverloadRemedy } from '../scheduler/politeness/index.ts';

export interface HostRow extends LoadRow {
  partition: number;
  fetched: number;
  queued: number;
  /** new URLs skipped by a URL template's budget or trap verdict (a host rule's judgeTraps: false undoes a verdict) */
  templateSkipped: number;
  /** seconds until the host may be asked again (0: now) */
  nextInS: number;
  state: 'ok' | 'parked' | 'suspended' | 'robots-unreachable' | 'in-flight';
  /** the overload remedy in force (null: the host bears its schedule) */
  remedy: OverloadRemedy | null;
  /** revisit intervals are multiplied by this */
  stretch: number;
  /** and this many seconds are added to them */
  delayS: number;
  /** the politeness interval the schedule had to fit when the host was found overloaded */
  allowedIntervalS: number | null;
}


/** The one store read here, through the codec the scheduler wrote it with. */
const HOSTS_STORE = withStateCodecs([{ name: 'hosts' }]);
/**
 * Opens each scheduler partition's `hosts` store in turn (in partition order) and hands it to `each`:
 * from the embedded log of an embedded crawl (which keeps the stores), else from the store
 * directories of a scheduler on Kafka.
 */
async function forEachPartition(dataDir: string, topicPrefix: string, each: (partition: number, hosts: KeyValueStore<HostState | PartitionStats>) => Promise<void>): Promise<void> {
  const group = `${topicPrefix}scheduler`;
  if (existsSync(embeddedLogDir(dataDir))) {
    await forEachLogPartition(dataDir, group, each);
    return;
  }
  const base = join(dataDir, 'state', group);
  if (!existsSync(base)) throw new Error(`no scheduler state under ${base} (is --data the crawl's data directory, and --topic-prefix its prefix?)`);
  const partitions = readdirSync(base)
    .filter((d) => /^p\d+$/.test(d))
    .map((d) => Number(d.slice(1)))
    .sort((a, b) => a - b);
  for (const partition of partitions) {
    let stores: TaskStores;
    try {
      stores = await TaskStores.open(dataDir, group, partition, HOSTS_STORE);
    } catch (err) {
      throw new Error(`cannot open the state of partition ${partition}: ${(err as Error).message} (is a crawl still running on this data directory?)`);
    }
    try {
      await each(partition, stores.store<HostState | PartitionStats>('hosts'));
    } finally {
      await stores.close();
    }
  }
}

/** The scheduler's stores kept in an embedded log: one task per partition of its changelog topics. */
async function forEachLogPartition(dataDir: string, group: string, each: (partition: number, hosts: KeyValueStore<HostState | PartitionStats>) => Promise<void>): Promise<void> {
  let log: SharedLog;
  try {
    // The log itself, not a transport: a transport would run retention on this clock at open.
    log = await SharedLog.open(dataDir, { sync: false, logger: silentLogger });
  } catch (err) {
    throw new Error(`cannot open the embedded log in ${dataDir}: ${(err as Error).message} (is a crawl still running on this data directory?)`);
  }
  try {
    const changelog = log.topic(changelogTopicName(group, 'hosts'));
    if (!changelog) throw new Error(`no scheduler state in the embedded log in ${dataDir} (is --topic-prefix the crawl's prefix?)`);
    for (let partition = 0; partition < changelog.partitions.length; partition++) {
      const stores = TaskStores.inline(log.stateDb, stateKeyPrefix(group, partition), HOSTS_STORE);
      const hosts = stores.store<HostState | PartitionStats>('hosts');
      // A partition whose task never ran has no stores.
      if ((await hosts.checkpoint()) === undefined) continue;
      await each(partition, hosts);
    }
  } finally {
    await log.close();
  }
}

export async function hostRows(dataDir: string, topicPrefix = '', now = Date.now()): Promise<HostRow[]> {
  const config = politenessConfig();
  const rows: HostRow[] = [];
  await forEachPartition(dataDir, topicPrefix, async (partition, hosts) => {
    for await (const [host, stored] of hosts.range({ lt: STATS_KEY })) {
      const value = stored as HostState;
      const pol = value.politeness ?? emptyPoliteness();
      const ctx = value.crawlDelayMs !== undefined ? { crawlDelayMs: value.crawlDelayMs } : {};
      const state: HostRow['state'] = value.robotsParked
        ? 'robots-unreachable'
        : pol.p !== undefined && pol.p > now
          ? 'parked'
          : pol.s !== undefined && pol.s > now
            ? 'suspended'
            : value.inflight
              ? 'in-flight'
              : 'ok';
      const report = loadReport(host, pol, config, ctx);
      // The crawl records its own verdict when it plans a revisit on an overloaded host (this
      // command does not know the crawl's politeness settings).
      const ov = value.overload;
      rows.push({
        ...report,
        overloaded: report.overloaded || ov !== undefined,
        remedy: ov ? ov.remedy : null,
        stretch: ov ? ov.factor : 1,
        delayS: ov ? Math.round(ov.delayMs / 1000) : 0,
        allowedIntervalS: ov ? ov.allowedIntervalMs / 1000 : null,
        partition,
        fetched: value.fetched,
        queued: value.queued,
        templateSkipped: value.templateSkipped ?? 0,
        nextInS: Math.max(0, Math.round((value.nextAt - now) / 100) / 10),
        state,
      });
    }
  });
  return rows;
}

export async function statsHostsCommand(flags: { data: string; topicPrefix: string; top: number; json?: boolean }, out: (line: string) => void): Promise<void> {
  const rows = (await hostRows(flags.data, flags.topicPrefix)).sort((a, b) => b.L - a.L || b.fetched - a.fetched || (a.host < b.host ? -1 : 1)).slice(0, flags.top);
  if (flags.json) {
    out(JSON.stringify(rows, null, 2));
    return;
  }
  const fmt = (v: number | null): string => (v === null ? '-' : String(v));
  out(['host', 'fetched', 'queued', 'templateSkipped', 'meanFetchS', 'maxFetchS', 'nextInS', 'L', '1/L s', 'R', 'overloaded', 'remedy', 'state'].join('\t'));
  for (const r of rows) {
    const remedy = r.remedy === 'stretch' ? `×${r.stretch.toPrecision(3)}` : r.remedy === 'delay' ? `+${r.delayS}s` : (r.remedy ?? '-');
    out([r.host, r.fetched, r.queued, r.templateSkipped, fmt(r.meanFetchS), fmt(r.maxFetchS), r.nextInS, r.L.toPrecision(3), fmt(r.accessIntervalS), fmt(r.R), r.overloaded ? 'yes' : 'no', remedy, r.state].join('\t'));
  }
}

/** Per partition: the scheduler's counters plus what its host table holds now. */
export interface CrawlStatsRow extends Omit<PartitionStats, 'seq' | 'maxScore'> {
  partition: number;
  /** URLs waiting in the host queues (new and due known ones) */
  queued: number;
  hostsInFlight: number;
  hostsParked: number;
  hostsSuspended: number;
  hostsRobotsUnreachable: number;
  hostsOverloaded: number;
}

/** `meguri stats crawl`: how far a crawl got, per scheduler partition and in total. */
export async function crawlStats(dataDir: string, topicPrefix = '', now = Date.now()): Promise<{ partitions: CrawlStatsRow[]; total: Omit<CrawlStatsRow, 'partition'> }> {
  const partitions: CrawlStatsRow[] = [];
  await forEachPartition(dataDir, topicPrefix, async (partition, hosts) => {
    const stats = (await hosts.get(STATS_KEY)) as PartitionStats | undefined;
    const { seq: _seq, maxScore: _max, ...counters } = { ...emptyStats(), ...stats };
    const row: CrawlStatsRow = { partition, ...counters, queued: 0, hostsInFlight: 0, hostsParked: 0, hostsSuspended: 0, hostsRobotsUnreachable: 0, hostsOverloaded: 0 };
    for await (const [, stored] of hosts.range({ lt: STATS_KEY })) {
      const h = stored as HostState;
      row.queued += h.queued;
      if (h.inflight) row.hostsInFlight++;
      if (h.robotsParked) row.hostsRobotsUnreachable++;
      else if (h.politeness?.p !== undefined && h.politeness.p > now) row.hostsParked++;
      else if (h.politeness?.s !== undefined && h.politeness.s > now) row.hostsSuspended++;
      if (h.overload) row.hostsOverloaded++;
    }
    partitions.push(row);
  });
  const total = {} as Record<string, number>;
  for (const row of partitions) {
    for (const [k, v] of Object.entries(row)) if (k !== 'partition' && typeof v === 'number') total[k] = (total[k] ?? 0) + v;
  }
  return { partitions, total: total as unknown as Omit<CrawlStatsRow, 'partition'> };
}

export async function statsCrawlCommand(flags: { data: string; topicPrefix: string; json?: boolean }, out: (line: string) => void): Promise<void> {
  const report = await crawlStats(flags.data, flags.topicPrefix);
  if (flags.json) {
    out(JSON.stringify(report, null, 2));
    return;
  }
  const keys = Object.keys(report.total) as (keyof typeof report.total)[];
  out(['', 'total', ...report.partitions.map((p) => `p${p.partition}`)].join('\t'));
  for (const k of keys) out([k, report.total[k], ...report.partitions.map((p) => p[k])].join('\t'));
}
