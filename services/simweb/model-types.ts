/**
 * The simulated web's model types (hosts' behaviours, page kinds, resources, fetch plans) and the
 * small pure helpers that go with them; model.ts re-exports them.
 */
import type { ChangeOptions, PageState } from './changes.ts';
import type { RobotsGenOptions, RobotsResponse } from './robots.ts';
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
