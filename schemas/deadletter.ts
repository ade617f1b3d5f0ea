import { z } from 'zod';
import { version, epochMs } from './common.ts';

/** deadletter: a record a service could not accept, kept whole with its origin and the reason. */
export const deadletterRecord = z.object({
  v: version,
  service: z.string(),
  reason: z.string().describe('Why it was rejected (validation issues, decode error, …).'),
  code: z.string().describe('Stable code, e.g. MEGURI_ERR_SCHEMA or MEGURI_ERR_DECODE.'),
  origin: z.object({
    topic: z.string(),
    partition: z.number().int().nonnegative(),
    offset: z.string(),
    timestamp: epochMs,
  }),
  key: z.string().nullable(),
  value: z.string().describe('The raw value, as UTF-8 text or base64 (see valueEncoding).'),
  valueEncoding: z.enum(['utf8', 'base64']),
  at: epochMs,
});
export type DeadletterRecord = z.infer<typeof deadletterRecord>;
