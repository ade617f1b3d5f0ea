/** The scheduler as a stream service: reads `links`, writes `frontier`; exactly-once. */
import type { ServiceDefinition } from '../runtime/index.ts';
import type { LinksRecord, TopicRecords } from '../../schemas/index.ts';
import { serviceSpec } from '../../topology/index.ts';
import { schedulerOptionsSchema } from './options.ts';
import type { SchedulerOptionsInput } from './options.ts';
import { SchedulerProcessor } from './processor.ts';
import type { SchedulerExtras } from './processor.ts';
import { HostLoadBoard, registerHostLoadMetrics } from './load-metrics.ts';
import { registerCrawlMetrics } from './crawl-metrics.ts';
import { CrawlProgress } from './progress.ts';
import { IpSlots } from './ip-slots.ts';
import { withStateCodecs } from './state-codec.ts';

export function schedulerService(input: SchedulerOptionsInput = {}, extras: SchedulerExtras = {}): ServiceDefinition<LinksRecord, TopicRecords> {
  const options = schedulerOptionsSchema.parse(input);
  const spec = serviceSpec('scheduler');
  // One load board per owned partition; the processors keep them current, scrapes read them.
  const boards = new Map<number, HostLoadBoard>();
  // The partitions' counters for /metrics (the crawl command passes its own, for its display).
  const progress = extras.progress ?? new CrawlProgress();
  // The per-IP cap counts the requests of every partition this process owns.
  const ipSlots = extras.ipSlots ?? new IpSlots();
  return {
    name: spec.name,
    inputs: spec.reads,
    outputs: spec.writes,
    stores: withStateCodecs(spec.stores),
    guarantee: spec.guarantee,
    // Records, not links: a bundle carries a page's links to one host (~7 records per page). About
    // 1,000 links per batch keeps dispatch frequent and the event loop free for the fetcher's
    // sockets, whose timings the politeness interval is computed from.
    maxBatchRecords: 150,
    createProcessor: (partition) => new SchedulerProcessor(partition, options, { ...extras, progress, loadBoards: boards, ipSlots }),
    registerMetrics: (registry) => {
      registerHostLoadMetrics(registry, boards);
      registerCrawlMetrics(registry, progress, boards);
    },
  };
}

export { SchedulerProcessor } from './processor.ts';
export { hostKey } from '../common/url.ts';
export type { FetchBudget, SchedulerExtras } from './processor.ts';
export { CrawlProgress } from './progress.ts';
export { schedulerOptionsSchema } from './options.ts';
export type { SchedulerOptions, SchedulerOptionsInput } from './options.ts';
