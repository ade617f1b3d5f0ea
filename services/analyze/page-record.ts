/**
 * The one place the analyses read a `pages` record: through the schemas/ decoder, into the fields
 * page-summary.ts needs. A change of the record format touches only this file.
 */
import { pageRecord } from '../../schemas/index.ts';
import type { PageRecord } from '../../schemas/index.ts';
import type { PageInput } from './page-summary.ts';

export type StoredPage = PageInput & { reason: PageRecord['request']['reason'] };

export type DecodedPage = { ok: true; page: StoredPage } | { ok: false; error: string };

export function decodeStoredPage(value: Buffer | null): DecodedPage {
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
  return {
    ok: true,
    page: {
      url: p.finalUrl,
      reason: p.request.reason,
      status: p.status,
      fetchedAt: p.fetchedAt,
      contentType: p.contentType,
      headers: p.headers,
      bodyText: p.body,
      serverIp: p.serverIp,
    },
  };
}
