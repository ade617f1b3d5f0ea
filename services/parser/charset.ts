/**
 * From body bytes to text, the parser's job: the fetcher stores what the server sent. Charset
 * sniffing follows the WHATWG order for HTML (BOM, transport charset, <meta>, windows-1252); XML
 * reads its declaration; plain text (robots.txt) is UTF-8 unless a BOM or the header says otherwise.
 */
import { getEncoding } from 'encoding-sniffer';
import { ResultType, Sniffer } from 'encoding-sniffer/sniffer';
import iconv from 'iconv-lite';
import type { PageRecord } from '../../schemas/pages.ts';
import { parseContentType, textKindOf } from '../common/content-type.ts';
import type { TextKind } from '../common/content-type.ts';

/** Picks the encoding of a body: returns a WHATWG encoding name (e.g. `UTF-8`, `Shift_JIS`). */
export function sniffEncoding(buf: Buffer, kind: TextKind, transportLabel: string | undefined): string {
  if (transportLabel !== undefined && kind !== 'text') {
    // A charset the header names (one the WHATWG list knows) yields only to a byte order mark:
    // the first bytes decide, and the <meta>/declaration prescan of up to 1 KB is not needed.
    const sniffer = new Sniffer({ transportLayerEncodingLabel: transportLabel, maxBytes: 3, defaultEncoding: kind === 'html' ? 'windows-1252' : 'UTF-8' });
    if (sniffer.resultType === ResultType.PASSED) {
      sniffer.write(buf.subarray(0, 3));
      return sniffer.encoding;
    }
  }
  if (kind === 'html') {
    return getEncoding(buf, { transportLayerEncodingLabel: transportLabel, defaultEncoding: 'windows-1252' });
  }
  if (kind === 'xml') {
    // The sniffer also reads <?xml encoding="..."?>; XML without any declaration is UTF-8.
    return getEncoding(buf, { transportLayerEncodingLabel: transportLabel, defaultEncoding: 'UTF-8' });
  }
  // Plain text (robots.txt, RFC 9309: UTF-8): only a BOM or the header may say otherwise, so the
  // sniffer sees just the first bytes and never hunts for <meta> in a text file.
  return getEncoding(buf.subarray(0, 3), { transportLayerEncodingLabel: transportLabel, defaultEncoding: 'UTF-8', maxBytes: 3 });
}

export interface DecodedText {
  text: string;
  /** Encoding actually used. */
  charset: string;
}

/** Decodes with iconv-lite (BOM stripped); falls back to the platform decoder, then windows-1252/UTF-8. */
export function decodeText(buf: Buffer, encoding: string): DecodedText {
  if (encoding === 'UTF-8') {
    const start = buf.length >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf ? 3 : 0;
    return { text: buf.toString('utf8', start), charset: 'UTF-8' };
  }
  if (iconv.encodingExists(encoding)) return { text: iconv.decode(buf, encoding), charset: encoding };
  try {
    return { text: new TextDecoder(encoding).decode(buf), charset: encoding };
  } catch {
    // Labels like `replacement` (WHATWG's catch-all for unsafe encodings) have no real decoder.
    return { text: buf.toString('utf8'), charset: 'UTF-8' };
  }
}

/** How a page's body is read when its Content-Type does not say: by what was asked for. */
function defaultKind(reason: PageRecord['request']['reason']): TextKind {
  if (reason === 'robots') return 'text';
  if (reason === 'sitemap' || reason === 'feed') return 'xml';
  return 'html';
}

/**
 * The text of a page's body, decoded from its bytes by the rules above (undefined when the page
 * has no body). Records converted from the old JSON form are already UTF-8 (bodyEncoding).
 */
export function pageText(page: Pick<PageRecord, 'body' | 'bodyEncoding' | 'headers' | 'request'>): DecodedText | undefined {
  const body = page.body;
  if (body === undefined) return undefined;
  if (page.bodyEncoding === 'UTF-8') return decodeText(body, 'UTF-8');
  const ct = parseContentType(page.headers['content-type']);
  const reason = page.request.reason;
  // A sitemap or feed is read as XML whatever it was served as (text/html, text/plain, a +xml
  // type): its declaration, else the header's charset, else UTF-8; what it is, its root element decides.
  const kind = reason === 'sitemap' || reason === 'feed' ? 'xml' : ct === undefined ? defaultKind(reason) : (textKindOf(ct.essence) ?? defaultKind(reason));
  return decodeText(body, sniffEncoding(body, kind, ct?.charset));
}
