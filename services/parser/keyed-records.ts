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

/** A `links` record encoded as the topic carries it (UTF-8 JSON). */
export interface EncodedLinksRecord {
  readonly key: string;
  readonly value: Uint8Array;
}

export function keyedRecords(page: PageRecord, { outcome, links, hosts }: PageRecords): KeyedLinksRecord[] {
  const records: KeyedLinksRecord[] = packLinks(links, hosts);
  records.push({ key: hostKey(page.request.url), value: outcome });
  return records;
}

const utf8 = new TextEncoder();

/**
 * A page's records as a worker sends them: the values' bytes end to end in one buffer, so a page
 * is one transferred ArrayBuffer and two small arrays rather than an object and a buffer per
 * record (each transferred buffer cost an allocation in the worker and a deserialisation on the
 * event loop).
 */
export interface PackedLinksRecords {
  readonly keys: string[];
  /** Where each value ends in `bytes`; the first starts at 0. */
  readonly ends: number[];
  readonly bytes: Uint8Array;
}

/** Room the values are encoded into before the used part is copied out; grown when a page needs more. */
let scratch = new Uint8Array(256 * 1024);

/** Encodes the values (UTF-8 JSON, as the topic carries them) into one exact-size buffer. */
export function packKeyedRecords(records: readonly KeyedLinksRecord[]): PackedLinksRecords {
  const keys: string[] = [];
  const ends: number[] = [];
  let at = 0;
  for (const { key, value } of records) {
    const json = JSON.stringify(value);
    // UTF-8 takes at most 3 bytes per UTF-16 unit.
    if (scratch.length - at < json.length * 3) {
      const grown = new Uint8Array(Math.max(scratch.length * 2, at + json.length * 3));
      grown.set(scratch.subarray(0, at));
      scratch = grown;
    }
    at += utf8.encodeInto(json, scratch.subarray(at)).written;
    keys.push(key);
    ends.push(at);
  }
  return { keys, ends, bytes: scratch.slice(0, at) };
}

/** The records of a packed page, each value a view into the one buffer. */
export function unpackKeyedRecords({ keys, ends, bytes }: PackedLinksRecords): EncodedLinksRecord[] {
  const records: EncodedLinksRecord[] = [];
  let start = 0;
  for (let i = 0; i < keys.length; i++) {
    const end = ends[i]!;
    records.push({ key: keys[i]!, value: bytes.subarray(start, end) });
    start = end;
  }
  return records;
}
