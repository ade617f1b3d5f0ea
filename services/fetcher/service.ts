/**
 * The fetcher as a stream service: reads `frontier`, writes `pages`. Stateless and concurrent: each
 * request is fetched independently (per-IP and global caps inside the fetcher), so one slow server
 * never holds up the partition. At-least-once: a crash re-fetches the requests in flight; the
 * scheduler ignores a second outcome for the same request id.
 */
import type { FrontierRecord, TopicRecords } from '../../schemas/index.ts';
import type { ServiceDefinition } from '../runtime/index.ts';
import { serviceSpec } from '../../topology/index.ts';
import { createFetcher } from './fetch.ts';
import type { Fetcher, FetcherOptions } from './fetch.ts';
import { registerFetcherMetrics } from './metrics.ts';
import type { FetchObserver } from './metrics.ts';

export interface FetcherServiceOptions extends FetcherOptions {
  /** Requests fetched at once per frontier partition. */
  readonly inFlightPerPartition?: number;
}

export function fetcherService(options: FetcherServiceOptions = {}): ServiceDefinition<FrontierRecord, TopicRecords> & { readonly fetcher: Fetcher } {
  const spec = serviceSpec('fetcher');
  // One fetcher (connection pools, DNS cache, per-IP limiter) shared by every partition of the process.
  const fetcher = createFetcher(options);
  let observer: FetchObserver | undefined;
  return {
    name: spec.name,
    inputs: spec.reads,
    outputs: spec.writes,
    guarantee: spec.guarantee,
    maxBatchRecords: 500,
    fetcher,
    registerMetrics: (registry) => {
      observer = registerFetcherMetrics(registry, fetcher);
    },
    concurrent: {
      maxInFlight: options.inFlightPerPartition ?? 256,
      flushIntervalMs: 20,
      createRecordProcessor: () => ({
        async processRecord(record, ctx) {
          const page = await fetcher.fetch(record.value);
          // An address lookup is not a fetch: it stays out of the fetch-time histogram.
          if (record.value.reason !== 'address') observer?.observe(page);
          ctx.emit('pages', record.value.host, page);
        },
      }),
    },
  };
}
