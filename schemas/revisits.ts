import { z } from 'zod';
import { version, httpUrl, epochMs, TEXT_MD5 } from './common.ts';

/** revisits: one event per re-visit outcome of a known page. Keyed by URL. */
export const revisitRecord = z.object({
  v: version,
  url: httpUrl.describe('The page, normalised; also the record key.'),
  time: epochMs,
  result: z.enum(['changed', 'unchanged', 'gone', 'error']),
  previousHash: z.string().optional().describe(`Hash of the version before this revisit. ${TEXT_MD5}`),
  newHash: z.string().optional().describe(`Hash of the version this revisit found. ${TEXT_MD5}`),
  estimatedChangeIntervalS: z.number().nonnegative().nullable().describe('1/λ̂ in seconds; null when not yet estimable.'),
  nextVisitAt: epochMs,
});
export type RevisitRecord = z.infer<typeof revisitRecord>;
