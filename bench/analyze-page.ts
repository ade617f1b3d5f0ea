/** How the analyze benchmark writes a synthetic `pages` record (kept apart so a format change touches one place). */
import type { PageRecord } from '../schemas/index.ts';

export function encodeBenchPage(record: PageRecord, html: string): Buffer {
  const body = Buffer.from(html, 'utf8');
  return Buffer.from(JSON.stringify({ ...record, body: html, bytes: body.length, decodedBytes: body.length }));
}
