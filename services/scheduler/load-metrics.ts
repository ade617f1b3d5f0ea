/**
 * The server load report of the incremental archive crawler paper as Prometheus metrics. Each scheduler partition keeps a small
 * board: the revisit load of all its hosts as two running totals (Σ L_i and the number of
 * overloaded hosts) and the rows of its most loaded hosts. Per-host series are limited to the top
 * `topHosts` hosts by L_i per partition, so a crawl of millions of hosts does not become millions
 * of time series; `meguri stats hosts` reads every host from the stores when more is needed.
 */
import client from 'prom-client';
import type { LoadRow } from './politeness/index.ts';

export interface HostLoad extends LoadRow {
  /** revisit intervals are multiplied by this (1: no stretch remedy in force) */
  stretch: number;
}

/** One partition's view. Top rows are approximate: a host enters when it beats the smallest kept L. */
export class HostLoadBoard {
  private readonly rows = new Map<string, HostLoad>();
  /** Σ L_i over every host of the partition, 1/s */
  totalLoad = 0;
  /** hosts flagged overloaded */
  overloadedHosts = 0;

  constructor(readonly keep = 20) {}

  /**
   * A host's figures changed (after an outcome). `before` and `now` carry the host's L_i and the
   * scheduler's overload verdict (a remedy in force) before and after, for the running totals.
   */
  update(row: HostLoad, before: { L: number; overloaded: boolean }, now: { overloaded: boolean }): void {
    this.totalLoad = Math.max(0, this.totalLoad + row.L - before.L);
    this.overloadedHosts = Math.max(0, this.overloadedHosts + (now.overloaded ? 1 : 0) - (before.overloaded ? 1 : 0));
    if (this.rows.has(row.host) || row.L > 0) this.rows.set(row.host, row);
    if (this.rows.size > 2 * this.keep) this.prune();
  }

  /** Adds a host seen when the partition's state is loaded (no previous figures). */
  load(L: number, overloaded: boolean): void {
    this.totalLoad += L;
    if (overloaded) this.overloadedHosts++;
  }

  top(n = this.keep): HostLoad[] {
    return [...this.rows.values()].sort((a, b) => b.L - a.L || (a.host < b.host ? -1 : 1)).slice(0, n);
  }

  private prune(): void {
    const keep = new Set(this.top().map((r) => r.host));
    for (const host of this.rows.keys()) if (!keep.has(host)) this.rows.delete(host);
  }
}

/** A gauge labelled by scheduler partition whose values are read at every scrape. */
export function partitionGauge(registry: client.Registry, name: string, help: string, values: () => Iterable<[number, number]>): void {
  new client.Gauge<'partition'>({
    name,
    help,
    labelNames: ['partition'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [partition, v] of values()) this.set({ partition: String(partition) }, v);
    },
  });
}

/** Registers the load gauges; their values are read from the boards at every scrape. */
export function registerHostLoadMetrics(registry: client.Registry, boards: ReadonlyMap<number, HostLoadBoard>): void {
  const registers = [registry];
  type HostLabels = 'partition' | 'host';
  const perHost = (name: string, help: string, value: (r: HostLoad) => number | null): void => {
    new client.Gauge<HostLabels>({
      name,
      help,
      labelNames: ['partition', 'host'],
      registers,
      collect() {
        this.reset();
        for (const [partition, board] of boards) {
          for (const row of board.top()) {
            const v = value(row);
            if (v !== null) this.set({ partition: String(partition), host: row.host }, v);
          }
        }
      },
    });
  };
  perHost('meguri_scheduler_host_load_index', 'L_i = Σ 1/T_ij over the host\'s revisit intervals (1/s), most loaded hosts', (r) => r.L);
  perHost('meguri_scheduler_host_access_interval_seconds', '1/L_i: the access interval the revisit schedule needs', (r) => r.accessIntervalS);
  perHost('meguri_scheduler_host_fetch_seconds_mean', 'Mean fetch time of the host', (r) => r.meanFetchS);
  perHost('meguri_scheduler_host_fetch_seconds_max', 'Longest fetch time of the host (max e_ik)', (r) => r.maxFetchS);
  perHost('meguri_scheduler_host_feasibility_ratio', 'R_i = (1/L_i) / max e_ik; below S/C the host is overloaded', (r) => r.R);
  perHost('meguri_scheduler_host_overloaded', '1 when the host cannot bear its revisit schedule', (r) => (r.overloaded ? 1 : 0));
  perHost('meguri_scheduler_host_interval_stretch', 'Factor applied to the host\'s revisit intervals by the stretch remedy', (r) => r.stretch);
  const perPartition = (name: string, help: string, value: (b: HostLoadBoard) => number): void =>
    partitionGauge(registry, name, help, function* () {
      for (const [partition, board] of boards) yield [partition, value(board)];
    });
  perPartition('meguri_scheduler_revisit_load', 'Σ L_i over all hosts of the partition: revisit requests per second the schedule asks for', (b) => b.totalLoad);
  perPartition('meguri_scheduler_overloaded_hosts', 'Hosts of the partition whose revisit schedule is under an overload remedy', (b) => b.overloadedHosts);
}
