/**
 * Link graphs in CSR form (typed arrays), loaders for the `src dst` edge-list / `id url` formats,
 * and a seeded generator of web-like graphs that streams the same formats.
 */
import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import { fmix32 } from '../common/hash.ts';

export interface Graph {
  /** Number of nodes (ids 0..n-1). */
  n: number;
  /** Number of edges after removing duplicate (src, dst) pairs. */
  m: number;
  /** Out-links of v are targets[offsets[v] .. offsets[v+1]), in file (= page) order. */
  offsets: Uint32Array;
  targets: Uint32Array;
  /** Host id per node (same-site tie-break); absent = all one site. */
  host?: Int32Array;
  /** Number of '/' in the URL and URL length (BLC tie-break); absent = all equal. */
  slashes?: Uint8Array;
  urlLength?: Uint16Array;
  /** Node -> URL, when a URL list was loaded. */
  urls?: string[];
}

export function outDegree(g: Graph, v: number): number {
  return g.offsets[v + 1]! - g.offsets[v]!;
}

export function outLinks(g: Graph, v: number): Uint32Array {
  return g.targets.subarray(g.offsets[v]!, g.offsets[v + 1]!);
}

/** Growable Uint32Array, so building from a stream never holds JS arrays of numbers. */
class U32Builder {
  buf = new Uint32Array(1 << 16);
  length = 0;
  push(x: number): void {
    if (this.length === this.buf.length) {
      const next = new Uint32Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.length++] = x;
  }
  view(): Uint32Array {
    return this.buf.subarray(0, this.length);
  }
}

/**
 * Build CSR from parallel src/dst arrays. Keeps each source's links in input order and drops
 * repeated (src, dst) pairs: "pages linking to" counts pages, and a page distributes its score
 * once per distinct target.
 */
export function buildCsr(n: number, src: Uint32Array, dst: Uint32Array): Graph {
  const counts = new Uint32Array(n + 1);
  for (let i = 0; i < src.length; i++) counts[src[i]! + 1]!++;
  for (let v = 0; v < n; v++) counts[v + 1] = counts[v + 1]! + counts[v]!;
  const fill = counts.slice(0, n);
  const raw = new Uint32Array(src.length);
  for (let i = 0; i < src.length; i++) raw[fill[src[i]!]!++] = dst[i]!;
  // Dedup per source with a stamp array (stamp = source + 1).
  const stamp = new Uint32Array(n);
  const offsets = new Uint32Array(n + 1);
  let w = 0;
  for (let v = 0; v < n; v++) {
    offsets[v] = w;
    const mark = v + 1;
    for (let i = counts[v]!, end = counts[v + 1]!; i < end; i++) {
      const t = raw[i]!;
      if (stamp[t] === mark) continue;
      stamp[t] = mark;
      raw[w++] = t;
    }
  }
  offsets[n] = w;
  return { n, m: w, offsets, targets: raw.slice(0, w) };
}

/** Call onLine for every line of a file, reading in fixed-size chunks (files may exceed string limits). */
function forEachLine(path: string, onLine: (line: string) => void): void {
  const fd = openSync(path, 'r');
  try {
    const chunk = Buffer.allocUnsafe(1 << 22);
    let rest = '';
    while (true) {
      const got = readSync(fd, chunk, 0, chunk.length, null);
      if (got === 0) break;
      const text = rest + chunk.toString('utf8', 0, got);
      let start = 0;
      let nl = text.indexOf('\n', start);
      while (nl >= 0) {
        onLine(text.slice(start, nl));
        start = nl + 1;
        nl = text.indexOf('\n', start);
      }
      rest = text.slice(start);
    }
    if (rest.length > 0) onLine(rest);
  } finally {
    closeSync(fd);
  }
}

/** Parse `src dst` lines (`#` comments, blank lines ignored). */
export function parseEdgeLines(lines: Iterable<string>): Graph {
  const src = new U32Builder();
  const dst = new U32Builder();
  let maxId = -1;
  for (const line of lines) addEdgeLine(line, src, dst, (id) => (maxId = Math.max(maxId, id)));
  return buildCsr(maxId + 1, src.view(), dst.view());
}

function addEdgeLine(line: string, src: U32Builder, dst: U32Builder, seen: (id: number) => void): void {
  const s = line.trim();
  if (s.length === 0 || s.startsWith('#')) return;
  const sp = s.search(/\s/);
  if (sp < 0) throw new Error(`bad edge line: ${line}`);
  const a = Number(s.slice(0, sp));
  const b = Number(s.slice(sp).trim());
  if (!Number.isInteger(a) || !Number.isInteger(b) || a < 0 || b < 0) throw new Error(`bad edge line: ${line}`);
  src.push(a);
  dst.push(b);
  seen(a > b ? a : b);
}

/** Host part of an absolute URL without a full parse (malformed URLs get their own host). */
export function hostOf(url: string): string {
  const scheme = url.indexOf('://');
  const start = scheme >= 0 ? scheme + 3 : 0;
  let end = start;
  while (end < url.length) {
    const c = url.charCodeAt(end);
    if (c === 47 || c === 63 || c === 35) break; // / ? #
    end++;
  }
  return url.slice(start, end).toLowerCase();
}

/** Attach a URL list (node -> URL): fills urls, host, slashes and urlLength. */
export function attachUrls(g: Graph, urls: string[]): Graph {
  const n = Math.max(g.n, urls.length);
  const gg = n === g.n ? g : extendNodes(g, n);
  const host = new Int32Array(n);
  const slashes = new Uint8Array(n);
  const urlLength = new Uint16Array(n);
  const hostIds = new Map<string, number>();
  for (let v = 0; v < n; v++) {
    const u = urls[v] ?? '';
    const h = hostOf(u);
    let id = hostIds.get(h);
    if (id === undefined) {
      id = hostIds.size;
      hostIds.set(h, id);
    }
    host[v] = id;
    let s = 0;
    for (let i = 0; i < u.length; i++) if (u.charCodeAt(i) === 47) s++;
    slashes[v] = Math.min(s, 255);
    urlLength[v] = Math.min(u.length, 65535);
  }
  return { ...gg, host, slashes, urlLength, urls: Array.from({ length: n }, (_, v) => urls[v] ?? '') };
}

function extendNodes(g: Graph, n: number): Graph {
  const offsets = new Uint32Array(n + 1);
  offsets.set(g.offsets);
  offsets.fill(g.m, g.n + 1);
  return { ...g, n, offsets };
}

/** Load an edge list file and, optionally, its `id url` list. */
export function loadGraph(edgesPath: string, urlsPath?: string): Graph {
  const src = new U32Builder();
  const dst = new U32Builder();
  let maxId = -1;
  forEachLine(edgesPath, (line) => addEdgeLine(line, src, dst, (id) => (maxId = Math.max(maxId, id))));
  const g = buildCsr(maxId + 1, src.view(), dst.view());
  if (urlsPath === undefined) return g;
  const urls: string[] = [];
  forEachLine(urlsPath, (line) => {
    const s = line.trim();
    if (s.length === 0 || s.startsWith('#')) return;
    const sp = s.search(/\s/);
    if (sp < 0) return;
    const id = Number(s.slice(0, sp));
    if (Number.isInteger(id) && id >= 0) urls[id] = s.slice(sp).trim();
  });
  return attachUrls(g, urls);
}

// ---------------------------------------------------------------------------------------------
// Generator

/** xoshiro128** — small, fast, seedable; enough for synthetic graphs. */
export class Rng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;
  constructor(seed: number) {
    // splitmix32 to spread the seed over the state.
    let x = seed >>> 0;
    const next = (): number => {
      x = (x + 0x9e3779b9) >>> 0;
      return fmix32(x);
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next() | 1;
  }
  /** Uniform in [0, 1). */
  float(): number {
    const r = Math.imul(((Math.imul(this.b, 5) << 7) | (Math.imul(this.b, 5) >>> 25)), 9) >>> 0;
    const t = this.b << 9;
    this.c ^= this.a;
    this.d ^= this.b;
    this.b ^= this.c;
    this.a ^= this.d;
    this.c ^= t;
    this.d = (this.d << 11) | (this.d >>> 21);
    return r / 4294967296;
  }
}

export interface GenerateOptions {
  nodes: number;
  seed?: number;
  /** Mean number of pages per host (host sizes are power-law). Default 200. */
  meanHostSize?: number;
  /** Share of random links that stay on the page's host. Default 0.85. */
  intraHost?: number;
  /** Pareto exponent of the random out-degree (gamma, > 2). Default 2.5. */
  outExponent?: number;
  /** Minimum random out-degree. Default 3. */
  minOut?: number;
  /** Skew of link targets towards low-index pages; in-degree rank exponent is 1 - 1/skew. Default 4. */
  skew?: number;
  /** Share of same-host random links that go to a page near the source (same directory). Default 0. */
  nearby?: number;
}

interface HostTable {
  /** First node of host h is start[h]; size = start[h+1] - start[h]. */
  start: Uint32Array;
  count: number;
}

function makeHosts(o: Required<GenerateOptions>, rng: Rng): HostTable {
  // Pareto host sizes (alpha 1.5 -> heavy tail), scaled to sum to `nodes`.
  const starts = new U32Builder();
  let total = 0;
  const xmin = o.meanHostSize / 3;
  while (total < o.nodes) {
    const size = Math.max(1, Math.min(o.nodes - total, Math.floor(xmin * Math.pow(1 - rng.float(), -1 / 1.5))));
    starts.push(total);
    total += size;
  }
  starts.push(total);
  // Largest host first: the seed (node 0) is the root of a big site, like a portal.
  const s = starts.view();
  const count = s.length - 1;
  const sizes = Array.from({ length: count }, (_, h) => s[h + 1]! - s[h]!).sort((x, y) => y - x);
  const start = new Uint32Array(count + 1);
  for (let h = 0; h < count; h++) start[h + 1] = start[h]! + sizes[h]!;
  return { start, count };
}

function depthOf(local: number): number {
  // Navigation tree with fan-out 4: children of k are 4k+1..4k+4.
  let d = 0;
  while (local > 0) {
    local = (local - 1) >> 2;
    d++;
  }
  return d;
}

export function syntheticUrl(host: number, local: number): string {
  if (local === 0) return `http://h${host}.sim.test/`;
  return `http://h${host}.sim.test/${'s/'.repeat(depthOf(local) - 1)}p${local}.html`;
}

/**
 * Stream a web-like graph: calls onNode(v, host, local) then onEdge(v, t) for each out-link, node by
 * node in id order, holding only the host table in memory.
 *
 * Every page links to its navigation-tree children (so the whole host is reachable from its root)
 * and host roots link to the roots of hosts 2h+1 and 2h+2 (so everything is reachable from node 0);
 * the other links have Pareto out-degree and targets skewed to low-index pages of a host (roots,
 * shallow pages), which yields power-law in-degrees; most stay on the same host.
 */
export function generateGraphStream(
  opts: GenerateOptions,
  onNode: (v: number, host: number, local: number) => void,
  onEdge: (src: number, dst: number) => void,
): { nodes: number; hosts: number } {
  const o: Required<GenerateOptions> = {
    seed: 1,
    meanHostSize: 200,
    intraHost: 0.85,
    outExponent: 2.5,
    minOut: 3,
    skew: 4,
    nearby: 0,
    ...opts,
  };
  const rng = new Rng(o.seed);
  const hosts = makeHosts(o, rng);
  const { start, count } = hosts;
  const inv = -1 / (o.outExponent - 1);
  for (let h = 0; h < count; h++) {
    const base = start[h]!;
    const size = start[h + 1]! - base;
    for (let k = 0; k < size; k++) {
      const v = base + k;
      onNode(v, h, k);
      if (k === 0) {
        for (let c = 2 * h + 1; c <= 2 * h + 2 && c < count; c++) onEdge(v, start[c]!);
      }
      for (let c = 4 * k + 1; c <= 4 * k + 4 && c < size; c++) onEdge(v, base + c);
      const extra = Math.min(1000, Math.floor(o.minOut * Math.pow(1 - rng.float(), inv)));
      for (let e = 0; e < extra; e++) {
        let th = h;
        let tsize = size;
        if (rng.float() >= o.intraHost) {
          th = Math.floor(count * Math.pow(rng.float(), o.skew));
          tsize = start[th + 1]! - start[th]!;
        }
        let local: number;
        if (th === h && rng.float() < o.nearby) {
          // Same-directory style link: a page close to the source in the navigation tree.
          local = Math.min(size - 1, Math.max(0, k + Math.floor((rng.float() - 0.5) * 64)));
        } else {
          local = Math.floor(tsize * Math.pow(rng.float(), o.skew));
        }
        onEdge(v, start[th]! + local);
      }
    }
  }
  return { nodes: o.nodes, hosts: count };
}

/** Generate in memory (CSR + host/slashes/urlLength arrays, no URL strings). */
export function generateGraph(opts: GenerateOptions): Graph {
  const n = opts.nodes;
  const src = new U32Builder();
  const dst = new U32Builder();
  const host = new Int32Array(n);
  const slashes = new Uint8Array(n);
  const urlLength = new Uint16Array(n);
  generateGraphStream(
    opts,
    (v, h, local) => {
      host[v] = h;
      // Generation is not the hot path; measuring the real string keeps file and memory forms equal.
      const u = syntheticUrl(h, local);
      let sl = 0;
      for (let i = 0; i < u.length; i++) if (u.charCodeAt(i) === 47) sl++;
      slashes[v] = Math.min(255, sl);
      urlLength[v] = Math.min(65535, u.length);
    },
    (a, b) => {
      src.push(a);
      dst.push(b);
    },
  );
  return { ...buildCsr(n, src.view(), dst.view()), host, slashes, urlLength };
}

/** Write a generated graph to `edgesPath` (and `urlsPath`) in the loader's format, streaming. */
export function writeGeneratedGraph(opts: GenerateOptions, edgesPath: string, urlsPath?: string): { nodes: number; edges: number } {
  const ef = openSync(edgesPath, 'w');
  const uf = urlsPath === undefined ? -1 : openSync(urlsPath, 'w');
  let edges = 0;
  let ebuf = `# generated web-like graph nodes=${opts.nodes} seed=${opts.seed ?? 1}; src dst\n`;
  let ubuf = '';
  try {
    generateGraphStream(
      opts,
      (v, h, local) => {
        if (uf >= 0) {
          ubuf += `${v} ${syntheticUrl(h, local)}\n`;
          if (ubuf.length > 1 << 20) {
            writeSync(uf, ubuf);
            ubuf = '';
          }
        }
      },
      (a, b) => {
        edges++;
        ebuf += `${a} ${b}\n`;
        if (ebuf.length > 1 << 20) {
          writeSync(ef, ebuf);
          ebuf = '';
        }
      },
    );
    writeSync(ef, ebuf);
    if (uf >= 0) writeSync(uf, ubuf);
  } finally {
    closeSync(ef);
    if (uf >= 0) closeSync(uf);
  }
  return { nodes: opts.nodes, edges };
}
