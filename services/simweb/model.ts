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

import { ChangeModel, type ChangeEvent, type PageState } from './changes.ts';
import { affineMultiplier, hash01, hashInts, rngFor, zipfRank, type Rng } from './random.ts';
import {
  defaultRobots,
  parseRobots,
  robotsAllows,
  type RobotsResponse,
  type RobotsRules,
} from './robots.ts';
import { expectedFetchSet, linkGraph } from './ground-truth.ts';
export * from './model-types.ts';
import { isPermanentFailure } from './model-types.ts';
import type { ExpectedFetchOptions, FetchPlan, HostBehavior, HostPick, Link, ModelOptions, PageKind, Resource, SpecialPageShares } from './model-types.ts';

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

  // ---------------------------------------------------------------- ground truth (ground-truth.ts)

  /** The exact set of URLs a correct crawler fetches (ground-truth.ts says how). */
  expectedFetchSet(o: ExpectedFetchOptions, now: number): FetchPlan {
    return expectedFetchSet(this, o, now);
  }

  /** The link graph a correct crawler sees, as edge arrays over `urls` (ground-truth.ts). */
  linkGraph(o: ExpectedFetchOptions, now: number): { urls: string[]; src: Uint32Array; dst: Uint32Array } {
    return linkGraph(this, o, now);
  }
}
