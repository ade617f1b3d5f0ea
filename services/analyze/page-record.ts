/**
 * The one place the analyses read a `pages` record: through the schemas/ codec, into the fields
 * page-summary.ts needs. The body stays as the server sent it (for the MD5 of exact duplicates);
 * the text for links, language and sentences is decoded here by the HTML charset rules (BOM,
 * Content-Type charset, <meta>, windows-1252) through `encoding-sniffer`.
 */
import { getEncoding } from 'encoding-sniffer';
import iconv from 'iconv-lite';
import { safeDecodePageRecord } from '../common/page-decode.ts';
import type { PageRecord } from '../../schemas/index.ts';
import { parseContentType } from '../common/content-type.ts';
import { decodePageContent } from '../common/page-content.ts';
import type { PageInput } from './page-summary.ts';

export type StoredPage = PageInput & { reason: PageRecord['request']['reason'] };

export type DecodedPage = { ok: true; page: StoredPage } | { ok: false; error: string };

/** HTML text of a body. */
export function htmlText(body: Buffer, contentTypeHeader: string | undefined, alreadyUtf8: boolean): string {
  if (alreadyUtf8) return body.toString('utf8');
  const label = parseContentType(contentTypeHeader)?.charset;
  const encoding = getEncoding(body, { transportLayerEncodingLabel: label, defaultEncoding: 'windows-1252' });
  if (encoding === 'UTF-8') return body.toString('utf8');
  return iconv.encodingExists(encoding) ? iconv.decode(body, encoding) : body.toString('utf8');
}

export function decodeStoredPage(value: Buffer | null): DecodedPage {
  if (value === null) return { ok: false, error: 'empty record' };
  const decoded = safeDecodePageRecord(value);
  if (!decoded.ok) return { ok: false, error: decoded.reason };
  const p = decodePageContent(decoded.page);
  return {
    ok: true,
    page: {
      url: p.finalUrl,
      reason: p.request.reason,
      status: p.status,
      fetchedAt: p.fetchedAt,
      contentType: p.contentType,
      headers: p.headers,
      ...(p.body !== undefined ? { bodyBytes: p.body, bodyText: htmlText(p.body, p.headers['content-type'], p.bodyEncoding === 'UTF-8') } : {}),
      serverIp: p.serverIp,
    },
  };
}
