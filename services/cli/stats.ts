/**
 * `meguri stats hosts`: the per-host politeness and load report of seed 004 (load index L_i,
 * theoretical access interval 1/L_i, mean/max fetch time, R_i, overloaded), read from the
 * scheduler's state stores in a data directory (an embedded crawl, or a scheduler pod's volume).
 * The stores are opened read-only in effect; a running process holding them makes this fail clearly.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { TaskStores } from '../runtime/store.ts';
import { STATS_KEY } from '../scheduler/state.ts';
import type { HostState } from '../scheduler/state.ts';
import { emptyPoliteness, loadReport, politenessConfig } from '../scheduler/politeness/index.ts';
import type { LoadRow } from '../scheduler/politeness/index.ts';

export interface HostRow extends LoadRow {
  partition: number;
  fetched: number;
  queued: number;
  /** seconds until the host may be asked again (0: now) */
  nextInS: number;
  state: 'ok' | 'parked' | 'suspended' | 'robots-unreachable' | 'in-flight';
}

export async function hostRows(dataDir: string, topicPrefix = '', now = Date.now()): Promise<HostRow[]> {
  const group = `${topicPrefix}scheduler`;
  const base = join(dataDir, 'state', group);
  if (!existsSync(base)) throw new Error(`no scheduler state under ${base} (is --data the crawl's data directory, and --topic-prefix its prefix?)`);
  const config = politenessConfig();
  const rows: HostRow[] = [];
  for (const dir of readdirSync(base).filter((d) => /^p\d+$/.test(d))) {
    const partition = Number(dir.slice(1));
    let stores: TaskStores;
    try {
      stores = await TaskStores.open(dataDir, group, partition, ['hosts']);
    } catch (err) {
      throw new Error(`cannot open the state of partition ${partition}: ${(err as Error).message} (is a crawl still running on this data directory?)`);
    }
    try {
      for await (const [host, value] of stores.store<HostState>('hosts').range({ lt: STATS_KEY })) {
        const pol = value.pol ?? emptyPoliteness();
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
        rows.push({
          ...loadReport(host, pol, config, ctx),
          partition,
          fetched: value.fetched,
          queued: value.queued,
          nextInS: Math.max(0, Math.round((value.nextAt - now) / 100) / 10),
          state,
        });
      }
    } finally {
      await stores.close();
    }
  }
  return rows;
}

export async function statsHostsCommand(flags: { data: string; topicPrefix: string; top: number; json?: boolean }, out: (line: string) => void): Promise<void> {
  const rows = (await hostRows(flags.data, flags.topicPrefix)).sort((a, b) => b.L - a.L || b.fetched - a.fetched || (a.host < b.host ? -1 : 1)).slice(0, flags.top);
  if (flags.json) {
    out(JSON.stringify(rows, null, 2));
    return;
  }
  const fmt = (v: number | null): string => (v === null ? '-' : String(v));
  out(['host', 'fetched', 'queued', 'meanFetchS', 'maxFetchS', 'nextInS', 'L', '1/L s', 'R', 'overloaded', 'state'].join('\t'));
  for (const r of rows) {
    out([r.host, r.fetched, r.queued, fmt(r.meanFetchS), fmt(r.maxFetchS), r.nextInS, r.L.toPrecision(3), fmt(r.accessIntervalS), fmt(r.R), r.overloaded ? 'yes' : 'no', r.state].join('\t'));
  }
}
