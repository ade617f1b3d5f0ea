import type { PolitenessState } from './politeness/state.ts';
import type { OverloadRemedy } from './politeness/remedy.ts';
import { PACKED_STATE_BYTES, packState, unpackState } from '../revisit/estimator.ts';
import type { RevisitState } from '../revisit/estimator.ts';
import type { RedirectHop } from '../../schemas/frontier.ts';
import type { RedirectCounters } from './redirects.ts';
import { REDIRECT_QUEUE_BOOST } from './redirects.ts';

/**
 * What the scheduler keeps per URL and per host in its partition's stores. The logic reads and
 * writes the records under the names below; on disk (RocksDB, changelogs) many fields have a key
 * of one or two letters, because there is one record per known URL and bytes per URL matter at
 * 10^8 URLs. The stores' codecs (state-codec.ts) convert between the two, so the stored format is
 * the one it always was.
 */

/** capped: not fetched, its site at its page cap; trap: not fetched, its URL template proved a trap */
export type UrlStatus = 'queued' | 'inflight' | 'done' | 'error' | 'gone' | 'disallowed' | 'lost' | 'capped' | 'trap';

export interface UrlState {
  /** status */
  status: UrlStatus;
  /** depth from the nearest seed */
  depth: number;
  /** CGI hops */
  cgiHops: number;
  /** priority score (IPR approximation) */
  score: number;
  /** queue key while queued */
  queueKey?: string;
  /** last fetch time (ms) */
  lastFetchAt?: number;
  /** HTTP status of the last fetch */
  httpStatus?: number;
  /** md5 of the last body, base64url (22 characters; older stores: hex); read it with md5Of() */
  md5?: string;
  /** ETag / Last-Modified */
  etag?: string;
  lastModified?: string;
  /** 64-bit text fingerprint (hex) of the last body */
  fingerprint?: string;
  /**
   * 18-bit hashes (3 base64url characters each) of the first 64 main-text paragraphs of the version
   * last reported on `changes` (services/common/text-diff.ts): at most 192 characters
   */
  paragraphHashes?: string;
  /** paragraphs of that version in all, when more than `paragraphHashes` holds */
  paragraphCount?: number;
  /**
   * change-rate estimator state (the incremental archive crawler paper, services/revisit), packed: 24 bytes as base64url (whole
   * seconds); read it with revisitOf(). Older stores hold the plain object, which is still read.
   */
  estimator?: string | RevisitState;
  /** next revisit time (ms); the revisit index entry is keyed by it */
  nextRevisitAt?: number;
  /** scheduled revisit interval (ms), counted in the host's load index L_i */
  revisitIntervalMs?: number;
  /** queued as a revisit of a known page (not a discovery) */
  queuedAsRevisit?: true;
  /** IPR-AR: score received since this page last passed its score on */
  scoreToPass?: number;
  /** consecutive revisits that found the host unreachable (DNS, connection refused or timed out) */
  unreachableRevisits?: number;
  /** failed first fetches queued again so far (`pageRetries`) */
  retries?: number;
  /** while queued as a redirect target: the redirect chain that led here (sent on the request) */
  redirectChain?: RedirectHop[];
  /** discovery mode: host name of the start site this URL was found from */
  startSite?: string;
  /** a source re-read on its own schedule (services/scheduler/sources.ts): sitemap, feed or daily page */
  source?: 'sitemap' | 'feed' | 'daily';
  /** sitemap <priority>: the α hint of revisit selection */
  sitemapPriority?: number;
  /** until the first fetch: sitemap <lastmod> / feed item date (ms), seeds the change interval */
  listedModifiedAt?: number;
  /** until the first fetch: sitemap <changefreq>, a change-interval hint */
  changeFreq?: 'always' | 'hourly' | 'daily' | 'weekly' | 'monthly' | 'yearly' | 'never';
}

export interface InFlight {
  requestId: string;
  url: string;
  /** `address`: the fetcher only resolves the host's name (learnAddressFirst) */
  kind: 'page' | 'robots' | 'address';
  issuedAt: number;
  attempt: number;
  /** server IP the request counts against in the per-IP cap */
  ip?: string;
}

/** A host's overload while it lasts (the revisit scheduler's remedy, services/scheduler/revisits.ts). */
export interface HostOverload {
  allowedIntervalMs: number;
  remedy: OverloadRemedy;
  factor: number;
  delayMs: number;
}

export interface HostState {
  /** URLs waiting in this host's queue */
  queued: number;
  /** pages fetched (outcomes received) */
  fetched: number;
  /** earliest time the next request may start */
  nextAt: number;
  /** the host's request in flight (the oldest one when politeness.maxPerHost lets several overlap) */
  inflight?: InFlight;
  /** the other requests in flight, in the order they were sent (only with politeness.maxPerHost > 1) */
  more?: InFlight[];
  /** serialised robots rules (robots/serialize) */
  robots?: string;
  /** when robots.txt must be fetched again */
  robotsDueAt?: number;
  /** start of the current unreachable run of robots.txt */
  robotsUnreachableSince?: number | null;
  /** true while robots.txt is unreachable: the host is parked, its queue kept */
  robotsParked?: boolean;
  /** crawl-delay from robots.txt, ms */
  crawlDelayMs?: number;
  scheme?: 'http' | 'https';
  port?: string;
  /** server IP from the last outcome: frontier records are keyed by it, so one fetcher owns each IP */
  ip?: string;
  /** when the host's address was asked for (learnAddressFirst); set once, answered or not */
  addressAskedAt?: number;
  /** politeness policy state: recent requests, back-off, parking, suspension, load */
  politeness?: PolitenessState;
  /** credit of known (revisit) URLs in the new/known split of the host's requests */
  knownCredit?: number;
  /** learned alias: the origin this host's root permanently redirects to; its links move there */
  alias?: string;
  /** distinct pages fetched: new URLs the server answered (a host rule's maxPages) */
  distinctPages?: number;
  /** new URLs of the host skipped by a URL template's budget or trap verdict (`templateSkipped`) */
  templateSkipped?: number;
  /** set while the host is overloaded: allowed interval (ms), remedy, its factor and delay (ms) */
  overload?: HostOverload;
  /** the host's sitemaps were registered as sources (after its first robots.txt) */
  sitemapsKnown?: true;
  /** revisit goal: the host's multiplier factor k (μ = k·μ0), above 1 while its revisit budget binds */
  revisitFactor?: number;
  /**
   * revisit goal: the host's pooled change-rate evidence (services/revisit/pooled.ts), a histogram
   * over log-rate bins of its pages' posteriors; absent in older records (the base prior then)
   */
  pooledRates?: number[];
}

/** Every request in flight to the host, oldest first. */
export function inFlightOf(state: Pick<HostState, 'inflight' | 'more'>): InFlight[] {
  if (state.inflight === undefined) return [];
  return state.more === undefined ? [state.inflight] : [state.inflight, ...state.more];
}

/** Number of requests in flight to the host. */
export function inFlightCount(state: Pick<HostState, 'inflight' | 'more'>): number {
  return state.inflight === undefined ? 0 : 1 + (state.more?.length ?? 0);
}

/** Records a request sent to the host. */
export function addInFlight(state: HostState, request: InFlight): void {
  if (state.inflight === undefined) state.inflight = request;
  else state.more = [...(state.more ?? []), request];
}

/** Ends the host's request `requestId` and returns it; undefined when it is not in flight (a duplicate or stale answer). */
export function takeInFlight(state: HostState, requestId: string): InFlight | undefined {
  const all = inFlightOf(state);
  const i = all.findIndex((r) => r.requestId === requestId);
  if (i < 0) return undefined;
  const [taken] = all.splice(i, 1);
  state.inflight = all[0];
  if (all.length > 1) state.more = all.slice(1);
  else delete state.more;
  if (state.inflight === undefined) delete state.inflight;
  return taken;
}

/** The URL's estimator state, if it has one. */
export function revisitOf(u: Pick<UrlState, 'estimator'> | undefined): RevisitState | undefined {
  const r = u?.estimator;
  if (r === undefined) return undefined;
  if (typeof r !== 'string') return r;
  const bytes = Buffer.from(r, 'base64url');
  return bytes.byteLength >= PACKED_STATE_BYTES ? unpackState(bytes) : undefined;
}

/** Packs estimator state for UrlState.estimator (32 characters instead of ~65 as JSON). */
export function packRevisit(state: RevisitState): string {
  return Buffer.from(packState(state)).toString('base64url');
}

/** An MD5 (hex, as outcomes carry it) in its stored form. */
export function packMd5(hex: string): string {
  return /^[0-9a-f]{32}$/i.test(hex) ? Buffer.from(hex, 'hex').toString('base64url') : hex;
}

/** The URL's last MD5 as hex. */
export function md5Of(u: Pick<UrlState, 'md5'> | undefined): string | undefined {
  const m = u?.md5;
  if (m === undefined) return undefined;
  return m.length === 22 ? Buffer.from(m, 'base64url').toString('hex') : m;
}

/** Scores are kept to 1e-6, the resolution of the queue keys, so they cost a few bytes. */
export function roundScore(score: number): number {
  return Math.round(score * 1e6) / 1e6;
}

/** Partition-wide counters, stored so they survive restarts and move with the partition. */
export interface PartitionStats extends RedirectCounters {
  pagesFetched: number;
  uniqueUrlsFetched: number;
  duplicateFetches: number;
  robotsFetched: number;
  robotsDisallowedSkipped: number;
  depthSkipped: number;
  cgiSkipped: number;
  /** new URLs not queued because their site reached its page cap (or dropped from the queue at it) */
  siteCapSkipped: number;
  /** new URLs not queued because their URL template had used its budget */
  templateSkipped: number;
  /** new URLs not queued under the query restriction (Hoshino et al.) */
  querySkipped: number;
  /** discovered URLs not queued: outside the crawl scope (host/domain) or refused by include/exclude */
  outOfScopeSkipped: number;
  /** URLs not queued or given up by a per-host rule (--host-rules: block, maxPages, maxDepth) */
  hostRuleSkipped: number;
  /** seeds and links moved to their host's canonical host (alias file or learned alias) */
  aliasForwarded?: number;
  /** hosts learned to be aliases (root permanently redirected to another host) */
  aliasesLearned?: number;
  /** discovery mode: servers (hosts of external links) found, each once */
  externalServers?: number;
  /** discovery mode: internal URLs left out of the sample (--sample-rate) */
  sampleSkipped?: number;
  /** discovery mode: pages crawled, by depth */
  pagesByDepth?: number[];
  /** discovery mode: servers found, by the depth of the link that found them */
  serversByDepth?: number[];
  revisits: number;
  changed: number;
  /** revisits planned while their host was overloaded (the remedy, if any, applied) */
  overloadedRevisits: number;
  /** due revisits sent back to the long-term queue because the host's short-term queue was full */
  revisitsDeferred: number;
  /** IPR-VR/AR: times a fetched page passed its score on along its out-links */
  scorePassedOn: number;
  errors: number;
  /** failed first fetches queued again (429, 5xx, timeouts, resets) */
  pageRetries?: number;
  lost: number;
  bytes: number;
  hosts: number;
  urlsKnown: number;
  seq: number;
  /** highest IPR score in the partition: normalises α of the revisit selection */
  maxScore?: number;
  /** sitemaps named by robots.txt (or /sitemap.xml) registered as sources */
  sitemapsRegistered?: number;
  /** sitemap reads, failed ones, and new URLs they listed */
  sitemapsFetched?: number;
  sitemapErrors?: number;
  sitemapUrls?: number;
  /** feed reads, failed ones, and new item URLs they listed */
  feedsFetched?: number;
  feedErrors?: number;
  feedItemsNew?: number;
  /** daily page reads and the new links found on them */
  dailyFetched?: number;
  dailyNewLinks?: number;
  /** known URLs revisited early because a sitemap or feed dated them after their last fetch */
  lastmodRevisits?: number;
  /** pages outside --languages: kept, their links not followed */
  offLanguage?: number;
}

export function emptyStats(): PartitionStats {
  return {
    pagesFetched: 0,
    uniqueUrlsFetched: 0,
    duplicateFetches: 0,
    robotsFetched: 0,
    robotsDisallowedSkipped: 0,
    depthSkipped: 0,
    cgiSkipped: 0,
    siteCapSkipped: 0,
    templateSkipped: 0,
    querySkipped: 0,
    outOfScopeSkipped: 0,
    hostRuleSkipped: 0,
    revisits: 0,
    changed: 0,
    overloadedRevisits: 0,
    revisitsDeferred: 0,
    scorePassedOn: 0,
    errors: 0,
    lost: 0,
    bytes: 0,
    hosts: 0,
    urlsKnown: 0,
    seq: 0,
    sitemapsRegistered: 0,
    sitemapsFetched: 0,
    sitemapErrors: 0,
    sitemapUrls: 0,
    feedsFetched: 0,
    feedErrors: 0,
    feedItemsNew: 0,
    dailyFetched: 0,
    dailyNewLinks: 0,
    lastmodRevisits: 0,
    offLanguage: 0,
  };
}

/** Key of the stats record in the hosts store; sorts after every host name. */
export const STATS_KEY = '\u007fstats';

/**
 * Queue keys sort by host, then template round (services/scheduler/templates.ts), then priority
 * (higher score first), then discovery sequence, so a range scan over one host's prefix returns
 * its best URL first. Round 0 keys start with the score digits (the form every key had before
 * rounds existed); later rounds start with `R` and the round number, sorting after every round 0
 * key and before the known URLs (`~`).
 */
export function queueKey(host: string, score: number, seq: number, round = 0): string {
  const r = round > 0 ? `${ROUND_MARK}${String(Math.min(999, round)).padStart(3, '0')}` : '';
  return `${host}\u0000${r}${String(invertedScore(score)).padStart(16, '0')}\u0000${String(seq).padStart(12, '0')}`;
}

/** A score as queue keys hold it: higher scores give smaller numbers (they sort first), 1e-6 steps. */
function invertedScore(score: number): number {
  return Math.max(0, 1e15 - Math.round(Math.max(0, score) * 1e6));
}

export const ROUND_MARK = 'R';

/** The template round a new URL's queue key was made with (0 for keys without one). */
export function queueKeyRound(host: string, key: string): number {
  const at = host.length + 1;
  return key.charAt(at) === ROUND_MARK ? Number(key.slice(at + 1, at + 4)) : 0;
}

/**
 * A host queue key's parts as numbers, which compare (compareQueueRanks) as the key's string does:
 * after the host, new URLs without a round (a digit), then by template round ('R'), then known URLs
 * ('~'); within each, by the inverted score (or γ), then by sequence number. The queue cache orders
 * by ranks, so a score change moves an entry without building a key.
 */
export interface QueueRank {
  /** 0: a new URL; 1–999: a new URL of that template round; KNOWN_GROUP: a known URL due for a revisit. */
  readonly group: number;
  /** The inverted score (new URLs) or γ (known URLs); changed in place when the score changes. */
  inverted: number;
  readonly seq: number;
  /** Queued with the redirect boost, which a score change keeps. */
  readonly boosted: boolean;
}

export const KNOWN_GROUP = 1000;

export function queueRank(host: string, key: string): QueueRank {
  let at = host.length + 1;
  let group = 0;
  const mark = key.charAt(at);
  if (mark === KNOWN_MARK) {
    group = KNOWN_GROUP;
    at += 1;
  } else if (mark === ROUND_MARK) {
    group = Number(key.slice(at + 1, at + 4));
    at += 4;
  }
  const inverted = Number(key.slice(at, at + 16));
  return { group, inverted, seq: Number(key.slice(at + 17)), boosted: group !== KNOWN_GROUP && (1e15 - inverted) / 1e6 >= REDIRECT_QUEUE_BOOST };
}

/** The parts of a rank that order a host's queue. */
export type RankOrder = Pick<QueueRank, 'group' | 'inverted' | 'seq'>;

export function compareQueueRanks(a: RankOrder, b: RankOrder): number {
  return a.group - b.group || a.inverted - b.inverted || a.seq - b.seq;
}

/**
 * The inverted score a new URL's queue rank has with its score now `score`: the same round and
 * sequence number, and the redirect boost if it was queued with one (the queue cache's order).
 */
export function rescoredInverted(rank: QueueRank, score: number): number {
  return invertedScore((rank.boosted ? REDIRECT_QUEUE_BOOST : 0) + score);
}

/** Place in its host's queue of the entry stored under `key` for `u` (the queue cache's order on load). */
export function queueOrder(host: string, key: string, u: Pick<UrlState, 'status' | 'queueKey' | 'score'> | undefined): QueueRank {
  const rank = queueRank(host, key);
  // Known URLs keep their key (γ at the time they became due); stale entries are dropped when reached.
  if (rank.group === KNOWN_GROUP || !u || u.status !== 'queued' || u.queueKey !== key) return rank;
  rank.inverted = rescoredInverted(rank, u.score);
  return rank;
}

/**
 * Known URLs due for a revisit sort after every new URL of the host ('~' follows the digits), by
 * selection priority γ ∈ [0, 1] (highest first), then sequence.
 */
export function knownQueueKey(host: string, gamma: number, seq: number): string {
  const inverted = Math.max(0, 1e15 - Math.round(Math.min(1, Math.max(0, gamma)) * 1e15));
  return `${host}\u0000${KNOWN_MARK}${String(inverted).padStart(16, '0')}\u0000${String(seq).padStart(12, '0')}`;
}

export const KNOWN_MARK = '~';

/** A queue key of a known URL due for a revisit (not a new URL). */
export function queueKeyIsKnown(host: string, key: string): boolean {
  return key.charAt(host.length + 1) === KNOWN_MARK;
}

export function queuePrefix(host: string): string {
  return `${host}\u0000`;
}

/**
 * The long-term queue (the incremental archive crawler paper's day files): known URLs by their next visit time, in the same
 * store as the host queues under a prefix no host name can start with.
 */
export const REVISIT_PREFIX = '\u0001';

export function revisitKey(dueAt: number, url: string): string {
  return `${REVISIT_PREFIX}${String(Math.max(0, Math.round(dueAt))).padStart(15, '0')}\u0000${url}`;
}

/** Servers a discovery crawl has reported live in the queues store under this prefix. */
export const SERVER_PREFIX = '\u0007';

/** Adds one to a per-depth counter. */
export function countAtDepth(list: number[] | undefined, depth: number): number[] {
  const out = list ? [...list] : [];
  while (out.length <= depth) out.push(0);
  out[depth] = (out[depth] ?? 0) + 1;
  return out;
}

/** The crawl scope's entries (seed hosts or domains) live in the queues store under this prefix. */
export const SCOPE_PREFIX = '\u0006';

/** Out-links of fetched pages (IPR VR/AR) live in the queues store under this prefix. */
export const OUTLINKS_PREFIX = '\u0002';

export function outLinksKey(url: string): string {
  return OUTLINKS_PREFIX + url;
}

/** One line per link; links on the page's own origin as paths (most of them, and much shorter). */
export function encodeOutLinks(links: readonly string[], pageUrl: string): string {
  const origin = new URL(pageUrl).origin;
  return links.map((l) => (l.startsWith(origin + '/') ? l.slice(origin.length) : l)).join('\n');
}

export function decodeOutLinks(stored: string, pageUrl: string): string[] {
  const origin = new URL(pageUrl).origin;
  return stored.split('\n').filter((l) => l !== '').map((l) => (l.startsWith('/') ? origin + l : l));
}

/**
 * BLC tie-break inside one link's worth of score: fewer '/' first, then a shorter URL (Yamada et al.).
 * In [0, 1): (63 − slashes)/64 plus up to 1/64 for shortness, at the queue keys' 1e-6 resolution.
 */
export function blcTieBreak(url: string): number {
  const slashes = Math.min(63, (url.match(/\//g) ?? []).length);
  const length = Math.min(4095, url.length);
  return (63 - slashes) / 64 + (4095 - length) / 4096 / 64;
}

/** The URL in a revisit index key. */
export function revisitKeyUrl(key: string): string {
  return key.slice(REVISIT_PREFIX.length + 16);
}

export function revisitKeyBound(time: number): string {
  return `${REVISIT_PREFIX}${String(Math.max(0, Math.round(time))).padStart(15, '0')}\u0001`;
}
