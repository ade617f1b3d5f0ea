/** How tests write a `pages` record into a log (one place to follow the record format). */
import { encodePageRecord } from '../../schemas/index.ts';
import type { PageRecord } from '../../schemas/index.ts';

export function encodeTestPage(record: PageRecord): Buffer {
  return encodePageRecord(record);
}
