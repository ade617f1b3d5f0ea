/**
 * The content model of the simulated web, independent of sockets: hosts, page paths, the link
 * graph, special pages, host behaviours, robots.txt and the ground-truth crawl. The HTTP server
 * (server.ts) only renders what `resolve()` says.
 *
 * Graph: host i has P pages numbered 0..P-1, page 0 is `/`. Page n links to its tree children
 * b*n+1..b*n+b (a spanning tree, so every page is reachable from `/` within `treeDepth()` hops), to
 * `/` (nav), and to ~linksPerPage random targets: same-host with probability `sameHostShare`, the
 * target page drawn from a Zipf law over a per-host scattering of ranks (page 0 the most popular),
 * otherwise a Zipf-drawn other host and page. Special pages (redirects, images, ...) are only
 * assigned to tree leaves so they never cut the spanning tree.
 */

import { ChangeModel, type ChangeEvent, type ChangeOptions, type PageState } from './changes.ts';
import { affineMultiplier, hash01, hashInts, rngFor, zipfRank, type Rng } from './random.ts';
import {
  defaultRobots,
  parseRobots,
  robotsAllows,
  type RobotsGenOptions,
  type RobotsResponse,
  type RobotsRules,
} from './robots.ts';

/** How a host fails some or all requests. */
export interface FailSpec {
  /** 'status' answers with `status`; 'reset' resets the TCP connection; 'hang' never answers. Default 'status'. */
  mode?: 'status' | 'reset' | 'hang';
  /** Status for mode 'status'. Default 503 when retryAfterSec is set, else 500. */
  status?: number;
  /** Adds `Retry-After` (seconds, or an HTTP date if retryAfterAsDate). */
  retryAfterSec?: number;
  retryAfterAsDate?: boolean;
  /** Probability that an attempt fails, decided deterministically per (URL, attempt number). Default 1. */
  rate?: number;
  /** Fail only the first N attempts at each URL, then serve normally. */
  firstAttempts?: number;
}

/** Per-host serving behaviour. */
export interface HostBehavior {
  /** Extra wall-clock delay before each response. */
  latencyMs?: number;
  fail?: FailSpec;
  /** Answer `status` (default 429) with Retry-After when a request comes sooner than `minIntervalMs` (clock time) after the previous one to this host. */
  rateLimit?: { minIntervalMs: number; status?: 429 | 503; retryAfterSec?: number };
  /** Send `Connection: close` on the Nth request of each connection. */
  closeAfter?: number;
  /** Which validators the host sends and honours. */
  validators?: 'both' | 'etag' | 'last-modified' | 'none';
  /** Whether the host compresses when the client accepts it. */
  compression?: boolean;
  /** Calendar trap: `/` links to `/cal?date=...`, each day links to the next and previous day forever. */
  calendar?: boolean;
  /** Apply latency/fail/rateLimit to /robots.txt too (by default robots.txt is served normally). */
  hostileRobots?: boolean;
  /** Loopback IP this host is served on (must be one of the listen IPs). */
  ip?: string;
  /**
   * Explicit redirects by exact path (with query): the path answers `status` with this `Location`
   * (relative or absolute, any host). For tests of redirect handling; not part of the ground truth.
   */
  redirects?: Record<string, { location: string; status?: 301 | 302 | 303 | 307 | 308 }>;
  /**
   * Fixed documents by exact path (with query), served as given before anything else (robots.txt
   * included): sitemaps, feeds, extra pages. For tests; not part of the ground truth.
   */
  documents?: Record<string, { body: string | Uint8Array; contentType: string; status?: number }>;
}

/** Selects hosts for a hostile behaviour: explicit names/indexes, or a count/share picked by seed (never h0). */
export interface HostPick {
  hosts?: (string | number)[];
  count?: number;
  share?: number;
}

/** Shares of tree-leaf pages turned into special pages (all 0 by default). */
export interface SpecialPageShares {
  /** 301/302 chains of 1-3 hops (`/go/<n>`) to another page. */
  redirect?: number;
  /** Two URLs redirecting to each other (`/loop/<n>/a`). */
  redirectLoop?: number;
  /** image/png (`/img/<n>.png`). */
  png?: number;
  /** application/pdf (`/doc/<n>.pdf`). */
  pdf?: number;
  /** Random bytes served as text/html (`/bin/<n>.html`). */
  binaryAsHtml?: number;
  /** Sloppy HTML (unquoted/uppercase attributes, unclosed tags, trailing junk); links still parse. */
  malformed?: number;
  /** ISO-8859-1 encoded page, declared by header or meta. */
  latin1?: number;
  /** Shift_JIS encoded page, declared by header or meta. */
  shiftJis?: number;
  /** A `hugeBytes` (10 MB) HTML body without links (`/big/<n>.html`). */
  huge?: number;
  /** gzip bomb: small compressed, `bombBytes` decompressed (`/bomb/<n>.html`). */
  gzipBomb?: number;
  /** Body that trickles forever (`/slow/<n>.html`). */
  slowBody?: number;
  /** Exact copies: every such page of the web serves the same bytes, a shared notice page without links (`/copy/<n>.html`). */
  duplicate?: number;
  /** Share of ordinary HTML pages that also carry unusable hrefs (`http://[::1`, `javascript:`, `mailto:`...). Not a page kind. */
  invalidLinks?: number;
}

export interface HostileOptions {
  slow?: HostPick & { latencyMs?: number };
  /** Permanent 5xx on every page. */
  error?: HostPick & { status?: number };
  /** Transient 5xx on a share of attempts (default 0.3). */
  flaky?: HostPick & { rate?: number; status?: number };
  reset?: HostPick;
  hang?: HostPick;
  /** 503 + Retry-After for the first attempts at each URL (default 2). */
  retryAfter?: HostPick & { retryAfterSec?: number; firstAttempts?: number };
  /** 429 when requests come faster than minIntervalMs (default 2000) of clock time. */
  tooMany?: HostPick & { minIntervalMs?: number; retryAfterSec?: number };
  calendar?: HostPick;
  closeAfter?: HostPick & { requests?: number };
  pages?: SpecialPageShares;
}

export interface ModelOptions {
  /** Seed of everything. Default 1. */
  seed?: number;
  /** Number of hosts h0..h(H-1). Default 10. */
  hosts?: number;
  /** Pages per host (page 0 is `/`). Default 40. */
  pagesPerHost?: number | ((hostIndex: number) => number);
  /** HTML body size in bytes for ordinary pages. Default 21,806. */
  pageBytes?: number;
  /** Mean number of random (non-tree, non-nav) links per page. Default 16. */
  linksPerPage?: number;
  /** Share of random links staying on the same host. Default 0.85. */
  sameHostShare?: number;
  /** Zipf exponent for link targets. Default 1. */
  zipfExponent?: number;
  /** Branching of the spanning tree. Default 8. */
  treeBranching?: number;
  /** Share of random links with rel="nofollow". Default 0.02. */
  nofollowShare?: number;
  /** Host names are `h<i>.<domain>`. Default 'sim.test'. */
  domain?: string;
  /** Crawler product token used in generated robots.txt groups and as the default for matching. Default 'meguri'. */
  userAgent?: string;
  /** First date of calendar traps. Default '2026-01-01'. */
  calendarStart?: string;
  robots?: RobotsGenOptions & { overrides?: Record<string, string | null | RobotsResponse> };
  validators?: { noneShare?: number; etagOnlyShare?: number; lastModifiedOnlyShare?: number };
  /** Share of hosts that never compress. Default 0.1. */
  noCompressionShare?: number;
  change?: ChangeOptions;
  hostile?: HostileOptions;
  /** Explicit per-host behaviour, merged over everything else. Keys are host names. */
  hostOverrides?: Record<string, HostBehavior>;
}

export type PageKind =
  | 'html'
  | 'malformed'
  | 'latin1'
  | 'sjis'
  | 'redirect'
  | 'loop'
  | 'png'
  | 'pdf'
  | 'binary'
  | 'huge'
  | 'bomb'
  | 'trickle'
  | 'duplicate';

/** One `<a href>` of a page. */
export interface Link {
  host: number;
  /** Absolute path plus query, the canonical form of the target. */
  path: string;
  nofollow: boolean;
  /** How the href is written. */
  form: 'root' | 'relative' | 'absolute' | 'protocol';
  fragment?: string;
  /** Write the host name in upper case (absolute/protocol forms). */
  upperHost?: boolean;
  /** Tokenised rel value variant: 0 `nofollow`, 1 `noopener nofollow`. */
  relVariant?: number;
  /** Where the link sits on the page. */
  role?: 'nav' | 'child' | 'body';
}

export type Resource =
  | {
      type: 'page';
      host: number;
      page: number;
      kind: 'html' | 'malformed' | 'latin1' | 'sjis';
      path: string;
      links: Link[];
      invalidLinks: boolean;
      state: PageState;
    }
  | { type: 'calendar'; host: number; date: string; path: string; links: Link[] }
  | { type: 'redirect'; host: number; path: string; status: 301 | 302; to: { host: number; path: string }; absolute: boolean }
  | { type: 'binary'; host: number; page: number; kind: 'png' | 'pdf' | 'binary' | 'huge' | 'bomb' | 'trickle' | 'duplicate'; path: string }
  | { type: 'gone'; host: number; page: number; path: string; status: 404 | 410 }
  | { type: 'notfound'; host: number; path: string };

/** How a correct crawler's fetch of a URL ends, as assumed by the ground truth. */
export type FetchOutcome = 'html' | 'redirect' | 'not-html' | 'error' | 'timeout';

export interface ExpectedFetchOptions {
  /** Absolute URLs; the port is ignored, unknown hosts count as errors. */
  seeds: string[];
  /** Seeds are depth 0; a link from a page at depth d leads to depth d+1, kept if <= maxDepth. */
  maxDepth: number;
  /** Time (clock ms) at which pages are fetched; decides which pages have disappeared. Default now. */
  at?: number;
  /** Product token for robots group selection. Default the model's userAgent. */
  userAgent?: string;
  /** Replaces the robots predicate (true = may fetch). */
  isAllowed?: (url: string) => boolean;
  /** Follow rel=nofollow links too. Default false. */
  followNofollow?: boolean;
  /** Depth added by following a redirect: 0 (default) means the target inherits the depth. */
  redirectCost?: 0 | 1;
  /** Only follow links within the seed hosts. Default false. */
  sameHostOnly?: boolean;
  /** Safety cap on the number of URLs. Default 5,000,000. */
  maxUrls?: number;
}

export interface FetchPlan {
  /** Every page URL a correct crawler requests (robots.txt fetches not included). */
  urls: Set<string>;
  depth: Map<string, number>;
  outcome: Map<string, FetchOutcome>;
  /** URLs discovered (or seeded) within the depth bound but excluded by robots. */
  disallowed: Set<string>;
}

const P_KIND = 0x7a01;
const P_PATH = 0x7a02;
const P_LINKS = 0x7a03;
const P_PERM = 0x7a04;
const P_HOSTPERM = 0x7a05;
const P_INVALID = 0x7a06;
const P_REDIR = 0x7a07;
const P_VALID = 0x7a08;
const P_COMP = 0x7a09;
const P_PICK = 0x7a0a;

const DAY = 86_400_000;

/** Order in which special page kinds are laid out on the unit interval. */
const SPECIAL_ORDER: [keyof SpecialPageShares, PageKind][] = [
  ['redirect', 'redirect'],
  ['redirectLoop', 'loop'],
  ['png', 'png'],
  ['pdf', 'pdf'],
  ['binaryAsHtml', 'binary'],
  ['malformed', 'malformed'],
  ['latin1', 'latin1'],
  ['shiftJis', 'sjis'],
  ['huge', 'huge'],
  ['gzipBomb', 'bomb'],
  ['slowBody', 'trickle'],
  ['duplicate', 'duplicate'],
];

/**
 * Everything hostile switched on at small shares: a web that looks like a bad day on the real
 * internet. For demos and soak runs; tests usually configure exactly what they need.
 */
export function hostilePreset(): HostileOptions {
  return {
    slow: { share: 0.02, latencyMs: 800 },
    error: { share: 0.01 },
    flaky: { share: 0.03, rate: 0.2 },
    reset: { share: 0.005 },
    hang: { share: 0.005 },
    retryAfter: { share: 0.01, retryAfterSec: 5, firstAttempts: 1 },
    tooMany: { share: 0.01, minIntervalMs: 1000, retryAfterSec: 2 },
    calendar: { count: 1 },
    closeAfter: { share: 0.05, requests: 5 },
    pages: {
      redirect: 0.03,
      redirectLoop: 0.003,
      png: 0.01,
      pdf: 0.01,
      binaryAsHtml: 0.002,
      malformed: 0.01,
      latin1: 0.01,
      shiftJis: 0.005,
      huge: 0.0005,
      gzipBomb: 0.0005,
      slowBody: 0.0005,
      invalidLinks: 0.02,
    },
  };
}

/** Whether a failure spec fails every attempt forever (vs transiently). */
export function isPermanentFailure(f: FailSpec | undefined): boolean {
  return f !== undefined && (f.rate ?? 1) >= 1 && f.firstAttempts === undefined;
}

/** Relative reference from document `from` to `to` (both absolute paths, optionally with query). */
export function relativeRef(from: string, to: string): string {
  const fromPath = from.split('?')[0] ?? '/';
  const q = to.indexOf('?');
  const toPath = q < 0 ? to : to.slice(0, q);
  const query = q < 0 ? '' : to.slice(q);
  const fromDirs = fromPath.slice(1, fromPath.lastIndexOf('/') + 1).split('/').slice(0, -1);
  const toParts = toPath.slice(1).split('/');
  const toDirs = toParts.slice(0, -1);
  let common = 0;
  while (common < fromDirs.length && common < toDirs.length && fromDirs[common] === toDirs[common]) common++;
  let ref = '../'.repeat(fromDirs.length - common) + toParts.slice(common).join('/') + query;
  if (ref === '' || ref.startsWith('?')) ref = './' + ref;
  return ref;
}

function formatDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

function parseDate(s: string): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(s);
  if (m === null) return undefined;
  const ms = Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  if (!Number.isFinite(ms) || formatDate(ms) !== s) return undefined;
  const year = Number(m[1]);
  return year >= 1900 && year <= 2199 ? ms : undefined;
}

export class SimWebModel {
  readonly seed: number;
  readonly hostCount: number;
  readonly domain: string;
  readonly userAgent: string;
  readonly pageBytes: number;
  readonly changes: ChangeModel;
  port: number;

  private readonly pagesFn: (h: number) => number;
  private readonly linksPerPage: number;
  private readonly sameHostShare: number;
  private readonly zipfS: number;
  private readonly branching: number;
  private readonly nofollowShare: number;
  private readonly specialShares: SpecialPageShares;
  private readonly calendarStart: string;
  private readonly behaviors = new Map<number, HostBehavior>();
  private readonly robotsOverrides = new Map<number, RobotsResponse>();
  private readonly robotsCache = new Map<number, { res: RobotsResponse; rules: RobotsRules }>();
  private readonly hostMult: number;
  private readonly hostRe: RegExp;

  constructor(
    private readonly opts: ModelOptions,
    port: number,
    epochMs: number,
  ) {
    this.seed = (opts.seed ?? 1) >>> 0;
    this.hostCount = opts.hosts ?? 10;
    if (!(Number.isInteger(this.hostCount) && this.hostCount >= 1)) throw new RangeError('hosts must be >= 1');
    this.domain = (opts.domain ?? 'sim.test').toLowerCase();
    this.userAgent = opts.userAgent ?? 'meguri';
    this.pageBytes = opts.pageBytes ?? 21_806;
    const ppp = opts.pagesPerHost ?? 40;
    this.pagesFn = typeof ppp === 'number' ? () => ppp : ppp;
    this.linksPerPage = opts.linksPerPage ?? 16;
    this.sameHostShare = opts.sameHostShare ?? 0.85;
    this.zipfS = opts.zipfExponent ?? 1;
    this.branching = Math.max(1, opts.treeBranching ?? 8);
    this.nofollowShare = opts.nofollowShare ?? 0.02;
    this.specialShares = opts.hostile?.pages ?? {};
    this.calendarStart = opts.calendarStart ?? '2026-01-01';
    this.port = port;
    this.changes = new ChangeModel(this.seed, epochMs, opts.change);
    this.hostMult = affineMultiplier(this.hostCount, hashInts(this.seed, P_HOSTPERM));
    this.hostRe = new RegExp('^h(0|[1-9][0-9]*)\\.' + this.domain.replace(/[.]/g, '\\.') + '$');
    this.assignBehaviors();
    for (const [name, r] of Object.entries(opts.robots?.overrides ?? {})) this.setRobots(name, r);
  }

  // ---------------------------------------------------------------- hosts

  hostName(i: number): string {
    return `h${i}.${this.domain}`;
  }

  /** Index of a host name (case-insensitive, port and trailing dot ignored), or undefined. */
  hostIndex(name: string | number): number | undefined {
    if (typeof name === 'number') return Number.isInteger(name) && name >= 0 && name < this.hostCount ? name : undefined;
    let h = name.toLowerCase();
    const colon = h.lastIndexOf(':');
    if (colon >= 0) h = h.slice(0, colon);
    if (h.endsWith('.')) h = h.slice(0, -1);
    const m = this.hostRe.exec(h);
    if (m === null) return undefined;
    const i = Number(m[1]);
    return i < this.hostCount ? i : undefined;
  }

  requireHost(name: string | number): number {
    const i = this.hostIndex(name);
    if (i === undefined) throw new RangeError(`unknown host ${String(name)}`);
    return i;
  }

  pagesOf(host: number): number {
    return Math.max(1, Math.floor(this.pagesFn(host)));
  }

  origin(host: number): string {
    return `http://${this.hostName(host)}${this.port === 80 ? '' : ':' + this.port}`;
  }

  /** Depth of the spanning tree of a host: every page is reachable from `/` within this many links. */
  treeDepth(host: number): number {
    let d = 0;
    let n = this.pagesOf(host) - 1;
    while (n > 0) {
      n = Math.floor((n - 1) / this.branching);
      d++;
    }
    return d;
  }

  behavior(host: number): HostBehavior {
    return this.behaviors.get(host) ?? this.baseBehavior(host);
  }

  /** Merges `patch` into a host's behaviour at runtime (undefined values remove a setting). */
  configureHost(host: number, patch: HostBehavior): void {
    const merged: HostBehavior = { ...this.behavior(host), ...patch };
    for (const k of Object.keys(merged) as (keyof HostBehavior)[]) if (merged[k] === undefined) delete merged[k];
    this.behaviors.set(host, merged);
  }

  private baseBehavior(host: number): HostBehavior {
    const v = this.opts.validators ?? {};
    const u = hash01(this.seed, P_VALID, host);
    const none = v.noneShare ?? 0.1;
    const etag = v.etagOnlyShare ?? 0.05;
    const lm = v.lastModifiedOnlyShare ?? 0.05;
    const validators = host === 0 ? 'both' : u < none ? 'none' : u < none + etag ? 'etag' : u < none + etag + lm ? 'last-modified' : 'both';
    const compression = host === 0 || hash01(this.seed, P_COMP, host) >= (this.opts.noCompressionShare ?? 0.1);
    return { validators, compression };
  }

  private assignBehaviors(): void {
    const h = this.opts.hostile ?? {};
    const taken = new Set<number>();
    let code = 0;
    const pick = (p: HostPick | undefined, make: () => HostBehavior): void => {
      code++;
      if (p === undefined) return;
      const chosen: number[] = [];
      for (const x of p.hosts ?? []) chosen.push(this.requireHost(x));
      const want = Math.min(this.hostCount - 1, (p.count ?? 0) + Math.round((p.share ?? 0) * this.hostCount));
      if (want > 0) {
        const candidates: [number, number][] = [];
        for (let i = 1; i < this.hostCount; i++) if (!taken.has(i)) candidates.push([hashInts(this.seed, P_PICK, code, i), i]);
        candidates.sort((a, b) => a[0] - b[0]);
        for (const [, i] of candidates.slice(0, want)) chosen.push(i);
      }
      for (const i of chosen) {
        taken.add(i);
        this.behaviors.set(i, { ...this.behavior(i), ...make() });
      }
    };
    pick(h.slow, () => ({ latencyMs: h.slow?.latencyMs ?? 500 }));
    pick(h.error, () => ({ fail: { status: h.error?.status ?? 500 } }));
    pick(h.flaky, () => ({ fail: { status: h.flaky?.status ?? 500, rate: h.flaky?.rate ?? 0.3 } }));
    pick(h.reset, () => ({ fail: { mode: 'reset' } }));
    pick(h.hang, () => ({ fail: { mode: 'hang' } }));
    pick(h.retryAfter, () => ({
      fail: { status: 503, retryAfterSec: h.retryAfter?.retryAfterSec ?? 5, firstAttempts: h.retryAfter?.firstAttempts ?? 2 },
    }));
    pick(h.tooMany, () => ({
      rateLimit: { minIntervalMs: h.tooMany?.minIntervalMs ?? 2000, status: 429, retryAfterSec: h.tooMany?.retryAfterSec ?? 2 },
    }));
    pick(h.calendar, () => ({ calendar: true }));
    pick(h.closeAfter, () => ({ closeAfter: h.closeAfter?.requests ?? 3 }));
    for (const [name, b] of Object.entries(this.opts.hostOverrides ?? {})) this.configureHost(this.requireHost(name), b);
  }

  // ---------------------------------------------------------------- robots

  /** Sets what a host answers for /robots.txt: a text (200), null (404) or an explicit response. */
  setRobots(host: string | number, robots: string | null | RobotsResponse): void {
    const i = this.requireHost(host);
    const res = robots === null ? { status: 404, body: 'Not Found\n' } : typeof robots === 'string' ? { status: 200, body: robots } : robots;
    this.robotsOverrides.set(i, res);
    this.robotsCache.delete(i);
  }

  robots(host: number): RobotsResponse {
    return this.robotsEntry(host).res;
  }

  private robotsEntry(host: number): { res: RobotsResponse; rules: RobotsRules } {
    let e = this.robotsCache.get(host);
    if (e === undefined) {
      const res =
        this.robotsOverrides.get(host) ??
        defaultRobots(this.seed, host, this.origin(host), this.userAgent, this.opts.robots ?? {});
      e = { res, rules: parseRobots(res) };
      this.robotsCache.set(host, e);
    }
    return e;
  }

  /** The rules a crawler ends up with for a host, including a robots.txt that fails permanently. */
  effectiveRobotsRules(host: number): RobotsRules {
    const b = this.behavior(host);
    if (b.hostileRobots === true && isPermanentFailure(b.fail)) {
      const f = b.fail;
      const unreachable = f?.mode === 'reset' || f?.mode === 'hang' || (f?.status ?? 500) >= 500;
      return { mode: unreachable ? 'disallow-all' : 'allow-all', groups: [], sitemaps: [] };
    }
    return this.robotsEntry(host).rules;
  }

  /** Robots predicate of the ground truth (see robots.ts for the exact semantics). */
  isAllowed(host: number, pathAndQuery: string, userAgent = this.userAgent): boolean {
    return robotsAllows(this.effectiveRobotsRules(host), userAgent, pathAndQuery);
  }

  // ---------------------------------------------------------------- pages

  private isLeaf(host: number, n: number): boolean {
    return this.branching * n + 1 >= this.pagesOf(host);
  }

  pageKind(host: number, n: number): PageKind {
    if (n === 0 || !this.isLeaf(host, n)) return 'html';
    let u = hash01(this.seed, P_KIND, host, n);
    for (const [key, kind] of SPECIAL_ORDER) {
      const s = this.specialShares[key] ?? 0;
      if (u < s) return kind;
      u -= s;
    }
    return 'html';
  }

  /** Canonical path (with query) of page n of a host. */
  pathOf(host: number, n: number): string {
    if (n === 0) return '/';
    switch (this.pageKind(host, n)) {
      case 'redirect':
        return `/go/${n}`;
      case 'loop':
        return `/loop/${n}/a`;
      case 'png':
        return `/img/${n}.png`;
      case 'pdf':
        return `/doc/${n}.pdf`;
      case 'binary':
        return `/bin/${n}.html`;
      case 'huge':
        return `/big/${n}.html`;
      case 'bomb':
        return `/bomb/${n}.html`;
      case 'trickle':
        return `/slow/${n}.html`;
      case 'duplicate':
        return `/copy/${n}.html`;
      default:
        break;
    }
    const u = hash01(this.seed, P_PATH, host, n);
    if (u < 0.75) return `/p/${n}.html`;
    if (u < 0.83) return `/item?id=${n}`;
    if (u < 0.88) return `/d/${n}/`;
    if (u < 0.94) return `/cgi/${n}.cgi`;
    return `/private${n % 3}/${n}.html`;
  }

  /** Page number that `pathOf` maps to `path`, if any. */
  pageOfPath(host: number, path: string): number | undefined {
    if (path === '/') return 0;
    const m = /^\/(?:p|d|cgi|private\d|img|doc|bin|big|bomb|slow|go|loop|copy)\/(0|[1-9][0-9]*)(?:\.\w+|\/a)?\/?$|^\/item\?id=(0|[1-9][0-9]*)$/.exec(path);
    if (m === null) return undefined;
    const n = Number(m[1] ?? m[2]);
    if (!(n >= 1 && n < this.pagesOf(host))) return undefined;
    return this.pathOf(host, n) === path ? n : undefined;
  }

  urlOf(host: number, n: number): string {
    return this.origin(host) + this.pathOf(host, n);
  }

  private linkForm(rng: Rng, sameHost: boolean): Pick<Link, 'form' | 'fragment' | 'upperHost'> {
    const u = rng.next();
    let form: Link['form'];
    if (sameHost) form = u < 0.45 ? 'root' : u < 0.7 ? 'relative' : u < 0.88 ? 'absolute' : 'protocol';
    else form = u < 0.7 ? 'absolute' : 'protocol';
    const out: Pick<Link, 'form' | 'fragment' | 'upperHost'> = { form };
    if (rng.chance(0.1)) out.fragment = rng.chance(0.5) ? 'top' : `sec-${rng.int(5) + 1}`;
    if (form !== 'root' && form !== 'relative' && rng.chance(0.05)) out.upperHost = true;
    return out;
  }

  /** All links on an HTML page, in page order (nav, children, body). Independent of time. */
  pageLinks(host: number, n: number): Link[] {
    const rng = rngFor(this.seed, P_LINKS, host, n);
    const P = this.pagesOf(host);
    const links: Link[] = [];
    const plain = (h: number, page: number): Link => ({
      host: h,
      path: this.pathOf(h, page),
      nofollow: false,
      ...this.linkForm(rng, h === host),
    });
    if (n !== 0) links.push({ host, path: '/', nofollow: false, form: rng.chance(0.8) ? 'root' : 'absolute', role: 'nav' });
    for (let c = this.branching * n + 1; c <= this.branching * n + this.branching && c < P; c++) {
      links.push({ ...plain(host, c), role: 'child' });
    }
    if (n === 0 && this.behavior(host).calendar === true) {
      links.push({ host, path: `/cal?date=${this.calendarStart}`, nofollow: false, form: 'root', role: 'body' });
    }
    const k = Math.round(this.linksPerPage * (0.5 + rng.next()));
    const mult = affineMultiplier(P, hashInts(this.seed, P_PERM, host));
    for (let i = 0; i < k; i++) {
      let link: Link;
      if (this.hostCount === 1 || rng.chance(this.sameHostShare)) {
        let target = (zipfRank(rng.next(), P, this.zipfS) * mult) % P;
        if (target === n) target = (zipfRank(rng.next(), P, this.zipfS) * mult) % P;
        link = plain(host, target);
      } else {
        let th = (zipfRank(rng.next(), this.hostCount, this.zipfS) * this.hostMult) % this.hostCount;
        if (th === host) th = (th + 1 + rng.int(this.hostCount - 1)) % this.hostCount;
        const tp = this.pagesOf(th);
        const tmult = affineMultiplier(tp, hashInts(this.seed, P_PERM, th));
        link = plain(th, (zipfRank(rng.next(), tp, this.zipfS) * tmult) % tp);
      }
      if (rng.chance(this.nofollowShare)) {
        link.nofollow = true;
        link.relVariant = rng.int(2);
      }
      link.role = 'body';
      links.push(link);
    }
    return links;
  }

  /** Whether an HTML page also carries unusable hrefs. */
  hasInvalidLinks(host: number, n: number): boolean {
    return hash01(this.seed, P_INVALID, host, n) < (this.specialShares.invalidLinks ?? 0);
  }

  private redirectPlan(host: number, n: number): { hops: number; status: 301 | 302; to: { host: number; path: string }; absolute: boolean } {
    const rng = rngFor(this.seed, P_REDIR, host, n);
    const hops = 1 + rng.int(3);
    const status = rng.chance(0.5) ? 301 : 302;
    const absolute = rng.chance(0.5);
    // Target: the first random link of the page, so cross-host redirects happen at the link mix rate.
    const links = this.pageLinks(host, n).filter((l) => l.path !== '/' || l.host !== host);
    const t = links[0] ?? { host, path: '/' };
    return { hops, status, to: { host: t.host, path: t.path }, absolute };
  }

  /** Page state (version etc.) at clock time t for a page number. */
  pageState(host: number, n: number, t: number): PageState {
    return this.changes.stateAt(host, n, t);
  }

  /** What `host` serves for `pathAndQuery` at clock time `t`. */
  resolve(host: number, pathAndQuery: string, t: number): Resource {
    const path = pathAndQuery;
    if (path.startsWith('/cal?') && this.behavior(host).calendar === true) {
      const m = /^\/cal\?date=(\d{4}-\d{2}-\d{2})$/.exec(path);
      const ms = m?.[1] === undefined ? undefined : parseDate(m[1]);
      if (ms === undefined || m?.[1] === undefined) return { type: 'notfound', host, path };
      const date = m[1];
      const links: Link[] = [
        { host, path: `/cal?date=${formatDate(ms - DAY)}`, nofollow: false, form: 'relative' },
        { host, path: `/cal?date=${formatDate(ms + DAY)}`, nofollow: false, form: 'relative' },
        { host, path: '/', nofollow: false, form: 'root' },
      ];
      return { type: 'calendar', host, date, path, links };
    }
    const go = /^\/go\/(0|[1-9][0-9]*)(?:\?hop=([1-9][0-9]*))?$/.exec(path);
    if (go !== null) {
      const n = Number(go[1]);
      if (n >= this.pagesOf(host) || this.pageKind(host, n) !== 'redirect') return { type: 'notfound', host, path };
      const plan = this.redirectPlan(host, n);
      const hop = go[2] === undefined ? 0 : Number(go[2]);
      if (hop >= plan.hops) return { type: 'notfound', host, path };
      const to = hop + 1 < plan.hops ? { host, path: `/go/${n}?hop=${hop + 1}` } : plan.to;
      return { type: 'redirect', host, path, status: plan.status, to, absolute: plan.absolute };
    }
    const loop = /^\/loop\/(0|[1-9][0-9]*)\/([ab])$/.exec(path);
    if (loop !== null) {
      const n = Number(loop[1]);
      if (n >= this.pagesOf(host) || this.pageKind(host, n) !== 'loop') return { type: 'notfound', host, path };
      const other = loop[2] === 'a' ? 'b' : 'a';
      return { type: 'redirect', host, path, status: 302, to: { host, path: `/loop/${n}/${other}` }, absolute: false };
    }
    const n = this.pageOfPath(host, path);
    if (n === undefined) return { type: 'notfound', host, path };
    const kind = this.pageKind(host, n);
    switch (kind) {
      case 'html':
      case 'malformed':
      case 'latin1':
      case 'sjis': {
        const state = this.pageState(host, n, t);
        if (state.gone !== undefined) return { type: 'gone', host, page: n, path, status: state.gone.status };
        return {
          type: 'page',
          host,
          page: n,
          kind,
          path,
          links: this.pageLinks(host, n),
          invalidLinks: kind === 'html' && this.hasInvalidLinks(host, n),
          state,
        };
      }
      case 'redirect':
      case 'loop':
        return { type: 'notfound', host, path }; // handled above; unreachable for canonical paths
      default:
        return { type: 'binary', host, page: n, kind, path };
    }
  }

  // ---------------------------------------------------------------- URLs

  /** Splits an absolute http URL into host index and path+query (fragment dropped, port ignored). */
  parseUrl(url: string): { host: number; path: string } | undefined {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return undefined;
    }
    if (u.protocol !== 'http:') return undefined;
    const host = this.hostIndex(u.hostname);
    if (host === undefined) return undefined;
    return { host, path: (u.pathname || '/') + u.search };
  }

  canonical(host: number, path: string): string {
    return this.origin(host) + path;
  }

  versionAt(url: string, t: number): number {
    const p = this.requirePage(url);
    return this.changes.versionAt(p.host, p.page, t);
  }

  stateAt(url: string, t: number): PageState {
    const p = this.requirePage(url);
    return this.pageState(p.host, p.page, t);
  }

  changeTimes(url: string, from: number, to: number): ChangeEvent[] {
    const p = this.requirePage(url);
    return this.changes.changes(p.host, p.page, from, to);
  }

  private requirePage(url: string): { host: number; page: number } {
    const u = this.parseUrl(url);
    const page = u === undefined ? undefined : this.pageOfPath(u.host, u.path);
    if (u === undefined || page === undefined) throw new RangeError(`not a page of the simulated web: ${url}`);
    return { host: u.host, page };
  }

  // ---------------------------------------------------------------- ground truth

  /** Outcome of fetching a resource and the links a correct crawler follows from it. */
  private fetchResult(
    host: number,
    path: string,
    t: number,
    followNofollow: boolean,
  ): { outcome: FetchOutcome; links: { host: number; path: string }[]; redirect?: { host: number; path: string } } {
    const b = this.behavior(host);
    if (isPermanentFailure(b.fail)) {
      return { outcome: b.fail?.mode === 'hang' ? 'timeout' : 'error', links: [] };
    }
    const r = this.resolve(host, path, t);
    switch (r.type) {
      case 'page':
      case 'calendar':
        return { outcome: 'html', links: r.links.filter((l) => followNofollow || !l.nofollow) };
      case 'redirect':
        return { outcome: 'redirect', links: [], redirect: r.to };
      case 'binary':
        if (r.kind === 'png' || r.kind === 'pdf') return { outcome: 'not-html', links: [] };
        if (r.kind === 'trickle') return { outcome: 'timeout', links: [] };
        return { outcome: r.kind === 'binary' ? 'not-html' : 'html', links: [] };
      case 'gone':
      case 'notfound':
        return { outcome: 'error', links: [] };
    }
  }

  /**
   * The exact set of URLs a correct crawler fetches: BFS by depth from the seeds, skipping
   * robots-disallowed URLs, not following rel=nofollow links, and following nothing out of
   * disallowed, non-HTML, error or redirecting responses (a redirect's target is followed with
   * `redirectCost`). Hosts that fail permanently count as fetched with outcome error/timeout;
   * transient failures (flaky, Retry-After, rate limits) are assumed to be retried successfully.
   */
  expectedFetchSet(o: ExpectedFetchOptions, now: number): FetchPlan {
    const at = o.at ?? now;
    const ua = o.userAgent ?? this.userAgent;
    const redirectCost = o.redirectCost ?? 0;
    const maxUrls = o.maxUrls ?? 5_000_000;
    const plan: FetchPlan = { urls: new Set(), depth: new Map(), outcome: new Map(), disallowed: new Set() };
    const seedHosts = new Set<number>();
    const best = new Map<string, number>();
    let level: { url: string; host: number; path: string }[] = [];
    let next: { url: string; host: number; path: string }[] = [];

    const offer = (host: number, path: string, d: number, sameLevel: boolean): void => {
      if (d > o.maxDepth) return;
      if (o.sameHostOnly === true && !seedHosts.has(host)) return;
      const url = this.canonical(host, path);
      const prev = best.get(url);
      if (prev !== undefined && prev <= d) return;
      const allowed = o.isAllowed !== undefined ? o.isAllowed(url) : this.isAllowed(host, path, ua);
      best.set(url, d);
      if (!allowed) {
        plan.disallowed.add(url);
        return;
      }
      if (best.size > maxUrls) throw new RangeError(`expectedFetchSet exceeded ${maxUrls} URLs`);
      (sameLevel ? level : next).push({ url, host, path });
    };

    for (const s of o.seeds) {
      const p = this.parseUrl(s);
      if (p === undefined) {
        plan.urls.add(s);
        plan.depth.set(s, 0);
        plan.outcome.set(s, 'error');
        continue;
      }
      seedHosts.add(p.host);
    }
    for (const s of o.seeds) {
      const p = this.parseUrl(s);
      if (p !== undefined) offer(p.host, p.path, 0, true);
    }
    for (let d = 0; d <= o.maxDepth && level.length > 0; d++) {
      for (let i = 0; i < level.length; i++) {
        const item = level[i];
        if (item === undefined || best.get(item.url) !== d || plan.outcome.has(item.url)) continue;
        const res = this.fetchResult(item.host, item.path, at, o.followNofollow === true);
        plan.urls.add(item.url);
        plan.depth.set(item.url, d);
        plan.outcome.set(item.url, res.outcome);
        for (const l of res.links) offer(l.host, l.path, d + 1, false);
        if (res.redirect !== undefined) offer(res.redirect.host, res.redirect.path, d + redirectCost, redirectCost === 0);
      }
      level = next;
      next = [];
    }
    return plan;
  }

  /**
   * The link graph a correct crawler sees from `o.seeds`: nodes are the pages of `expectedFetchSet(o)`
   * (in its order, seeds first), edges the links it follows between them (a redirect links to its
   * target), each distinct target once per page in page order. For measuring crawl order against the
   * true PageRank of what the crawl can reach.
   */
  linkGraph(o: ExpectedFetchOptions, now: number): { urls: string[]; src: Uint32Array; dst: Uint32Array } {
    const at = o.at ?? now;
    const urls = [...this.expectedFetchSet(o, now).urls];
    const index = new Map(urls.map((u, i) => [u, i]));
    const src: number[] = [];
    const dst: number[] = [];
    urls.forEach((url, i) => {
      const p = this.parseUrl(url);
      if (p === undefined) return;
      const res = this.fetchResult(p.host, p.path, at, o.followNofollow === true);
      const targets = res.redirect === undefined ? res.links : [...res.links, res.redirect];
      const seen = new Set<number>();
      for (const l of targets) {
        const t = index.get(this.canonical(l.host, l.path));
        if (t === undefined || seen.has(t)) continue;
        seen.add(t);
        src.push(i);
        dst.push(t);
      }
    });
    return { urls, src: Uint32Array.from(src), dst: Uint32Array.from(dst) };
  }
}
