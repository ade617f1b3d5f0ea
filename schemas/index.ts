/**
 * Versioned zod schemas for every topic. Consumers validate with these; JSON Schema files for
 * non-TypeScript subscribers are generated into schemas/json/ by `npm run schemas:generate`.
 */
import type { z } from 'zod';
import { frontierRecord } from './frontier.ts';
import { pageRecord, encodePageRecord, decodePageRecord } from './pages.ts';
import type { PageRecord } from './pages.ts';
import { linksRecord } from './links.ts';
import { revisitRecord } from './revisits.ts';
import { changeRecord } from './changes.ts';
import { deadletterRecord } from './deadletter.ts';
import { serverRecord } from './servers.ts';

export * from './common.ts';
export * from './frontier.ts';
export * from './pages.ts';
export * from './links.ts';
export * from './revisits.ts';
export * from './changes.ts';
export * from './deadletter.ts';
export * from './servers.ts';
export * from './text.ts';

/** Schema of each logical topic, by the topic's base name (before any prefix). */
export const topicSchemas = {
  frontier: frontierRecord,
  pages: pageRecord,
  links: linksRecord,
  revisits: revisitRecord,
  changes: changeRecord,
  deadletter: deadletterRecord,
  servers: serverRecord,
} as const satisfies Record<string, z.ZodType>;

export type SchemaName = keyof typeof topicSchemas;
export type RecordOf<N extends SchemaName> = z.infer<(typeof topicSchemas)[N]>;

/** Record type of every logical topic, for emits typed by topic (`ctx.emit('frontier', key, value)`). */
export type TopicRecords = { [N in SchemaName]: RecordOf<N> };

/** Topics whose values are not plain UTF-8 JSON, with their one encode/decode pair. */
export const topicCodecs: { readonly [N in SchemaName]?: { encode(value: RecordOf<N>): Buffer; decode(raw: Buffer): unknown } } = {
  // The runtime validates with topicSchemas after decoding, so the codec checks only the framing.
  pages: { encode: (page: PageRecord) => encodePageRecord(page), decode: (raw) => decodePageRecord(raw, { validate: false }) },
};
