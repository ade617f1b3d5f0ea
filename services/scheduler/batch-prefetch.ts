/**
 * A batch of `links` records made ready for the scheduler's loop (processor.ts): bundles unpacked
 * into their links, each link's host found once, and one RocksDB round trip for every URL, host,
 * template count and site count the batch will read, instead of one per record.
 */
import type { InputRecord } from '../runtime/index.ts';
import { NOT_IN_MEMORY } from '../runtime/index.ts';
import type { LinksRecord, UnbundledLinksRecord } from '../../schemas/index.ts';
import { linksOf } from '../common/link-bundles.ts';
import { hostKeyAfter, siteOf } from '../common/url.ts';
import { templateKey } from './templates.ts';
import { SITE_PREFIX } from './site-cap.ts';
import { siteCapKey } from './politeness/index.ts';
import { stripTrackingParams } from './discovery.ts';
import type { Partition } from './partition.ts';

/** values[i] came in origins[i] (for its headers), on host hostKeys[i]; templateKeys[i] is a new URL's template key. */
export interface GatheredBatch {
  values: UnbundledLinksRecord[];
  origins: InputRecord<LinksRecord>[];
  hostKeys: string[];
  /** Set only where template counts were read (a store not all in memory): undefined for known URLs. */
  templateKeys: (string | undefined)[] | undefined;
}

export async function gatherBatch(p: Partition, records: readonly InputRecord<LinksRecord>[]): Promise<GatheredBatch> {
  // Bundles unpacked into their links: values[i] came in origins[i] (for its headers) and is
  // keyed by hostKeys[i]. Parallel arrays rather than a record object per link, made at their size.
  let count = 0;
  for (const r of records) count += r.value.type === 'links' ? r.value.targets.length : 1;
  const values = new Array<UnbundledLinksRecord>(count);
  const origins = new Array<InputRecord<LinksRecord>>(count);
  const hostKeys = new Array<string>(count);
  // One RocksDB round trip for every URL and host this batch touches, instead of one per record;
  // nothing to gather for stores that hold every key in memory (a new crawl).
  const urls: string[] | undefined = p.urls.knownCompletely ? undefined : [];
  const hosts: Set<string> | undefined = p.hosts.knownCompletely && p.queueStore.knownCompletely ? undefined : new Set();
  // A bundle's links share their host: each link's host is found from the one before it.
  let prevUrl = '';
  let prevHost = '';
  let n = 0;
  for (const r of records) {
    for (const v of linksOf(r.value)) {
      stripTrackingParams(p, v);
      const host = hostKeyAfter(v.url, prevUrl, prevHost);
      prevUrl = v.url;
      prevHost = host;
      values[n] = v;
      origins[n] = r;
      hostKeys[n] = host;
      n++;
      if (urls !== undefined) {
        urls.push(v.url);
        if (v.type === 'outcome' && v.finalUrl) urls.push(v.finalUrl);
      }
      hosts?.add(host);
    }
  }
  await Promise.all([urls && p.urls.prefetch(urls), hosts && p.hosts.prefetch(hosts)]);
  // Template counts are read for new URLs only (most links of a long crawl go to known URLs);
  // templateKeys[i] keeps the key for the admission in processor.ts (building one takes microseconds).
  // While the queue store holds every key in memory (a new crawl) there is nothing to read.
  let templateKeys: (string | undefined)[] | undefined;
  if (hosts !== undefined && !p.queueStore.knownCompletely) {
    templateKeys = new Array<string | undefined>(count);
    const ledgerKeys: string[] = [];
    for (let i = 0; i < values.length; i++) {
      const v = values[i]!;
      if (v.type === 'outcome' || (v.type === 'link' && v.propagated)) continue;
      let known = p.urls.peek(v.url);
      if (known === NOT_IN_MEMORY) known = await p.urls.get(v.url);
      if (known === undefined) ledgerKeys.push((templateKeys[i] = templateKey(hostKeys[i]!, v.url)));
    }
    for (const host of hosts) ledgerKeys.push(SITE_PREFIX + siteCapKey(host, p.politeness, siteOf));
    await p.queueStore.prefetch(ledgerKeys);
  }
  return { values, origins, hostKeys, templateKeys };
}
