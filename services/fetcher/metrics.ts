/**
 * The fetcher's Prometheus metrics: requests answered and failed (by error code), bytes on the wire
 * and decoded, connections opened and reused, requests in flight and waiting for a slot, and the
 * fetch-time histogram. Counters are read from the fetcher at every scrape; the histogram is fed
 * with each page record.
 */
import client from 'prom-client';
import type { PageRecord } from '../../schemas/index.ts';
import type { Fetcher, FetcherStats } from './fetch.ts';

export interface FetchObserver {
  observe(page: PageRecord): void;
}

export function registerFetcherMetrics(registry: client.Registry, fetcher: Fetcher): FetchObserver {
  const registers = [registry];
  // One stats() call per scrape, shared by every metric collected in it.
  let cached: { at: number; stats: FetcherStats } | undefined;
  const stats = (): FetcherStats => {
    const now = Date.now();
    if (!cached || now - cached.at > 100) cached = { at: now, stats: fetcher.stats() };
    return cached.stats;
  };
  const counter = <L extends string>(name: string, help: string, labelNames: L[], values: (s: FetcherStats) => [Partial<Record<L, string>>, number][]): void => {
    new client.Counter<L>({
      name,
      help,
      labelNames,
      registers,
      collect() {
        this.reset();
        for (const [labels, v] of values(stats())) if (v > 0) this.inc(labels, v);
      },
    });
  };
  const gauge = (name: string, help: string, value: (s: FetcherStats) => number): void => {
    new client.Gauge({
      name,
      help,
      registers,
      collect() {
        this.set(value(stats()));
      },
    });
  };
  counter('meguri_fetcher_requests_total', 'Fetches finished, by result (ok: an HTTP answer of any status; error: no usable answer)', ['result'], (s) => [
    [{ result: 'ok' }, s.completed - s.failed],
    [{ result: 'error' }, s.failed],
  ]);
  counter('meguri_fetcher_errors_total', 'Fetches that failed, by error code (MEGURI_ERR_*)', ['code'], (s) => Object.entries(s.errors).map(([code, n]) => [{ code }, n]));
  counter('meguri_fetcher_bytes_total', 'Body bytes received (wire: as sent; decoded: after gzip/br/deflate, of the bodies the fetcher decoded itself: one kept compressed for its reader counts as wire only)', ['kind'], (s) => [
    [{ kind: 'wire' }, s.wireBytes],
    [{ kind: 'decoded' }, s.decodedBytes],
  ]);
  counter('meguri_fetcher_connections_total', 'Requests by connection: a new one, or a kept-alive one reused', ['kind'], (s) => [
    [{ kind: 'new' }, s.newConnections],
    [{ kind: 'reused' }, s.reusedConnections],
  ]);
  gauge('meguri_fetcher_in_flight', 'Requests being fetched now', (s) => s.inFlight);
  gauge('meguri_fetcher_waiting', 'Requests waiting for a global or per-IP slot', (s) => s.waiting);
  gauge('meguri_fetcher_busy_ips', 'Server IPs with a request in flight', (s) => s.busyIps);
  const duration = new client.Histogram<'status'>({
    name: 'meguri_fetcher_fetch_seconds',
    help: 'Time of a fetch from holding a connection slot to the end of the response, by status class',
    labelNames: ['status'],
    buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers,
  });
  return {
    observe(page) {
      const status = page.error !== undefined ? 'error' : `${Math.floor(page.status / 100)}xx`;
      duration.observe({ status }, Math.max(0, page.timing.totalMs - (page.timing.queueMs ?? 0)) / 1000);
    },
  };
}
