/**
 * The scheduler on the runtime's TestDriver, and helpers to play the fetcher: no transport, no
 * sleeps. Every `send` is one batch, processed and committed before it returns; time moves only
 * through `advance`, which runs the dispatcher and the revisit sweep when they are due. So a request
 * that is not there after a step will not come later on its own: `next()` fails at once instead of
 * waiting.
 */
import assert from 'node:assert/strict';
import { TestDriver } from '../../services/runtime/index.ts';
import { schedulerService, hostKey, CrawlProgress } from '../../services/scheduler/service.ts';
import type { SchedulerOptionsInput } from '../../services/scheduler/service.ts';
import { SCHEMA_VERSION } from '../../schemas/index.ts';
import type { FrontierRecord, LinksRecord, OutcomeLink, TopicRecords, DiscoveredLink } from '../../schemas/index.ts';
import { crawlCatalog } from '../../topology/catalog.ts';
import { linksOf } from '../../services/common/link-bundles.ts';
import type { IpSlots } from '../../services/scheduler/ip-slots.ts';
import type { HostRulesSource } from '../../services/scheduler/host-rules.ts';

export const T0 = Date.UTC(2026, 0, 1);

export interface SchedulerDriverOptions {
  /** Store directory kept after close (for reading it back, e.g. with `meguri hosts`' code). */
  readonly dataDir?: string;
  /** The partition the driver's task owns (default 0). */
  readonly partition?: number;
  /** Per-IP request counts shared with other drivers, as the partitions of one process share them. */
  readonly ipSlots?: IpSlots;
  /** An operator's host rules (`--host-rules`), read at every use as a watched file's are. */
  readonly hostRules?: HostRulesSource;
}

export type SchedulerDriver = Awaited<ReturnType<typeof openSchedulerDriver>>;

/**
 * A scheduler on one partition with the given options as they are (tests spell out what they rely
 * on). `dispatchIntervalMs` defaults to 10 ms of clock time.
 */
export async function openSchedulerDriver(options: SchedulerOptionsInput, driverOptions: SchedulerDriverOptions = {}) {
  const progress = new CrawlProgress();
  const extras = { progress, ...(driverOptions.ipSlots !== undefined ? { ipSlots: driverOptions.ipSlots } : {}), ...(driverOptions.hostRules !== undefined ? { hostRules: driverOptions.hostRules } : {}) };
  const driver = await TestDriver.open<LinksRecord, TopicRecords>(schedulerService({ userAgent: 'meguri', dispatchIntervalMs: 10, ...options }, extras), {
    catalog: crawlCatalog,
    partitions: driverOptions.partition !== undefined ? driverOptions.partition + 1 : 1,
    ...(driverOptions.partition !== undefined ? { partition: driverOptions.partition } : {}),
    startMs: T0,
    ...(driverOptions.dataDir !== undefined ? { dataDir: driverOptions.dataDir } : {}),
  });
  const clock = driver.clock;
  /** Requests emitted and not yet taken by next(). */
  const unread: FrontierRecord[] = [];
  const pull = (): void => {
    for (const r of driver.readOutput('frontier')) unread.push(r.value);
  };

  const send = async (records: LinksRecord | readonly LinksRecord[]): Promise<void> => {
    const list = Array.isArray(records) ? (records as readonly LinksRecord[]) : [records as LinksRecord];
    await driver.pipeInput('links', list.map((value) => ({ key: linksKey(value), value })));
  };

  const advance = async (ms: number): Promise<void> => {
    await driver.advanceTime(ms);
  };

  /** Every request emitted since the last call (taken). */
  const requests = (): FrontierRecord[] => {
    pull();
    return unread.splice(0);
  };

  /** The next request; there must be one already (nothing arrives later on its own). */
  const next = (): FrontierRecord => {
    pull();
    const req = unread.shift();
    assert.ok(req, 'a request is due now');
    return req;
  };

  /** `count` requests; exactly those must be waiting. */
  const nextRequests = (count: number): FrontierRecord[] => {
    pull();
    assert.equal(unread.length, count, `${count} new request(s): ${unread.map((r) => r.url).join(' ')}`);
    return unread.splice(0);
  };

  /** No request is waiting. */
  const assertNoRequest = (): void => {
    pull();
    assert.deepEqual(unread.map((r) => r.url), [], 'no further request');
  };

  /** An outcome for `req`: robots.txt 404, a page 200 with an MD5, unless `extra` says otherwise. */
  const outcome = (req: FrontierRecord, extra: Partial<OutcomeLink> = {}): OutcomeLink =>
    req.reason === 'robots'
      ? { v: SCHEMA_VERSION, type: 'outcome', requestId: req.requestId, url: req.url, reason: req.reason, status: 404, result: 'client-error', outDegree: 0, fetch: { totalMs: 5, bytes: 0 }, fetchedAt: clock.now(), robots: { status: 404 }, ...extra }
      : { v: SCHEMA_VERSION, type: 'outcome', requestId: req.requestId, url: req.url, reason: req.reason, status: 200, result: 'ok', outDegree: 0, fetch: { totalMs: 5, bytes: 50_000 }, fetchedAt: clock.now(), md5: 'a'.repeat(32), ...extra };

  const answer = (req: FrontierRecord, extra: Partial<OutcomeLink> = {}): Promise<void> => send(outcome(req, extra));

  /** The next request that is not robots.txt (robots.txt is answered 404 on the way). */
  const nextPage = async (): Promise<FrontierRecord> => {
    for (;;) {
      const req = next();
      if (req.reason !== 'robots') return req;
      await answer(req);
    }
  };

  /** Moves the clock in steps of `stepMs` until a page request comes, answering robots.txt (404) on the way. */
  const advanceToPage = async (stepMs: number, maxSteps = 10_000): Promise<FrontierRecord> => {
    for (let i = 0; i < maxSteps; i++) {
      pull();
      const req = unread.shift();
      if (req) {
        if (req.reason !== 'robots') return req;
        await answer(req);
        continue;
      }
      await advance(stepMs);
    }
    throw new Error(`no page request in ${maxSteps} steps of ${stepMs} ms`);
  };

  /** Fetches pages one after another (each answered) until `count` page requests were made. */
  const fetchPages = async (count: number, extraFor: (req: FrontierRecord) => Partial<OutcomeLink> = () => ({})): Promise<FrontierRecord[]> => {
    const pages: FrontierRecord[] = [];
    for (let i = 0; i < count; i++) {
      const req = await nextPage();
      pages.push(req);
      await answer(req, extraFor(req));
    }
    return pages;
  };

  /** Records of an output topic so far, as plain objects. */
  const events = (topic: 'changes' | 'revisits' | 'links' | 'frontier'): Record<string, unknown>[] => driver.allOutput(topic).flatMap((r) => (topic === 'links' ? linksOf(r.value as LinksRecord) : [r.value]) as unknown as Record<string, unknown>[]);

  /** Closes the driver; nothing may have been dead-lettered but the `expectedDeadLetters` codes. */
  const stop = async (expectedDeadLetters: readonly string[] = []): Promise<void> => {
    await driver.close();
    assert.deepEqual(driver.deadLetters().map((d) => d.code), expectedDeadLetters, 'dead letters');
    assert.deepEqual(driver.failures.map((f) => String(f.error)), [], 'the processor never failed');
  };

  return { driver, clock, progress, send, advance, requests, next, nextRequests, assertNoRequest, outcome, answer, nextPage, advanceToPage, fetchPages, events, stop };
}

export const seed = (url: string, addedAt = T0): LinksRecord => ({ v: SCHEMA_VERSION, type: 'seed', url, addedAt });

export const link = (url: string, source: string, extra: Partial<DiscoveredLink> = {}): DiscoveredLink => ({ v: SCHEMA_VERSION, type: 'link', url, source, depth: 1, cgiHops: 0, contribution: 0.5, sameSite: true, foundAt: T0, ...extra });

/** The key a `links` record travels under: its URL's host (a bundle's targets share one host). */
export function linksKey(value: LinksRecord): string {
  return hostKey(value.type === 'links' ? value.targets[0]!.url : value.url);
}
