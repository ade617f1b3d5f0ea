import { z } from 'zod';
import { version, httpUrl, epochMs } from './common.ts';

/** revisits: one event per re-visit outcome of a known page. Keyed by URL. */
export const revisitRecord = z.object({
  v: version,
  url: httpUrl,
  time: epochMs,
  result: z.enum(['changed', 'unchanged', 'gone', 'error']),
  previousHash: z.string().optional(),
  newHash: z.string().optional(),
  estimatedChangeIntervalS: z.number().nonnegative().nullable().describe('1/λ̂ in seconds; null when not yet estimable.'),
  nextVisitAt: epochMs,
});
export type RevisitRecord = z.infer<typeof revisitRecord>;
