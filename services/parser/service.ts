/**
 * The parser as a stream service: reads `pages`, writes `links` — one outcome per page keyed by the
 * requested URL's host (back to the partition that owns it) and its followable links keyed by the
 * target's host, bundled per host (services/common/link-bundles.ts), links first. Stateless; at-least-once (the scheduler deduplicates).
 *
 * With `workers > 0` pages are parsed in a pool of worker threads (concurrent mode: many pages of a
 * partition in parallel); with 0 they are parsed on the event loop in batches.
 */
import type { PageRecord, TopicRecords } from '../../schemas/index.ts';
import type { ServiceDefinition } from '../runtime/index.ts';
import { serviceSpec } from '../../topology/index.ts';
import { pageToRecords } from './outcome.ts';
import type { OutcomeOptions } from './outcome.ts';
import { hostKey } from '../common/url.ts';
import { packLinks } from '../common/link-bundles.ts';
import { ParsePool } from './parse-pool.ts';
import { loadLanguageDetector } from './language.ts';

export interface ParserServiceOptions extends OutcomeOptions {
  /** Worker threads for parsing; 0 parses on the event loop. */
  readonly workers?: number;
}

export function parserService(options: ParserServiceOptions = {}): ServiceDefinition<PageRecord, TopicRecords> & { close(): Promise<void> } {
  const spec = serviceSpec('parser');
  const { workers = 0, ...outcomeOptions } = options;
  const base = { name: spec.name, inputs: spec.reads, outputs: spec.writes, guarantee: spec.guarantee };
  if (workers > 0) {
    const pool = new ParsePool(workers, outcomeOptions.languages !== undefined ? { languages: outcomeOptions.languages } : {});
    return {
      ...base,
      maxBatchRecords: 500,
      concurrent: {
        maxInFlight: 64,
        flushIntervalMs: 10,
        createRecordProcessor: () => ({
          async processRecord(r, ctx) {
            const { outcome, links } = await pool.run(r.value, { topic: r.topic, partition: r.partition, offset: String(r.offset) });
            for (const { key, value } of packLinks(links)) ctx.emit('links', key, value);
            ctx.emit('links', hostKey(r.value.request.url), outcome);
          },
        }),
      },
      close: () => pool.close(),
    };
  }
  return {
    ...base,
    maxBatchRecords: 200,
    createProcessor: () => ({
      async process(records, ctx) {
        await loadLanguageDetector();
        for (const r of records) {
          const { outcome, links } = pageToRecords(r.value, { topic: r.topic, partition: r.partition, offset: String(r.offset) }, outcomeOptions);
          for (const { key, value } of packLinks(links)) ctx.emit('links', key, value);
          ctx.emit('links', hostKey(r.value.request.url), outcome);
        }
      },
    }),
    close: async () => {},
  };
}
