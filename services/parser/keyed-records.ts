/**
 * A parsed page as the `links` records the parser emits, in their order: its links bundled per
 * target host (services/common/link-bundles.ts), then its outcome keyed by the requested URL's host
 * (back to the partition that owns it). Parse workers build and encode them off the event loop.
 */
import type { LinksRecord, PageRecord } from '../../schemas/index.ts';
import { hostKey } from '../common/url.ts';
import { packLinks } from '../common/link-bundles.ts';
import type { PageRecords } from './outcome.ts';

export interface KeyedLinksRecord {
  readonly key: string;
  readonly value: LinksRecord;
}

/** A `links` record encoded as the topic carries it (UTF-8 JSON), in a buffer of its own. */
export interface EncodedLinksRecord {
  readonly key: string;
  readonly value: Uint8Array;
}

export function keyedRecords(page: PageRecord, { outcome, links }: PageRecords): KeyedLinksRecord[] {
  const records: KeyedLinksRecord[] = packLinks(links);
  records.push({ key: hostKey(page.request.url), value: outcome });
  return records;
}

const utf8 = new TextEncoder();

/**
 * Each value in an exact-size ArrayBuffer of its own (TextEncoder, not Buffer.from, whose small
 * buffers share an 8 KB pool): the worker can hand them over without copying.
 */
export function encodeKeyedRecords(records: readonly KeyedLinksRecord[]): EncodedLinksRecord[] {
  return records.map(({ key, value }) => ({ key, value: utf8.encode(JSON.stringify(value)) }));
}
