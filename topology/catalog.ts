/**
 * The crawler's topic catalog for the stream runtime: schemas from schemas/, topic settings from the
 * topology, and how a record that is too large for its topic may shrink (a page loses the end of its
 * body). The runtime knows no crawler topic; the CLI and tests pass this in.
 */
import type { z } from 'zod';
import { topicSchemas, SCHEMA_VERSION } from '../schemas/index.ts';
import type { PageRecord } from '../schemas/index.ts';
import { changelogSpec, kafkaTopicConfig, topicSpec } from './index.ts';

/** Cuts a page's body so its JSON fits `maxBytes`; undefined when even an empty body does not fit. */
export function shrinkPage(page: PageRecord, maxBytes: number, reason: string): PageRecord | undefined {
  const withBody = (body: string | undefined): PageRecord => ({ ...page, ...(body === undefined ? {} : { body }), bodyTruncated: true, bodyTruncatedReason: `topic limit: ${reason}` });
  const bare: PageRecord = { ...withBody(undefined) };
  delete bare.body;
  const envelope = Buffer.byteLength(JSON.stringify(withBody('')));
  if (envelope > maxBytes) return undefined;
  const body = page.body ?? '';
  let keep = body.length;
  for (let round = 0; round < 12; round++) {
    // Escaping makes JSON grow faster than the text: shrink by the measured ratio until it fits.
    const candidate = withBody(body.slice(0, keep));
    const size = Buffer.byteLength(JSON.stringify(candidate));
    if (size <= maxBytes) return candidate;
    keep = Math.floor(keep * ((maxBytes - envelope) / (size - envelope)) * 0.97);
    if (keep <= 0) return withBody('');
  }
  return bare;
}

export const crawlCatalog = {
  schema: (logical: string): z.ZodType | undefined => (topicSchemas as Record<string, z.ZodType>)[logical],
  topic: (logical: string) => {
    const spec = topicSpec(logical);
    return { partitions: spec.partitions, config: kafkaTopicConfig(spec) };
  },
  changelog: (group: string, store: string, partitions: number) => {
    const spec = changelogSpec(group, store, partitions);
    return { name: spec.name, partitions: spec.partitions, config: kafkaTopicConfig(spec) };
  },
  deadletterVersion: SCHEMA_VERSION,
  shrink: (logical: string, value: unknown, maxBytes: number, reason: string): unknown => (logical === 'pages' ? shrinkPage(value as PageRecord, maxBytes, reason) : undefined),
};
