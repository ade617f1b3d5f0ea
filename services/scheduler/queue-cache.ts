/**
 * In-memory copy of the per-host queues of one partition, loaded per host on first use and kept in
 * step with every write the scheduler makes to the `queues` store. Taking a host's best URL is then
 * an array read instead of a RocksDB iterator (three native calls each). Hosts not used for a while
 * are dropped when the cache is over its budget; they are re-read from the store when needed.
 *
 * An entry's store key is the place it was queued at (its score then, its sequence number); its
 * `rank` is that key's parts as numbers, with the URL's current score. Incremental PageRank raises
 * the score of queued URLs on nearly every link, and moving the entry in memory only (`rescore`)
 * saves a delete and a put per link, and building a key. On load the ranks are made again from the
 * URLs' stored scores (`orderOf`).
 */
import type { KeyValueStore } from '../runtime/index.ts';
import { KNOWN_GROUP, compareQueueRanks, queuePrefix, queueRank, rescoredInverted } from './state.ts';
import type { QueueRank, RankOrder } from './state.ts';

export interface QueueEntry {
  /** Key of the entry in the `queues` store (the URL state's `q`). */
  readonly key: string;
  /** Place in the host's queue: the key's parts, with the URL's current score. */
  readonly rank: QueueRank;
  readonly url: string;
}

/** Ranks entries read from the store: the key each would have with its URL's current score. */
export type QueueOrder = (host: string, stored: readonly { readonly key: string; readonly url: string }[]) => Promise<QueueRank[]>;

/**
 * An entry as the cache lists it: its rank's ordering parts copied into the entry itself (`inverted`
 * kept equal to rank.inverted), so that the binary searches of a host's list (two per re-scored URL,
 * on nearly every link) read one object per step instead of two scattered ones.
 */
interface Listed extends QueueEntry, RankOrder {}

function listed(key: string, url: string, rank: QueueRank): Listed {
  return { key, url, rank, group: rank.group, inverted: rank.inverted, seq: rank.seq };
}

interface HostQueue {
  /** By rank. */
  readonly list: Listed[];
  readonly byKey: Map<string, Listed>;
}

/** Sorts before every known URL's rank and after every new URL's. */
const FIRST_KNOWN = { group: KNOWN_GROUP, inverted: -1, seq: -1 };

export class QueueCache {
  private readonly hosts = new Map<string, HostQueue>();
  private entries = 0;

  constructor(
    private readonly store: KeyValueStore<string>,
    private readonly orderOf: QueueOrder = async (host, stored) => stored.map((e) => queueRank(host, e.key)),
    private readonly maxEntries = 500_000,
  ) {}

  private async load(host: string): Promise<HostQueue> {
    let queue = this.hosts.get(host);
    if (queue) {
      // Refresh recency (Map keeps insertion order).
      this.hosts.delete(host);
      this.hosts.set(host, queue);
      return queue;
    }
    const stored: { key: string; url: string }[] = [];
    for await (const [key, url] of this.store.range({ prefix: queuePrefix(host) })) stored.push({ key, url });
    const ranks = await this.orderOf(host, stored);
    // Another load of the same host may have finished while this one waited.
    queue = this.hosts.get(host);
    if (queue) return queue;
    const list = stored.map((e, i) => listed(e.key, e.url, ranks[i] ?? queueRank(host, e.key)));
    list.sort(compareQueueRanks);
    queue = { list, byKey: new Map(list.map((e) => [e.key, e])) };
    this.hosts.set(host, queue);
    this.entries += list.length;
    this.evict(host);
    return queue;
  }

  private evict(keep: string): void {
    for (const [host, queue] of this.hosts) {
      if (this.entries <= this.maxEntries) return;
      if (host === keep) continue;
      this.hosts.delete(host);
      this.entries -= queue.list.length;
    }
  }

  /** Index of the first entry in [lo, hi) whose rank is not below `rank` (hi when there is none). */
  private static position(list: readonly Listed[], rank: RankOrder, lo = 0, hi = list.length): number {
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (compareQueueRanks(list[mid]!, rank) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private static insert(queue: HostQueue, entry: Listed): void {
    queue.list.splice(QueueCache.position(queue.list, entry), 0, entry);
    queue.byKey.set(entry.key, entry);
  }

  /** Where `entry` is in the sorted list; -1 when it is not there. */
  private static indexOf(list: readonly Listed[], entry: Listed): number {
    // Ranks are unique (they end in the entry's sequence number); scan a little for safety.
    for (let i = QueueCache.position(list, entry); i < list.length && compareQueueRanks(list[i]!, entry) === 0; i++) {
      if (list[i] === entry) return i;
    }
    return -1;
  }

  /** Takes `entry` out of the sorted list (not out of `byKey`). */
  private static unlist(list: Listed[], entry: Listed): void {
    const i = QueueCache.indexOf(list, entry);
    if (i >= 0) list.splice(i, 1);
  }

  private static take(queue: HostQueue, key: string): QueueEntry | undefined {
    const entry = queue.byKey.get(key);
    if (!entry) return undefined;
    queue.byKey.delete(key);
    QueueCache.unlist(queue.list, entry);
    return entry;
  }

  /**
   * Adds to the store and, if the host is loaded, to its queue. `rank` defaults to the key's (an
   * entry queued just now); an entry put back after it was taken keeps the rank it had.
   */
  add(host: string, key: string, url: string, rank?: QueueRank): void {
    this.store.put(key, url);
    const queue = this.hosts.get(host);
    if (!queue) return;
    QueueCache.insert(queue, listed(key, url, rank ?? queueRank(host, key)));
    this.entries++;
  }

  remove(host: string, key: string): void {
    this.store.delete(key);
    const queue = this.hosts.get(host);
    if (queue && QueueCache.take(queue, key)) this.entries--;
  }

  /**
   * The new URL queued under `key` has a new score: it moves in memory; the store keeps its entry
   * as it is (a reload orders it by the URL's stored score). Known URLs keep their place (γ).
   */
  rescore(host: string, key: string, score: number): void {
    const queue = this.hosts.get(host);
    const entry = queue?.byKey.get(key);
    if (!queue || !entry || entry.group === KNOWN_GROUP) return;
    // Its key stays, and so does its place in `byKey`: a delete and a set per link made the Map
    // rebuild its table again and again.
    const list = queue.list;
    const from = QueueCache.indexOf(list, entry);
    if (from < 0) return;
    entry.inverted = entry.rank.inverted = rescoredInverted(entry.rank, score);
    // It moves past the entries it now ranks before (or after): they shift by one place. Two splices
    // (out, back in) moved the whole tail twice and made an array per call, on nearly every link.
    let to = from;
    if (to > 0 && compareQueueRanks(list[to - 1]!, entry) > 0) {
      const target = QueueCache.position(list, entry, 0, from);
      for (; to > target; to--) list[to] = list[to - 1]!;
    } else if (to + 1 < list.length && compareQueueRanks(list[to + 1]!, entry) < 0) {
      const target = QueueCache.position(list, entry, from + 1, list.length) - 1;
      for (; to < target; to++) list[to] = list[to + 1]!;
    }
    list[to] = entry;
  }

  async head(host: string): Promise<QueueEntry | undefined> {
    return (await this.load(host)).list[0];
  }

  /** Best new URL (discovery queue). */
  async headNew(host: string): Promise<QueueEntry | undefined> {
    const first = (await this.load(host)).list[0];
    return first && first.group !== KNOWN_GROUP ? first : undefined;
  }

  /** Best known URL due for a revisit (they sort after every new URL). */
  async headKnown(host: string): Promise<QueueEntry | undefined> {
    const list = (await this.load(host)).list;
    const entry = list[QueueCache.position(list, FIRST_KNOWN)];
    return entry && entry.group === KNOWN_GROUP ? entry : undefined;
  }

  /** Known URLs in the host's queue (they are the tail of its list). */
  async knownCount(host: string): Promise<number> {
    const list = (await this.load(host)).list;
    return list.length - QueueCache.position(list, FIRST_KNOWN);
  }

  /** The host's entries in queue order. */
  async all(host: string): Promise<readonly QueueEntry[]> {
    return [...(await this.load(host)).list];
  }
}
