/** How the analyze benchmark writes a synthetic `pages` record (through the schemas/ codec). */
import { encodePageRecord } from '../schemas/index.ts';
import type { PageRecord } from '../schemas/index.ts';

export function encodeBenchPage(record: PageRecord, html: string): Buffer {
  const body = Buffer.from(html, 'utf8');
  return encodePageRecord({ ...record, body, bytes: body.length, decodedBytes: body.length });
}
