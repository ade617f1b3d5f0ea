/**
 * The revisit loop end to end over 60 simulated days: a changing simulated web (Poisson changes
 * per page, log-uniform mean intervals from 6 hours to a year, some pages changing only their
 * boilerplate, some disappearing, hosts with and without validators) and the whole crawler on one
 * scaled clock that runs a simulated day in about two thirds of a second.
 *
 * Ground truth is the server's access log: every answered page request names the version it
 * served (its ETag), so the content changes the crawl could observe are known exactly. The test
 * checks that each of them produced exactly one `changed` event, that boilerplate-only changes
 * produced none, that disappeared pages were reported gone once, and that conditional requests
 * (and 304s) were used wherever the server supports validators.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { SimWeb } from '../../services/simweb/index.ts';
import type { AccessLogEntry } from '../../services/simweb/index.ts';
import { runCrawl } from '../../services/cli/crawl.ts';
import { createResolver } from '../../services/fetcher/dns.ts';
import { ScaledClock } from '../../services/runtime/index.ts';
import { tempDir, removeDir, openTransport, readAll } from '../support/transports.ts';
import { pageKey, resolveEntries, urlKey } from '../support/crawl-check.ts';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const T0 = Date.UTC(2026, 2, 1);
const SIM_DAYS = 60;
/** Simulated ms per wall ms: 60 days in about 40 s. */
const SPEED = (SIM_DAYS * DAY) / 40_000;

/** Version number in a simulated page's ETag ("host-page-version", base 36). */
function versionOf(etag: string | undefined): number | undefined {
  const m = etag === undefined ? null : /-([0-9a-z]+)"$/.exec(etag);
  return m ? parseInt(m[1]!, 36) : undefined;
}

describe('revisits over 60 simulated days', { timeout: 240_000 }, () => {
  const dirs: string[] = [];
  after(() => dirs.forEach(removeDir));

  it('reports every observed content change exactly once, never a boilerplate-only change, and uses 304s', async () => {
    const clock = new ScaledClock(T0, SPEED);
    const web = await SimWeb.start({
      seed: 23,
      hosts: 24,
      pagesPerHost: 10,
      pageBytes: 4000,
      clock,
      change: { epochMs: T0, minIntervalMs: 6 * HOUR, maxIntervalMs: 365 * DAY, boilerplateOnlyShare: 0.25, goneShare: 0.05, goneWithinMs: 50 * DAY },
      validators: { noneShare: 0.25, etagOnlyShare: 0.2, lastModifiedOnlyShare: 0.2 },
    });
    const dir = tempDir();
    dirs.push(dir);
    const stop = new AbortController();
    const end = T0 + SIM_DAYS * DAY;
    const watch = setInterval(() => {
      if (clock.now() >= end) stop.abort();
    }, 20);
    try {
      const summary = await runCrawl({
        seeds: web.homeUrls(),
        dataDir: dir,
        partitions: 2,
        clock,
        signal: stop.signal,
        scheduler: {
          userAgent: 'meguri',
          minIntervalMs: 0,
          // Timers are in simulated time: keep them coarse enough not to spin, and a lost request
          // (several wall seconds) rare enough never to happen here.
          dispatchIntervalMs: 5 * 60_000,
          revisitSweepMs: 10 * 60_000,
          requestTimeoutMs: 20 * DAY,
          robotsRecheckMs: DAY,
          politeness: { kFactor: 0, suspendEnabled: false, maxDelay1Ms: 0, maxDelay2Ms: 0 },
        },
        fetcher: { resolver: createResolver({ mode: 'static', resolve: resolveEntries(web) }), userAgent: 'meguri/0.1 (+http://meguri.invalid/bot)' },
      });
      assert.equal(summary.stoppedBecause, 'signal');
      assert.equal(summary.duplicateFetches, 0, 'no request re-issued: the access log is the crawl’s own view');

      const transport = await openTransport('embedded', dir, clock);
      let changeEvents: { url: string; kind: string }[];
      let revisitEvents: { url: string; result: string }[];
      try {
        for (const topic of ['changes', 'revisits']) {
          const lows = (await transport.describeTopic(topic))?.partitions.map((p) => p.low);
          assert.ok(lows?.every((low) => low === 0), `${topic}: no record expired before the test read it (${String(lows)})`);
        }
        changeEvents = (await readAll(transport, 'changes')).map((r) => JSON.parse(r.value!) as { url: string; kind: string });
        revisitEvents = (await readAll(transport, 'revisits')).map((r) => JSON.parse(r.value!) as { url: string; result: string });
      } finally {
        await transport.close();
      }
      const count = (m: Map<string, number>, key: string): void => void m.set(key, (m.get(key) ?? 0) + 1);
      const changedEvents = new Map<string, number>();
      const goneEvents = new Map<string, number>();
      const newEvents = new Map<string, number>();
      for (const c of changeEvents) {
        if (c.kind === 'changed') count(changedEvents, urlKey(c.url));
        else if (c.kind === 'gone') count(goneEvents, urlKey(c.url));
        else if (c.kind === 'new') count(newEvents, urlKey(c.url));
      }
      const revisitsOf = new Map<string, number>();
      for (const r of revisitEvents) count(revisitsOf, urlKey(r.url));

      // Ground truth: per page, the answered requests in time order, each naming the version it saw.
      // The crawl was stopped mid-flight, so a page's last request may have had no outcome yet: the
      // scheduler processed the first fetch plus one per revisit event, and only those count.
      const byPage = new Map<string, AccessLogEntry[]>();
      for (const e of web.accessLog()) {
        if (e.path === '/robots.txt' || e.aborted || ![200, 304, 404, 410].includes(e.status)) continue;
        const key = pageKey(e.host, e.path);
        byPage.set(key, [...(byPage.get(key) ?? []), e]);
      }
      let observedContentChanges = 0;
      let observedBoilerplateChanges = 0;
      let fetches = 0;
      let notModified = 0;
      const revisitRequests: AccessLogEntry[] = [];
      const mismatches: string[] = [];
      for (const [key, all] of byPage) {
        const processed = 1 + (revisitsOf.get(key) ?? 0);
        assert.ok(all.length - processed === 0 || all.length - processed === 1, `${key}: ${all.length} answers, ${processed} processed`);
        const entries = all.slice(0, processed);
        fetches += entries.length;
        revisitRequests.push(...entries.slice(1));
        notModified += entries.filter((e) => e.status === 304).length;
        const boilerplateOnly = web.stateAt(`http://${key.replace('/', `:${web.port}/`)}`, T0).boilerplateOnly;
        let expected = 0;
        let previous: number | undefined;
        for (const e of entries) {
          if (e.status === 404 || e.status === 410) continue;
          const version = versionOf(e.etag);
          assert.ok(version !== undefined, `version logged for ${key}`);
          if (previous !== undefined && version !== previous) {
            if (boilerplateOnly) observedBoilerplateChanges++;
            else expected++;
          }
          previous = version;
        }
        observedContentChanges += expected;
        const got = changedEvents.get(key) ?? 0;
        if (got !== expected) mismatches.push(`${key}: ${expected} observed content changes, ${got} events`);
        if (boilerplateOnly) assert.equal(got, 0, `boilerplate-only page ${key} never reported changed`);
        // Gone is news only for a page subscribers saw alive (one already missing at its first fetch is not).
        const firstGone = entries.findIndex((e) => e.status === 404 || e.status === 410);
        const gone = firstGone > 0;
        if ((goneEvents.get(key) ?? 0) !== (gone ? 1 : 0)) mismatches.push(`${key}: gone ${gone}, ${goneEvents.get(key) ?? 0} gone events`);
        if (entries[0]!.status === 200 && newEvents.get(key) !== 1) mismatches.push(`${key}: ${newEvents.get(key) ?? 0} new events`);
      }
      for (const key of [...changedEvents.keys(), ...goneEvents.keys()]) if (!byPage.has(key)) mismatches.push(`${key}: events for a page never answered`);
      assert.deepEqual(mismatches, [], 'exactly one event per observed content change, disappearance and new page');

      // Conditional requests wherever the host sends validators; 304 when nothing changed.
      const validatorHosts = new Set(web.hostNames().filter((h) => web.behavior(h).validators !== 'none'));
      const withValidators = revisitRequests.filter((e) => validatorHosts.has(e.host));
      const withoutValidators = revisitRequests.filter((e) => !validatorHosts.has(e.host));
      assert.ok(withValidators.length > 0 && withoutValidators.length > 0);
      assert.deepEqual(withValidators.filter((e) => !e.conditional).map((e) => `${e.host}${e.path}`), [], 'every revisit to a host with validators is a conditional GET');
      assert.ok(withoutValidators.every((e) => !e.conditional), 'no validators invented for hosts without them');
      assert.ok(withoutValidators.every((e) => e.status !== 304));
      const gone = [...goneEvents.keys()].length;

      const stats = {
        simulatedDays: Math.round((clock.now() - T0) / DAY),
        pages: byPage.size,
        fetches,
        revisitEvents: revisitEvents.length,
        observedContentChanges,
        observedBoilerplateChanges,
        notModified,
        gone,
      };
      console.log(`# revisits e2e: ${JSON.stringify(stats)}`);
      // Not a vacuous run: pages were revisited many times, changes of both kinds were seen.
      assert.ok(byPage.size >= 200, `pages fetched: ${byPage.size}`);
      assert.ok(fetches >= 4 * byPage.size, `fetches: ${fetches}`);
      assert.ok(observedContentChanges >= 100, `content changes observed: ${observedContentChanges}`);
      assert.ok(observedBoilerplateChanges >= 10, `boilerplate changes observed: ${observedBoilerplateChanges}`);
      assert.ok(notModified >= 100, `304 responses: ${notModified}`);
      assert.ok(gone >= 1, 'some pages disappeared');
    } finally {
      clearInterval(watch);
      await web.close();
    }
  });
});
