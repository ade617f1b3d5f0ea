/**
 * Indexed binary max-heap over node ids 0..capacity-1 with increase/decrease-key.
 *
 * Keys live in node-indexed typed arrays (priority, then a tie key where smaller wins), so an
 * update is one array write plus a sift; nothing is allocated per operation. IPR changes the
 * score of queued nodes on every fetched out-link, which is why plain re-insertion is not used.
 */
export class IndexedMaxHeap {
  readonly prio: Float64Array;
  readonly tie: Float64Array;
  private readonly heap: Uint32Array;
  /** Position of a node in `heap`, or -1 when absent. */
  private readonly pos: Int32Array;
  private n = 0;

  constructor(capacity: number) {
    this.prio = new Float64Array(capacity);
    this.tie = new Float64Array(capacity);
    this.heap = new Uint32Array(capacity);
    this.pos = new Int32Array(capacity).fill(-1);
  }

  get size(): number {
    return this.n;
  }

  has(node: number): boolean {
    return this.pos[node]! >= 0;
  }

  /** a ranks before b. */
  private before(a: number, b: number): boolean {
    const pa = this.prio[a]!;
    const pb = this.prio[b]!;
    return pa > pb || (pa === pb && this.tie[a]! < this.tie[b]!);
  }

  push(node: number, priority: number, tie: number): void {
    this.prio[node] = priority;
    this.tie[node] = tie;
    const i = this.n++;
    this.heap[i] = node;
    this.pos[node] = i;
    this.up(i);
  }

  /** Set a queued node's priority (either direction). */
  update(node: number, priority: number): void {
    const old = this.prio[node]!;
    this.prio[node] = priority;
    const i = this.pos[node]!;
    if (i < 0) return;
    if (priority > old) this.up(i);
    else if (priority < old) this.down(i);
  }

  /** Add to a queued node's priority; the common IPR case (always sifts up). */
  add(node: number, delta: number): void {
    this.prio[node] = this.prio[node]! + delta;
    const i = this.pos[node]!;
    if (i >= 0) {
      if (delta > 0) this.up(i);
      else if (delta < 0) this.down(i);
    }
  }

  peek(): number | undefined {
    return this.n > 0 ? this.heap[0] : undefined;
  }

  pop(): number | undefined {
    if (this.n === 0) return undefined;
    const top = this.heap[0]!;
    this.pos[top] = -1;
    const last = this.heap[--this.n]!;
    if (this.n > 0) {
      this.heap[0] = last;
      this.pos[last] = 0;
      this.down(0);
    }
    return top;
  }

  /** Rebuild heap order after many priorities changed at once (Floyd heapify, O(n)). */
  heapify(): void {
    for (let i = (this.n >> 1) - 1; i >= 0; i--) this.down(i);
  }

  /** Queued nodes in heap-array order (not sorted). */
  nodes(): Uint32Array {
    return this.heap.subarray(0, this.n);
  }

  private up(i: number): void {
    const heap = this.heap;
    const pos = this.pos;
    const node = heap[i]!;
    while (i > 0) {
      const parent = (i - 1) >> 1;
      const pn = heap[parent]!;
      if (!this.before(node, pn)) break;
      heap[i] = pn;
      pos[pn] = i;
      i = parent;
    }
    heap[i] = node;
    pos[node] = i;
  }

  private down(i: number): void {
    const heap = this.heap;
    const pos = this.pos;
    const n = this.n;
    const node = heap[i]!;
    while (true) {
      const l = 2 * i + 1;
      if (l >= n) break;
      const r = l + 1;
      let c = l;
      if (r < n && this.before(heap[r]!, heap[l]!)) c = r;
      const cn = heap[c]!;
      if (!this.before(cn, node)) break;
      heap[i] = cn;
      pos[cn] = i;
      i = c;
    }
    heap[i] = node;
    pos[node] = i;
  }
}
