import { z } from 'zod';
import { version, httpUrl, epochMs, errorCode } from './common.ts';
import { frontierRecord } from './frontier.ts';

/** pages: what the fetcher got for one request, success or failure. Long retention: replayable. */
export const pageRecord = z.object({
  v: version,
  request: frontierRecord.describe('The fetch request, echoed.'),
  finalUrl: httpUrl.describe('URL of the response recorded here (the request URL unless the fetcher followed a redirect itself, as for robots.txt).'),
  redirects: z
    .array(z.object({ url: z.string(), status: z.number().int() }))
    .max(16)
    .describe('The redirect chain so far: the hops that led to this request and, for a 3xx, this response too.'),
  location: httpUrl
    .optional()
    .describe("For a 3xx: its Location resolved against the URL, fragment removed. The fetcher does not follow it; the scheduler queues it as a discovery (reason redirect)."),
  status: z.number().int().min(0).max(999).describe('HTTP status of the final response; 0 when no response.'),
  headers: z.record(z.string(), z.string()).describe('Selected response headers, lower-case names.'),
  contentType: z.string().max(256).optional(),
  charset: z.string().max(64).optional().describe('Charset the body was decoded from.'),
  body: z.string().optional().describe('Decoded text body (HTML, robots.txt); absent for non-text content.'),
  bodyTruncated: z.boolean().describe('True when the size cap cut the body.'),
  bodyTruncatedReason: z.string().max(500).optional().describe('Why the body was cut when not by the fetch size cap, e.g. the record would exceed its topic\'s max.message.bytes.'),
  bytes: z.number().int().nonnegative().describe('Bytes received on the wire (after transfer encoding).'),
  decodedBytes: z.number().int().nonnegative().describe('Bytes after content decoding (gzip/br/deflate).'),
  timing: z.object({
    startedAt: epochMs,
    dnsMs: z.number().nonnegative().optional(),
    connectMs: z.number().nonnegative().optional(),
    ttfbMs: z.number().nonnegative().optional(),
    queueMs: z.number().nonnegative().optional().describe('Time waiting for a per-IP connection slot in the fetcher (included in totalMs).'),
    totalMs: z.number().nonnegative(),
  }),
  serverIp: z.string().max(64).optional(),
  connectionReused: z.boolean().optional().describe('Whether a kept-alive connection served the request.'),
  connectionClosed: z.boolean().optional().describe('Server asked to close the connection (keep-alive window ended).'),
  error: z.object({ code: errorCode, message: z.string().max(2000) }).optional(),
  fetchedAt: epochMs,
});
export type PageRecord = z.infer<typeof pageRecord>;
