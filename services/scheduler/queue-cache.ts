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
 * An entry as the cache holds it: its rank's ordering parts copied into the entry itself (`inverted`
 * kept equal to rank.inverted), so that the comparisons of a host's heap read one object per step
 * instead of two scattered ones, and its place in that heap (`at`), so that a re-scored or taken
 * entry is found without a search.
 */
interface Listed extends QueueEntry, RankOrder {
  at: number;
}

function listed(key: string, url: string, rank: QueueRank): Listed {
  return { key, url, rank, group: rank.group, inverted: rank.inverted, seq: rank.seq, at: -1 };
}

/**
 * A host's queue: two binary min-heaps by rank, one of new URLs and one of known URLs due for a
 * revisit (which rank after every new URL). Incremental PageRank re-scores queued new URLs on
 * nearly every link; in a heap an entry moves in log2(n) swaps, where a sorted array of a host's
 * 500 sitemap URLs shifted a hundred entries on average to let it past the ones it now outranks.
 */
interface HostQueue {
  readonly fresh: Listed[];
  readonly known: Listed[];
  readonly byKey: Map<string, Listed>;
}

function heapOf(queue: HostQueue, entry: RankOrder): Listed[] {
  return entry.group === KNOWN_GROUP ? queue.known : queue.fresh;
}

function place(heap: Listed[], entry: Listed, at: number): void {
  heap[at] = entry;
  entry.at = at;
}

/** Moves heap[at] towards the root while it ranks before its parent. */
function siftUp(heap: Listed[], at: number): void {
  const entry = heap[at]!;
  while (at > 0) {
    const parent = (at - 1) >> 1;
    const above = heap[parent]!;
    if (compareQueueRanks(above, entry) <= 0) break;
    place(heap, above, at);
    at = parent;
  }
  place(heap, entry, at);
}

/** Moves heap[at] towards the leaves while a child ranks before it. */
function siftDown(heap: Listed[], at: number): void {
  const entry = heap[at]!;
  const n = heap.length;
  for (;;) {
    let child = 2 * at + 1;
    if (child >= n) break;
    if (child + 1 < n && compareQueueRanks(heap[child + 1]!, heap[child]!) < 0) child++;
    const below = heap[child]!;
    if (compareQueueRanks(entry, below) <= 0) break;
    place(heap, below, at);
    at = child;
  }
  place(heap, entry, at);
}

function push(heap: Listed[], entry: Listed): void {
  entry.at = heap.length;
  heap.push(entry);
  siftUp(heap, entry.at);
}

function unheap(heap: Listed[], entry: Listed): void {
  const at = entry.at;
  if (heap[at] !== entry) return;
  const last = heap.pop()!;
  entry.at = -1;
  if (last === entry) return;
  place(heap, last, at);
  siftUp(heap, at);
  siftDown(heap, last.at);
}

function emptyQueue(): HostQueue {
  return { fresh: [], known: [], byKey: new Map() };
}

/** A host's entries in queue order (a sorted copy: heaps are only ordered along their paths). */
function inOrder(queue: HostQueue): Listed[] {
  return [...queue.fresh.slice().sort(compareQueueRanks), ...queue.known.slice().sort(compareQueueRanks)];
}

/** What the queue counts of a host's state: the URLs waiting in its queue. */
export interface QueuedCount {
  queued: number;
}

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
    // A sorted array is a heap already.
    const list = stored.map((e, i) => listed(e.key, e.url, ranks[i] ?? queueRank(host, e.key)));
    list.sort(compareQueueRanks);
    queue = emptyQueue();
    for (const e of list) {
      const heap = heapOf(queue, e);
      place(heap, e, heap.length);
      queue.byKey.set(e.key, e);
    }
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
      this.entries -= queue.byKey.size;
    }
  }

  private static insert(queue: HostQueue, entry: Listed): void {
    push(heapOf(queue, entry), entry);
    queue.byKey.set(entry.key, entry);
  }

  private static take(queue: HostQueue, key: string): QueueEntry | undefined {
    const entry = queue.byKey.get(key);
    if (!entry) return undefined;
    queue.byKey.delete(key);
    unheap(heapOf(queue, entry), entry);
    return entry;
  }

  /**
   * Adds to the store and, if the host is loaded, to its queue. `rank` defaults to the key's (an
   * entry queued just now); an entry put back after it was taken keeps the rank it had.
   * `entriesBefore`: how many entries the host's queue held, when the caller knows (the host
   * state's count). A queue known to be empty starts in memory with this entry, instead of being
   * read back from the store at its next use: a range read that first writes the stores'
   * committed writes to RocksDB, about half a millisecond each time a host's queue starts anew.
   */
  /**
   * URLs queued over every host of the partition: the sum of the hosts' `queued` counts, which
   * change only through enqueue, dequeue, clearCount and countRestored.
   */
  total = 0;

  /** Queues `url` under `key` on `host`: its entry, the host's count and the partition's. */
  enqueue(host: string, state: QueuedCount, key: string, url: string, rank?: QueueRank): void {
    this.add(host, key, url, rank, state.queued);
    state.queued++;
    this.total++;
  }

  /** Takes the entry under `key` off the host's queue, and one off both counts. */
  dequeue(host: string, state: QueuedCount, key: string): void {
    this.remove(host, key);
    state.queued--;
    this.total--;
  }

  /** The host's queue was given up (its entries removed one by one): its count is zero. */
  clearCount(state: QueuedCount): void {
    this.total -= state.queued;
    state.queued = 0;
  }

  /** A host's stored count, as the partition starts. */
  countRestored(state: QueuedCount): void {
    this.total += state.queued;
  }

  add(host: string, key: string, url: string, rank?: QueueRank, entriesBefore?: number): void {
    this.store.put(key, url);
    let queue = this.hosts.get(host);
    if (!queue && entriesBefore === 0) {
      queue = emptyQueue();
      this.hosts.set(host, queue);
    }
    if (!queue) return;
    QueueCache.insert(queue, listed(key, url, rank ?? queueRank(host, key)));
    this.entries++;
    if (this.entries > this.maxEntries) this.evict(host);
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
    const heap = queue.fresh;
    if (heap[entry.at] !== entry) return;
    const before = entry.inverted;
    entry.inverted = entry.rank.inverted = rescoredInverted(entry.rank, score);
    if (entry.inverted < before) siftUp(heap, entry.at);
    else if (entry.inverted > before) siftDown(heap, entry.at);
  }

  async head(host: string): Promise<QueueEntry | undefined> {
    const queue = await this.load(host);
    return queue.fresh[0] ?? queue.known[0];
  }

  /** Best new URL (discovery queue). */
  async headNew(host: string): Promise<QueueEntry | undefined> {
    return (await this.load(host)).fresh[0];
  }

  /** Best known URL due for a revisit (they rank after every new URL). */
  async headKnown(host: string): Promise<QueueEntry | undefined> {
    return (await this.load(host)).known[0];
  }

  /** New URLs in the host's queue when it is in memory, without a read; undefined when it is not. */
  cachedNewCount(host: string): number | undefined {
    return this.hosts.get(host)?.fresh.length;
  }

  /** Known URLs in the host's queue. */
  async knownCount(host: string): Promise<number> {
    return (await this.load(host)).known.length;
  }

  /** The host's entries in queue order. */
  async all(host: string): Promise<readonly QueueEntry[]> {
    return inOrder(await this.load(host));
  }
}
