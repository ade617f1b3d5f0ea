/**
 * Crawl-ordering strategies behind one interface. A crawl (or a replay) loop is:
 *
 *   s.addSeed(seed);
 *   for (let p = s.next(); p !== undefined; p = s.next()) s.onFetched(p, outLinksOf(p));
 *
 * `next()` removes and returns the discovered-but-unfetched node with the highest priority;
 * `onFetched` reports the fetched page's out-links (graph extension), registers newly discovered
 * nodes and updates priorities. Node ids are dense integers below `capacity`.
 *
 * Shared tie-break: nodes are numbered in discovery order, and among the new links found on one
 * page the same-site ones are numbered first; equal priorities go to the lower discovery number.
 */
import { IndexedMaxHeap } from './heap.ts';

export interface NodeInfo {
  /** Host id per node; absent = all on one site. */
  host?: Int32Array;
  /** '/' count and URL length per node (BLC tie-break). */
  slashes?: Uint8Array;
  urlLength?: Uint16Array;
}

export interface OrderingStrategy {
  readonly name: string;
  /** Discovered, not yet fetched. */
  readonly size: number;
  addSeed(node: number): void;
  next(): number | undefined;
  onFetched(node: number, outLinks: Uint32Array): void;
}

export const STRATEGY_NAMES = ['bf', 'blc', 'pr', 'ipr-dl1', 'ipr-pl', 'ipr-vr', 'ipr-ar', 'opic'] as const;
export type StrategyName = (typeof STRATEGY_NAMES)[number];

export interface StrategyOptions {
  /** PR: recompute every R fetched pages. Default max(1, round(0.01 * capacity)) (the paper's 165k / 16.5M). */
  recomputeEvery?: number;
  /** PR: damping factor. Default 0.85. */
  damping?: number;
  /** IPR-PL: pages updated after DL1. Default 8. */
  pageLimit?: number;
  /** IPR-VR: propagate when beta / s_q >= threshold. Default 1.5. */
  valueRatio?: number;
  /** IPR-AR: propagate accumulated a_q when a_q / s_q >= threshold (s_q includes a_q). Default 29/30. */
  accumulatedRatio?: number;
  /** Safety cap on propagation steps per fetched page (VR/AR). Default 100,000. */
  maxSteps?: number;
}

const UNKNOWN = 0;
const QUEUED = 1;
const FETCHED = 2;

/** Discovery bookkeeping common to every strategy. */
abstract class Base implements OrderingStrategy {
  abstract readonly name: string;
  protected readonly state: Uint8Array;
  /** Discovery number per node. */
  protected readonly seq: Float64Array;
  protected nextSeq = 0;
  protected queued = 0;
  protected readonly host: Int32Array | undefined;

  constructor(
    readonly capacity: number,
    protected readonly info: NodeInfo,
  ) {
    this.state = new Uint8Array(capacity);
    this.seq = new Float64Array(capacity);
    this.host = info.host;
  }

  get size(): number {
    return this.queued;
  }

  addSeed(node: number): void {
    if (this.state[node] !== UNKNOWN) return;
    this.discover(node, -1);
  }

  next(): number | undefined {
    const v = this.take();
    if (v === undefined) return undefined;
    this.state[v] = FETCHED;
    this.queued--;
    return v;
  }

  onFetched(node: number, outLinks: Uint32Array): void {
    this.state[node] = FETCHED;
    const host = this.host;
    if (host === undefined) {
      for (let i = 0; i < outLinks.length; i++) {
        const t = outLinks[i]!;
        if (this.state[t] === UNKNOWN) this.discover(t, node);
      }
    } else {
      // Same-site links first, then the rest (both in page order).
      const h = host[node]!;
      for (let i = 0; i < outLinks.length; i++) {
        const t = outLinks[i]!;
        if (this.state[t] === UNKNOWN && host[t] === h) this.discover(t, node);
      }
      for (let i = 0; i < outLinks.length; i++) {
        const t = outLinks[i]!;
        if (this.state[t] === UNKNOWN) this.discover(t, node);
      }
    }
    this.update(node, outLinks);
  }

  private discover(node: number, from: number): void {
    this.state[node] = QUEUED;
    this.seq[node] = this.nextSeq++;
    this.queued++;
    this.onDiscovered(node, from);
  }

  /** A new node entered the queue (seq already assigned). */
  protected abstract onDiscovered(node: number, from: number): void;
  /** Remove the best queued node. */
  protected abstract take(): number | undefined;
  /** Priority update after a fetch (discovery already done). */
  protected abstract update(node: number, outLinks: Uint32Array): void;
}

/** Breadth-first: a FIFO of discovery order (each node enters once, so a flat array suffices). */
export class BreadthFirst extends Base {
  readonly name = 'bf';
  private readonly fifo: Uint32Array;
  private head = 0;
  private tail = 0;
  constructor(capacity: number, info: NodeInfo = {}) {
    super(capacity, info);
    this.fifo = new Uint32Array(capacity);
  }
  protected onDiscovered(node: number): void {
    this.fifo[this.tail++] = node;
  }
  protected take(): number | undefined {
    return this.head < this.tail ? this.fifo[this.head++] : undefined;
  }
  protected update(): void {}
}

/** Heap-backed strategies share a heap whose tie key defaults to the discovery number. */
abstract class HeapBase extends Base {
  protected readonly heap: IndexedMaxHeap;
  constructor(capacity: number, info: NodeInfo) {
    super(capacity, info);
    this.heap = new IndexedMaxHeap(capacity);
  }
  protected take(): number | undefined {
    return this.heap.pop();
  }
  protected onDiscovered(node: number): void {
    this.heap.push(node, this.initialPriority(node), this.tieKey(node));
  }
  protected initialPriority(_node: number): number {
    return 0;
  }
  protected tieKey(node: number): number {
    return this.seq[node]!;
  }
}

/** Back-link count: number of fetched pages linking to the node. */
export class BackLinkCount extends HeapBase {
  readonly name = 'blc';
  constructor(capacity: number, info: NodeInfo = {}) {
    super(capacity, info);
  }
  protected override tieKey(node: number): number {
    // Fewer '/' first, then shorter URL, then discovery order; packed so one comparison decides.
    const s = this.info.slashes?.[node] ?? 0;
    const l = this.info.urlLength?.[node] ?? 0;
    return s * 2 ** 40 + l * 2 ** 24 + this.seq[node]!;
  }
  protected update(_node: number, outLinks: Uint32Array): void {
    // Out-links are deduplicated per page, so +1 per link = +1 per linking page.
    const heap = this.heap;
    for (let i = 0; i < outLinks.length; i++) {
      const t = outLinks[i]!;
      if (this.state[t] === QUEUED) heap.add(t, 1);
    }
  }
}

/**
 * Periodic PageRank: every R fetched pages, one power iteration (from the previous values) over the
 * known graph = fetched pages' links + discovered nodes; nodes without known out-links (all
 * unfetched ones) spread their mass uniformly. New nodes wait at priority 0 until the next round.
 */
export class PeriodicPageRank extends HeapBase {
  readonly name = 'pr';
  private readonly every: number;
  private readonly damping: number;
  private readonly rank: Float64Array;
  private readonly acc: Float64Array;
  /** Known nodes in discovery order; links of fetched nodes kept as CSR-ish chunks. */
  private readonly known: Uint32Array;
  private readonly linkStart: Int32Array;
  private readonly linkLen: Uint32Array;
  private links: Uint32Array;
  private linkCount = 0;
  private fetched = 0;
  recomputations = 0;

  constructor(capacity: number, info: NodeInfo = {}, opts: StrategyOptions = {}) {
    super(capacity, info);
    this.every = Math.max(1, opts.recomputeEvery ?? Math.round(0.01 * capacity));
    this.damping = opts.damping ?? 0.85;
    this.rank = new Float64Array(capacity);
    this.acc = new Float64Array(capacity);
    this.known = new Uint32Array(capacity);
    this.linkStart = new Int32Array(capacity).fill(-1);
    this.linkLen = new Uint32Array(capacity);
    this.links = new Uint32Array(1 << 16);
  }

  protected override onDiscovered(node: number): void {
    this.known[this.seq[node]!] = node;
    super.onDiscovered(node);
  }

  protected update(node: number, outLinks: Uint32Array): void {
    if (this.linkCount + outLinks.length > this.links.length) {
      let size = this.links.length * 2;
      while (size < this.linkCount + outLinks.length) size *= 2;
      const grown = new Uint32Array(size);
      grown.set(this.links.subarray(0, this.linkCount));
      this.links = grown;
    }
    this.links.set(outLinks, this.linkCount);
    this.linkStart[node] = this.linkCount;
    this.linkLen[node] = outLinks.length;
    this.linkCount += outLinks.length;
    if (++this.fetched % this.every === 0) this.recompute();
  }

  private recompute(): void {
    this.recomputations++;
    const k = this.nextSeq;
    const { rank, acc, known, linkStart, linkLen, links } = this;
    const d = this.damping;
    // Nodes discovered since the last round start at the uniform value.
    let dangling = 0;
    for (let i = 0; i < k; i++) {
      const v = known[i]!;
      if (rank[v] === 0) rank[v] = 1 / k;
      acc[v] = 0;
    }
    for (let i = 0; i < k; i++) {
      const v = known[i]!;
      const len = linkLen[v]!;
      const r = rank[v]!;
      if (len === 0) {
        dangling += r;
        continue;
      }
      const share = r / len;
      for (let j = linkStart[v]!, end = j + len; j < end; j++) acc[links[j]!]! += share;
    }
    let total = 0;
    for (let i = 0; i < k; i++) total += rank[known[i]!]!;
    const base = ((1 - d) * total + d * dangling) / k;
    const heap = this.heap;
    for (let i = 0; i < k; i++) {
      const v = known[i]!;
      const r = base + d * acc[v]!;
      rank[v] = r;
      if (this.state[v] === QUEUED) heap.prio[v] = r;
    }
    heap.heapify();
  }
}

type Cutoff = 'dl1' | 'pl' | 'vr' | 'ar';

/**
 * Incremental PageRank (Zao): on fetch, score += 1 and the whole score is split equally over the
 * out-links; the cut-off decides how far received increments travel beyond the direct targets.
 * Only fetched pages can pass score on (their out-links are known).
 */
export class IncrementalPageRank extends HeapBase {
  readonly name: string;
  private readonly score: Float64Array;
  /** AR: received but not yet propagated. */
  private readonly pending: Float64Array | undefined;
  private readonly cutoff: Cutoff;
  private readonly pageLimit: number;
  private readonly valueRatio: number;
  private readonly accRatio: number;
  private readonly maxSteps: number;
  private readonly outLinksOf: (node: number) => Uint32Array;
  /** Work queue for PL/VR/AR propagation: (node, amount) pairs. */
  private qNode: Uint32Array;
  private qAmt: Float64Array;
  /** Total propagation steps beyond DL1 (cost indicator). */
  extraUpdates = 0;

  /**
   * `outLinksOf` returns a fetched page's out-links (the crawler's link store); needed for
   * propagation beyond depth 1 only.
   */
  constructor(
    capacity: number,
    info: NodeInfo = {},
    cutoff: Cutoff = 'dl1',
    outLinksOf: (node: number) => Uint32Array = () => new Uint32Array(0),
    opts: StrategyOptions = {},
  ) {
    super(capacity, info);
    this.name = `ipr-${cutoff}`;
    this.cutoff = cutoff;
    this.score = this.heap.prio; // the heap priority is the score itself
    this.pending = cutoff === 'ar' ? new Float64Array(capacity) : undefined;
    this.pageLimit = opts.pageLimit ?? 8;
    this.valueRatio = opts.valueRatio ?? 1.5;
    this.accRatio = opts.accumulatedRatio ?? 29 / 30;
    this.maxSteps = opts.maxSteps ?? 100_000;
    this.outLinksOf = outLinksOf;
    this.qNode = new Uint32Array(1024);
    this.qAmt = new Float64Array(1024);
  }

  /** Current approximate PageRank of a node. */
  scoreOf(node: number): number {
    return this.score[node]!;
  }

  protected update(node: number, outLinks: Uint32Array): void {
    const score = this.score;
    const s = score[node]! + 1;
    score[node] = s;
    if (this.pending !== undefined) this.pending[node] = 0;
    const deg = outLinks.length;
    if (deg === 0) return;
    const beta = s / deg;
    const heap = this.heap;
    const cutoff = this.cutoff;
    if (cutoff === 'dl1') {
      for (let i = 0; i < deg; i++) heap.add(outLinks[i]!, beta);
      return;
    }
    if (cutoff === 'pl') {
      for (let i = 0; i < deg; i++) heap.add(outLinks[i]!, beta);
      this.propagateLimited(outLinks, beta);
      return;
    }
    // VR / AR: DL1 unconditionally, then recursive propagation from fetched targets.
    let tail = 0;
    for (let i = 0; i < deg; i++) {
      const t = outLinks[i]!;
      const before = score[t]!;
      heap.add(t, beta);
      if (this.state[t] === FETCHED) tail = this.afterReceive(t, before, beta, tail);
    }
    this.drain(tail);
  }

  /** PL: breadth-first from the new page's targets, updating at most L further pages. */
  private propagateLimited(outLinks: Uint32Array, beta: number): void {
    let head = 0;
    let tail = 0;
    for (let i = 0; i < outLinks.length; i++) tail = this.enqueue(tail, outLinks[i]!, beta);
    let updated = 0;
    const limit = this.pageLimit;
    while (head < tail && updated < limit) {
      const q = this.qNode[head]!;
      const amt = this.qAmt[head++]!;
      if (this.state[q] !== FETCHED) continue;
      const links = this.outLinksOf(q);
      if (links.length === 0) continue;
      const share = amt / links.length;
      for (let i = 0; i < links.length && updated < limit; i++) {
        const t = links[i]!;
        this.heap.add(t, share);
        updated++;
        tail = this.enqueue(tail, t, share);
      }
    }
    this.extraUpdates += updated;
  }

  /** VR/AR decision for a fetched page q that just received `beta` on top of `before`. */
  private afterReceive(q: number, before: number, beta: number, tail: number): number {
    if (this.pending === undefined) {
      return beta >= this.valueRatio * before ? this.enqueue(tail, q, beta) : tail;
    }
    const a = this.pending[q]! + beta;
    // s_q already includes a: a / s_q >= 29/30  <=>  s_q >= 30 x (score at the last propagation).
    if (a >= this.accRatio * this.score[q]!) {
      this.pending[q] = 0;
      return this.enqueue(tail, q, a);
    }
    this.pending[q] = a;
    return tail;
  }

  /** Propagate queued (page, amount) pairs; each page splits its amount over its out-links. */
  private drain(tail: number): void {
    let head = 0;
    let steps = 0;
    const score = this.score;
    const vr = this.pending === undefined;
    while (head < tail && steps < this.maxSteps) {
      const q = this.qNode[head]!;
      const amt = this.qAmt[head++]!;
      const links = this.outLinksOf(q);
      if (links.length === 0) continue;
      const share = amt / links.length;
      for (let i = 0; i < links.length; i++) {
        const t = links[i]!;
        const before = score[t]!;
        // VR: a target is updated only when the share is large relative to its score.
        if (vr && share < this.valueRatio * before) continue;
        this.heap.add(t, share);
        steps++;
        if (this.state[t] === FETCHED) tail = this.afterReceive(t, before, share, tail);
      }
      if (head === tail) head = tail = 0;
    }
    this.extraUpdates += steps;
  }

  private enqueue(tail: number, node: number, amount: number): number {
    if (tail === this.qNode.length) {
      const n = new Uint32Array(tail * 2);
      n.set(this.qNode);
      this.qNode = n;
      const a = new Float64Array(tail * 2);
      a.set(this.qAmt);
      this.qAmt = a;
    }
    this.qNode[tail] = node;
    this.qAmt[tail] = amount;
    return tail + 1;
  }
}

/**
 * OPIC (Abiteboul, Preda, Cobena 2003), crawl-once form: the seed starts with cash 1; a fetched
 * page adds its cash to its history and gives it away equally to its out-links (cash drops to 0).
 * Unlike IPR no value is injected per fetch, so total cash stays 1; the queue orders by cash.
 * A page without out-links gives its cash to every queued page (OPIC's virtual page), done lazily
 * through a global offset so it costs O(1).
 */
export class Opic extends HeapBase {
  readonly name = 'opic';
  readonly history: Float64Array;
  private seeded = false;
  constructor(capacity: number, info: NodeInfo = {}) {
    super(capacity, info);
    this.history = new Float64Array(capacity);
  }
  protected override initialPriority(): number {
    if (this.seeded) return 0;
    this.seeded = true;
    return 1;
  }
  protected update(node: number, outLinks: Uint32Array): void {
    const cash = this.heap.prio[node]!;
    this.history[node] = this.history[node]! + cash;
    this.heap.prio[node] = 0;
    const deg = outLinks.length;
    // Dangling cash is dropped: a uniform gift to all queued pages would not change their order.
    if (deg === 0) return;
    const share = cash / deg;
    for (let i = 0; i < deg; i++) {
      const t = outLinks[i]!;
      if (this.state[t] === FETCHED) this.history[t] = this.history[t]! + share;
      else this.heap.add(t, share);
    }
  }
}

export function createStrategy(
  name: StrategyName,
  capacity: number,
  info: NodeInfo = {},
  outLinksOf?: (node: number) => Uint32Array,
  opts: StrategyOptions = {},
): OrderingStrategy {
  switch (name) {
    case 'bf':
      return new BreadthFirst(capacity, info);
    case 'blc':
      return new BackLinkCount(capacity, info);
    case 'pr':
      return new PeriodicPageRank(capacity, info, opts);
    case 'ipr-dl1':
      return new IncrementalPageRank(capacity, info, 'dl1', outLinksOf, opts);
    case 'ipr-pl':
      return new IncrementalPageRank(capacity, info, 'pl', outLinksOf, opts);
    case 'ipr-vr':
      return new IncrementalPageRank(capacity, info, 'vr', outLinksOf, opts);
    case 'ipr-ar':
      return new IncrementalPageRank(capacity, info, 'ar', outLinksOf, opts);
    case 'opic':
      return new Opic(capacity, info);
  }
}

export function isStrategyName(s: string): s is StrategyName {
  return (STRATEGY_NAMES as readonly string[]).includes(s);
}
