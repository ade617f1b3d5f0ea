/**
 * Distinct pages per site (Muraoka et al.'s per-site cap), counted durably in the partition's `queues`
 * store under a prefix no host name or other entry starts with, so the count survives restarts
 * and moves with the partition. One short entry per site, read through the store's bounded cache.
 */
import type { KeyValueStore } from '../runtime/index.ts';
import { NOT_IN_MEMORY } from '../runtime/index.ts';

export const SITE_PREFIX = '\u0005';

export class SiteLedger {
  constructor(private readonly store: KeyValueStore<string>) {}

  /** Distinct pages of the site fetched so far. */
  async pages(site: string): Promise<number> {
    return Number((await this.store.get(SITE_PREFIX + site)) ?? 0);
  }

  /** pages() without a promise; NOT_IN_MEMORY when the count would take a read. */
  pagesInMemory(site: string): number | typeof NOT_IN_MEMORY {
    const stored = this.store.peek(SITE_PREFIX + site);
    return stored === NOT_IN_MEMORY ? NOT_IN_MEMORY : Number(stored ?? 0);
  }

  /** Counts one more distinct page of the site (read through the store's write buffer). */
  async count(site: string): Promise<number> {
    const n = (await this.pages(site)) + 1;
    this.store.put(SITE_PREFIX + site, String(n));
    return n;
  }
}
