/**
 * The parser as a stream service: reads `pages`, writes `links` — one outcome per page keyed by the
 * requested URL's host (back to the partition that owns it) and its followable links keyed by the
 * target's host, bundled per host, links first (keyed-records.ts). Stateless; at-least-once (the
 * scheduler deduplicates).
 *
 * With `workers > 0` each batch of pages is parsed in a pool of worker threads; with 0 on the event
 * loop. Either way a batch's records are emitted in input order.
 */
import type { PageRecord, TopicRecords } from '../../schemas/index.ts';
import { EncodedValue } from '../runtime/index.ts';
import type { ServiceDefinition } from '../runtime/index.ts';
import { serviceSpec } from '../../topology/index.ts';
import { pageToRecords } from './outcome.ts';
import type { OutcomeOptions } from './outcome.ts';
import { keyedRecords } from './keyed-records.ts';
import { ParsePool } from './parse-pool.ts';
import { loadLanguageDetector } from './language.ts';
import { decodePageContent } from '../common/page-content.ts';

export interface ParserServiceOptions extends OutcomeOptions {
  /** Worker threads for parsing; 0 parses on the event loop. */
  readonly workers?: number;
}

export function parserService(options: ParserServiceOptions = {}): ServiceDefinition<PageRecord, TopicRecords> & { close(): Promise<void> } {
  const spec = serviceSpec('parser');
  const { workers = 0, ...outcomeOptions } = options;
  const base = { name: spec.name, inputs: spec.reads, outputs: spec.writes, guarantee: spec.guarantee };
  if (workers > 0) {
    // A batch goes to the pool whole and its records are emitted in order once all are parsed:
    // the event loop moves records and schedules while the workers parse, and batches stay as
    // large as without workers (many small commits cost the scheduler more than parsing does).
    const pool = new ParsePool(workers, outcomeOptions);
    return {
      ...base,
      maxBatchRecords: 200,
      createProcessor: () => ({
        async process(records, ctx) {
          const parsed = await Promise.all(records.map((r) => pool.run(r.value, { topic: r.topic, partition: r.partition, offset: String(r.offset) })));
          for (const page of parsed) {
            for (const { key, value } of page) ctx.emit('links', key, new EncodedValue(Buffer.from(value.buffer, value.byteOffset, value.byteLength)));
          }
        },
      }),
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
          const page = decodePageContent(r.value);
          const parsed = pageToRecords(page, { topic: r.topic, partition: r.partition, offset: String(r.offset) }, outcomeOptions);
          for (const { key, value } of keyedRecords(page, parsed)) ctx.emit('links', key, value);
        }
      },
    }),
    close: async () => {},
  };
}
