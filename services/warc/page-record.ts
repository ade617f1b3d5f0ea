/**
 * The one place the archive reads a `pages` record: through the schemas/ codec, into an
 * ArchivedFetch. The body is the bytes the server sent after transfer and content decoding.
 */
import { safeDecodePageRecord } from '../common/page-decode.ts';
import type { ArchivedFetch } from './records.ts';
import { decodePageContent } from '../common/page-content.ts';

export type DecodedFetch = { ok: true; fetch: ArchivedFetch; hasResponse: boolean } | { ok: false; error: string };

export function decodeArchivedFetch(value: Buffer | null, userAgent?: string): DecodedFetch {
  if (value === null) return { ok: false, error: 'empty record' };
  const decoded = safeDecodePageRecord(value);
  if (!decoded.ok) return { ok: false, error: decoded.reason };
  const p = decodePageContent(decoded.page);
  const headers = { ...p.headers };
  // Records converted from the older all-JSON form hold the text as UTF-8, not the original bytes.
  if (p.bodyEncoding === 'UTF-8' && headers['content-type'] !== undefined) headers['content-type'] = headers['content-type'].replace(/;\s*charset=[^;]*/i, '') + '; charset=UTF-8';
  return {
    ok: true,
    hasResponse: p.status > 0,
    fetch: {
      url: p.finalUrl,
      fetchedAt: p.fetchedAt,
      status: p.status,
      headers,
      ...(p.body !== undefined ? { body: p.body } : {}),
      bodyTruncated: p.bodyTruncated,
      ...(p.serverIp !== undefined ? { serverIp: p.serverIp } : {}),
      ...(userAgent !== undefined ? { userAgent } : {}),
      ...(p.request.validators !== undefined ? { validators: p.request.validators } : {}),
    },
  };
}
