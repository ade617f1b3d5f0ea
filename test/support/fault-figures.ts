/**
 * The fault campaign's counting rules, as pure functions of what a crawl left behind: the simulated
 * web's access log (what servers really answered), and the committed records of `frontier`, `pages`,
 * `changes`, `revisits` and `deadletter` (read at read_committed by the Java client, so aborted
 * transactions never count as output). docs/reliability.md explains each figure.
 */
import type { LogEvents } from './fault-recovery.ts';

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
  /** Why and which attempt, for the logs (e.g. `new attempt 1`). */
  readonly about?: string;
}

/** A `pages` record: which request a fetcher answered. */
export interface AnsweredRequest {
  readonly requestId: string;
  readonly key: string;
  /** The outcome, for the logs (e.g. `status 200`). */
  readonly about?: string;
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
  /** URLs the schedulers requested more than once, each with its requests (where in `frontier`, which id; for the logs). */
  readonly duplicated: readonly { readonly key: string; readonly requests: readonly string[] }[];
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
  const duplicated = [...requestsByUrl]
    .filter(([, n]) => n > 1)
    .map(([key]) => ({
      key,
      requests: [
        ...e.frontier
          .filter((r) => r.key === key)
          .map((r) => `frontier/${r.partition}@${r.offset} ${r.requestId} ${r.about ?? ''}: ${e.pages.filter((p) => p.requestId === r.requestId).map((p) => p.about ?? 'answered').join(' + ') || 'no answer'}`),
        ...[...uncommitted].filter(([, k]) => k === key).map(([id]) => `uncommitted ${id}`),
      ],
    }));
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
    duplicated,
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

export interface ScenarioFigures extends CrawlFigures {
  readonly scenario: string;
  readonly completed: boolean;
  readonly wallMs: number;
  /** Date.now() when the scenario started (fetch times in `refetched` are wall times). */
  readonly startedAtMs: number;
  /** The faults applied, in order, with the progress at which each happened. */
  readonly faults: readonly string[];
  /** Processes that exited on their own, with their exit code or signal. */
  readonly crashes: readonly string[];
  /** Dead-letter reasons, counted. */
  readonly deadLetterReasons: Readonly<Record<string, number>>;
  readonly logDir: string;
  /** Known URLs per scheduler partition before the crawl (prefilled state). */
  readonly prefillUrlsPerPartition: number;
  readonly partitions: number;
  /** Restores, records replayed, generations lost and rebalances, from the services' logs: the whole crawl. */
  readonly events: LogEvents;
  /** The same from the first fault on (the whole crawl when there was none). */
  readonly eventsAfterFault: LogEvents;
  /** Seconds from the end of each fault until the fetch rate was back to 90 % (null: never). */
  readonly recoveryS: readonly (number | null)[];
  /**
   * The longest the simulated web (in this process) could not answer, in ms: its event loop's worst
   * delay. Beyond the fetcher's timeouts, fetches fail and the crawl rightly asks for the pages again.
   */
  readonly webStallMaxMs: number;
}
