/**
 * The crawler's topic catalog for the stream runtime: schemas from schemas/, topic settings from the
 * topology, and how a record that is too large for its topic may shrink or split (a page loses the
 * end of its body; a `links` bundle splits, an outcome sheds what it can: links-bounds.ts). The runtime knows no crawler topic; the CLI and tests pass this in.
 */
import type { z } from 'zod';
import { topicSchemas, topicCodecs, encodedPageSize, SCHEMA_VERSION } from '../schemas/index.ts';
import type { LinksRecord, PageRecord } from '../schemas/index.ts';
import { fitLinksRecord } from './links-bounds.ts';
import type { ValueCodec } from '../services/runtime/catalog.ts';
import { changelogSpec, kafkaTopicConfig, topicSpec } from './index.ts';

/** Cuts a page's body so its framed record fits `maxBytes`; undefined when even an empty body does not fit. */
export function shrinkPage(page: PageRecord, maxBytes: number, reason: string): PageRecord | undefined {
  const cut = (body: Buffer): PageRecord => ({ ...page, body, bodyTruncated: true, bodyTruncatedReason: `topic limit: ${reason}` });
  const envelope = encodedPageSize(cut(Buffer.alloc(0)));
  if (envelope > maxBytes) return undefined;
  const body = page.body ?? Buffer.alloc(0);
  // The body is raw bytes after the header: the room left is exactly what can be kept (the digits
  // of bodyBytes may grow by a few bytes, hence the margin). A body still compressed is cut as a
  // compressed stream, which its reader decodes as far as it goes.
  return cut(body.subarray(0, Math.max(0, Math.min(body.length, maxBytes - envelope - 16))));
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
  codec: (logical: string): ValueCodec | undefined => (topicCodecs as Record<string, ValueCodec | undefined>)[logical],
  deadletterVersion: SCHEMA_VERSION,
  shrink: (logical: string, value: unknown, maxBytes: number, reason: string): unknown => (logical === 'pages' ? shrinkPage(value as PageRecord, maxBytes, reason) : undefined),
  split: (logical: string, value: unknown, maxBytes: number): readonly unknown[] | undefined => (logical === 'links' ? fitLinksRecord(value as LinksRecord, maxBytes) : undefined),
};
