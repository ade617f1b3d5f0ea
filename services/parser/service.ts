/**
 * The parser as a stream service: reads `pages`, writes `links` — one outcome per page keyed by the
 * requested URL's host (back to the partition that owns it) and one record per followable link keyed
 * by the target's host. Stateless; at-least-once (the scheduler deduplicates).
 */
import type { PageRecord } from '../../schemas/index.ts';
import type { ServiceDefinition } from '../runtime/index.ts';
import { serviceSpec } from '../../topology/index.ts';
import { pageToRecords } from './outcome.ts';
import type { OutcomeOptions } from './outcome.ts';
import { hostKey } from '../scheduler/processor.ts';

export function parserService(options: OutcomeOptions = {}): ServiceDefinition<PageRecord> {
  const spec = serviceSpec('parser');
  return {
    name: spec.name,
    inputs: spec.reads,
    outputs: spec.writes,
    guarantee: spec.guarantee,
    maxBatchRecords: 200,
    createProcessor: () => ({
      process(records, ctx) {
        for (const r of records) {
          const { outcome, links } = pageToRecords(r.value, { topic: r.topic, partition: r.partition, offset: String(r.offset) }, options);
          for (const link of links) ctx.emit('links', hostKey(link.url), link);
          ctx.emit('links', hostKey(r.value.request.url), outcome);
        }
      },
    }),
  };
}
