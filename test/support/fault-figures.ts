/**
 * The fault campaign's counting rules, as pure functions of what a crawl left behind: the simulated
 * web's access log (what servers really answered), and the committed records of `frontier`, `pages`,
 * `changes`, `revisits` and `deadletter` (read at read_committed by the Java client, so aborted
 * transactions never count as output). docs/reliability.md explains each figure.
 */

/** One page request the simulated web saw (robots.txt excluded), keyed `host/path?query`. */
export interface SeenFetch {
  readonly key: string;
  readonly wallMs: number;
}

/** A committed `frontier` record. */
export interface CommittedRequest {
  readonly partition: number;
  readonly offset: number;
  readonly requestId: string;
  readonly key: string;
}

/** A `pages` record: which request a fetcher answered. */
export interface AnsweredRequest {
  readonly requestId: string;
  readonly key: string;
}

export interface CommittedChange {
  readonly key: string;
  readonly kind: string;
  readonly md5?: string | undefined;
}

/**
 * The fetcher group's committed `frontier` offsets just before a fetcher was killed, or before the
 * broker stopped (then `atWallMs` is when it was back: requests taken before the outage may be
 * fetched during it, and their results can be neither sent nor committed).
 */
export interface FetcherKill {
  readonly atWallMs: number;
  /** partition → next offset to read; a partition without a commit is absent (starts at 0). */
  readonly committed: ReadonlyMap<number, number>;
}

export interface CrawlEvidence {
  /** Reachable, robots-allowed pages (the simulated web's ground truth). */
  readonly expected: ReadonlySet<string>;
  readonly fetches: readonly SeenFetch[];
  readonly frontier: readonly CommittedRequest[];
  readonly pages: readonly AnsweredRequest[];
  readonly changes: readonly CommittedChange[];
  readonly revisits: number;
  readonly deadLetters: number;
  readonly fetcherKills: readonly FetcherKill[];
}

export interface CrawlFigures {
  readonly reachable: number;
  /** Reachable pages requested at least once. */
  readonly fetched: number;
  /** Reachable pages never requested. */
  readonly lost: number;
  /** Requests outside the reachable set (should never happen). */
  readonly unexpected: number;
  /** Requests beyond one per URL: committed `frontier` records, plus uncommitted ones a fetcher answered. */
  readonly schedulerDuplicates: number;
  /** Of those, requests that were never committed in `frontier` but were fetched anyway (an aborted transaction read). */
  readonly uncommittedRequestsFetched: number;
  /** Page fetches beyond the requests issued: one request fetched twice (a fetcher killed before committing). */
  readonly refetches: number;
  /** Upper bound for `refetches`: requests fetched but not committed by the fetcher group at a fetcher kill. */
  readonly inFlightAtKills: number;
  /** `pages` records beyond one per request id. */
  readonly duplicatePages: number;
  readonly changes: number;
  /** `changes` records that repeat one already committed: a second `new` for a URL, or the same kind and content again. */
  readonly duplicateChanges: number;
  /** URLs with more than one `new` record. */
  readonly urlsWithTwoNew: number;
  readonly revisits: number;
  readonly deadLetters: number;
  /** URLs fetched more often than requested, each with the wall times of its fetches (for the logs). */
  readonly refetched: readonly { readonly key: string; readonly fetchedAtMs: readonly number[]; readonly inFlightAtAKill: boolean }[];
}

function countBy<T>(xs: readonly T[], key: (x: T) => string): Map<string, number> {
  const m = new Map<string, number>();
  for (const x of xs) m.set(key(x), (m.get(key(x)) ?? 0) + 1);
  return m;
}

export function crawlFigures(e: CrawlEvidence): CrawlFigures {
  const fetchesByUrl = countBy(e.fetches, (f) => f.key);
  const fetched = [...e.expected].filter((k) => fetchesByUrl.has(k)).length;
  const unexpected = [...fetchesByUrl.keys()].filter((k) => !e.expected.has(k)).length;

  // Requests per URL: every committed frontier record, plus request ids that only appear in `pages`
  // (a fetcher answered a request whose transaction was aborted).
  const committedIds = new Set(e.frontier.map((r) => r.requestId));
  const requestsByUrl = countBy(e.frontier, (r) => r.key);
  const uncommitted = new Map<string, string>();
  for (const p of e.pages) if (!committedIds.has(p.requestId)) uncommitted.set(p.requestId, p.key);
  for (const key of uncommitted.values()) requestsByUrl.set(key, (requestsByUrl.get(key) ?? 0) + 1);

  let schedulerDuplicates = 0;
  for (const n of requestsByUrl.values()) schedulerDuplicates += n - 1;
  let refetches = 0;
  for (const [key, n] of fetchesByUrl) refetches += Math.max(0, n - Math.max(1, requestsByUrl.get(key) ?? 0));

  let inFlightAtKills = 0;
  const inFlightKeys = new Set<string>();
  for (const kill of e.fetcherKills) {
    const fetchedBefore = new Set(e.fetches.filter((f) => f.wallMs <= kill.atWallMs).map((f) => f.key));
    const inFlight = e.frontier.filter((r) => r.offset >= (kill.committed.get(r.partition) ?? 0) && fetchedBefore.has(r.key));
    inFlightAtKills += inFlight.length;
    for (const r of inFlight) inFlightKeys.add(r.key);
  }
  const refetched = [...fetchesByUrl]
    .filter(([key, n]) => n > Math.max(1, requestsByUrl.get(key) ?? 0))
    .map(([key]) => ({ key, fetchedAtMs: e.fetches.filter((f) => f.key === key).map((f) => f.wallMs), inFlightAtAKill: inFlightKeys.has(key) }));

  const pagesById = countBy(e.pages, (p) => p.requestId);
  const duplicatePages = [...pagesById.values()].reduce((s, n) => s + n - 1, 0);

  const changeIdentity = (c: CommittedChange): string => (c.kind === 'new' ? `${c.key}\u0000new` : `${c.key}\u0000${c.kind}\u0000${c.md5 ?? ''}`);
  const changesById = countBy(e.changes, changeIdentity);
  const duplicateChanges = [...changesById.values()].reduce((s, n) => s + n - 1, 0);
  const urlsWithTwoNew = [...changesById].filter(([id, n]) => id.endsWith('\u0000new') && n > 1).length;

  return {
    reachable: e.expected.size,
    fetched,
    lost: e.expected.size - fetched,
    unexpected,
    schedulerDuplicates,
    uncommittedRequestsFetched: uncommitted.size,
    refetches,
    inFlightAtKills,
    duplicatePages,
    changes: e.changes.length,
    duplicateChanges,
    urlsWithTwoNew,
    revisits: e.revisits,
    deadLetters: e.deadLetters,
    refetched,
  };
}
