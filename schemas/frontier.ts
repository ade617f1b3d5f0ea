import { z } from 'zod';
import { version, httpUrl, epochMs, validators } from './common.ts';

export const fetchReason = z.enum(['seed', 'new', 'revisit', 'robots', 'sitemap', 'feed']);

/** frontier: one fetch request, emitted by the scheduler when the host is due. */
export const frontierRecord = z.object({
  v: version,
  requestId: z.string().min(1).max(128).describe('Unique id; the outcome echoes it so the scheduler can close the loop.'),
  url: httpUrl,
  host: z.string().min(1).max(253),
  reason: fetchReason,
  score: z.number().finite().describe('Priority score (incremental PageRank approximation) at emit time.'),
  depth: z.number().int().nonnegative().describe('Hops from the nearest seed.'),
  cgiHops: z.number().int().nonnegative().describe('Hops since the last static page (dynamic-page trap limit).'),
  validators: validators.optional(),
  attempt: z.number().int().positive().describe('1 for the first try; incremented when a lost request is re-issued.'),
  ip: z.string().max(64).optional().describe('Resolved server IP when known (frontier is then keyed by it).'),
  issuedAt: epochMs,
});
export type FrontierRecord = z.infer<typeof frontierRecord>;
