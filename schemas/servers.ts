import { z } from 'zod';
import { version, httpUrl, epochMs } from './common.ts';

/**
 * servers: hosts found by a discovery crawl (Hoshino et al.) — an external link's host, reported the first
 * time any start site links to it. Keyed by host, one record per host.
 */
export const serverRecord = z.object({
  v: version,
  host: z.string().min(1).max(300).describe('host[:port], lower case (the scheduler\'s host key).'),
  firstUrl: httpUrl.describe('The first URL on the host that was found.'),
  startSite: z.string().min(1).max(300).describe('Host name of the start site whose crawl found it.'),
  depth: z.number().int().nonnegative().describe('Depth of the link that found it (hops from its start site\'s seed).'),
  time: epochMs,
});
export type ServerRecord = z.infer<typeof serverRecord>;
