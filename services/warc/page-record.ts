/**
 * The one place the archive reads a `pages` record: through the schemas/ decoder, into an
 * ArchivedFetch. A change of the record format touches only this file.
 */
import iconv from 'iconv-lite';
import { pageRecord } from '../../schemas/index.ts';
import type { ArchivedFetch } from './records.ts';

export type DecodedFetch = { ok: true; fetch: ArchivedFetch; hasResponse: boolean } | { ok: false; error: string };

/** Body bytes of a record whose body is stored as text: encoded back with the charset it was decoded from. */
function bodyBytes(body: string | undefined, charset: string | undefined): Uint8Array | undefined {
  if (body === undefined) return undefined;
  if (charset !== undefined && iconv.encodingExists(charset)) return iconv.encode(body, charset);
  return Buffer.from(body, 'utf8');
}

export function decodeArchivedFetch(value: Buffer | null, userAgent?: string): DecodedFetch {
  if (value === null) return { ok: false, error: 'empty record' };
  let json: unknown;
  try {
    json = JSON.parse(value.toString('utf8'));
  } catch {
    return { ok: false, error: 'not JSON' };
  }
  const parsed = pageRecord.safeParse(json);
  if (!parsed.success) return { ok: false, error: `not a pages record: ${parsed.error.issues[0]?.message ?? 'invalid'}` };
  const p = parsed.data;
  const body = bodyBytes(p.body, p.charset);
  return {
    ok: true,
    hasResponse: p.status > 0,
    fetch: {
      url: p.finalUrl,
      fetchedAt: p.fetchedAt,
      status: p.status,
      headers: p.headers,
      ...(body !== undefined ? { body } : {}),
      bodyTruncated: p.bodyTruncated,
      ...(p.serverIp !== undefined ? { serverIp: p.serverIp } : {}),
      ...(userAgent !== undefined ? { userAgent } : {}),
      ...(p.request.validators !== undefined ? { validators: p.request.validators } : {}),
    },
  };
}
