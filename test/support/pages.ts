/** How tests write a `pages` record into a log (one place to follow the record format). */
import { SCHEMA_VERSION, encodePageRecord } from '../../schemas/index.ts';
import type { PageRecord } from '../../schemas/index.ts';

export function encodeTestPage(record: PageRecord): Buffer {
  return encodePageRecord(record);
}

/** A fetched page as the fetcher records it: a 200 answer of `body` with `contentType`, fetched at `at`. */
export function fetchedPage(url: string, body: string, contentType: string, reason: PageRecord['request']['reason'], at = Date.UTC(2025, 0, 10)): PageRecord {
  const bytes = Buffer.from(body, 'utf8');
  return {
    v: SCHEMA_VERSION,
    request: { v: SCHEMA_VERSION, requestId: `r-${reason}`, url, host: new URL(url).host, reason, score: 0, depth: 0, cgiHops: 0, attempt: 1, issuedAt: at - 100 },
    finalUrl: url,
    redirects: [],
    status: 200,
    headers: { 'content-type': contentType },
    contentType: contentType.split(';')[0]!,
    body: bytes,
    bodyTruncated: false,
    bytes: bytes.length,
    decodedBytes: bytes.length,
    timing: { startedAt: at - 100, totalMs: 100 },
    fetchedAt: at,
  };
}
