/**
 * Distributed crawl ordering: the same crawl of the simulated web with 1 and with 8 scheduler
 * partitions fetches pages of about the same total true PageRank by the time 25 % of the pages are
 * fetched (criterion B of docs/ordering.md within 5 %), and both beat orders without a priority: a
 * random order, breadth-first over the whole graph, and the crawl's own host schedule with each
 * host's pages taken breadth-first (what the per-host IPR queues add).
 *
 * The true PageRank (damping 0.85) is computed over the link graph the simulated web knows; the
 * global fetch order is the server's access log in arrival order.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { SimWeb } from '../../services/simweb/index.ts';
import { runCrawl } from '../../services/cli/crawl.ts';
import { createResolver } from '../../services/fetcher/dns.ts';
import { buildCsr, createStrategy, evaluateOrder, pageRank, Rng } from '../../services/ordering/index.ts';
import type { Graph, StrategyName } from '../../services/ordering/index.ts';
import { tempDir, removeDir } from '../support/transports.ts';
import { assertFetchedExactlyOnce, pageRequests, pageKey, resolveEntries, urlKey } from '../support/crawl-check.ts';

const CHECKPOINT = '0.25';

/** Offline replay of a single-queue strategy from several seeds (the simulator's loop). */
function replay(g: Graph, strategy: StrategyName, seeds: readonly number[]): Uint32Array {
  const outLinksOf = (v: number): Uint32Array => g.targets.subarray(g.offsets[v]!, g.offsets[v + 1]!);
  const s = createStrategy(strategy, g.n, g, outLinksOf);
  for (const seed of seeds) s.addSeed(seed);
  const order = new Uint32Array(g.n);
  let k = 0;
  for (let p = s.next(); p !== undefined; p = s.next()) {
    order[k++] = p;
    s.onFetched(p, outLinksOf(p));
  }
  return order.subarray(0, k);
}

/**
 * The crawl's own host schedule (which host got the k-th fetch), but each host's pages taken in a
 * fixed order instead of by priority: isolates what the per-host priority contributes.
 */
function sameHostSchedule(crawlOrder: Uint32Array, host: Int32Array, pageOrder: Uint32Array): Uint32Array {
  const perHost = new Map<number, number[]>();
  for (const v of pageOrder) {
    const list = perHost.get(host[v]!) ?? [];
    perHost.set(host[v]!, list);
    list.push(v);
  }
  const taken = new Map<number, number>();
  return crawlOrder.map((v) => {
    const h = host[v]!;
    const k = taken.get(h) ?? 0;
    taken.set(h, k + 1);
    return perHost.get(h)![k]!;
  });
}

function shuffled(n: number, seed: number): Uint32Array {
  const rng = new Rng(seed);
  const a = new Uint32Array(n);
  for (let i = 0; i < n; i++) a[i] = i;
  for (let i = n - 1; i > 0; i--) {
    const j = Math.floor(rng.float() * (i + 1));
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

describe('crawl ordering with 1 and 8 scheduler partitions', { timeout: 480_000 }, () => {
  const dirs: string[] = [];
  after(() => dirs.forEach(removeDir));

  it('criterion B at 25 % fetched agrees within 5 % and beats orders without a priority', async (t) => {
    const web = await SimWeb.start({
      seed: 23,
      hosts: 60,
      pagesPerHost: (h) => 30 + ((h * 17) % 31),
      // Each host on an address of its own: with one shared address the per-IP cap (2 in flight)
      // would decide which host goes next, and the test is about the hosts' own queues.
      ips: Array.from({ length: 60 }, (_, i) => `127.0.1.${i + 1}`),
      // No crawl-delay, so every host runs at the loop's pace and only the order differs.
      robots: { crawlDelayShare: 0, disallowAllShare: 0 },
    });
    try {
      const seeds = web.homeUrls();
      const planOpts = { seeds, maxDepth: 15, userAgent: 'meguri' };
      const plan = web.expectedFetchSet(planOpts);
      const { urls, src, dst } = web.linkGraph(planOpts);
      const hostIds = new Map<string, number>();
      const host = Int32Array.from(urls, (u) => {
        const h = new URL(u).hostname;
        if (!hostIds.has(h)) hostIds.set(h, hostIds.size);
        return hostIds.get(h)!;
      });
      const g: Graph = { ...buildCsr(urls.length, src, dst), host };
      const { rank } = pageRank(g, { damping: 0.85 });
      const node = new Map(urls.map((u, i) => [urlKey(u), i]));
      const seedNodes = seeds.map((s) => node.get(urlKey(s))!);

      const crawl = async (partitions: number, ordering: 'ipr-dl1' | 'ipr-vr' | 'bf' = 'ipr-dl1'): Promise<{ order: Uint32Array; seconds: number }> => {
        web.clearLog();
        const dir = tempDir();
        dirs.push(dir);
        const t0 = Date.now();
        const summary = await runCrawl({
          seeds,
          dataDir: dir,
          partitions,
          untilIdle: true,
          scheduler: {
            userAgent: 'meguri',
            ordering,
            minIntervalMs: 0,
            // No fixed gap; the dynamic interval stays on (it sees only the server's time, not the
            // fetcher's wait for a per-IP slot, so it does not hold hosts back under CPU load).
            politeness: { kFactor: 0, suspendEnabled: false },
          },
          fetcher: { resolver: createResolver({ mode: 'static', resolve: resolveEntries(web) }), userAgent: 'meguri/0.1 (+http://meguri.invalid/bot)' },
        });
        const seconds = (Date.now() - t0) / 1000;
        assert.equal(summary.stoppedBecause, 'idle');
        assertFetchedExactlyOnce(web, plan.urls, plan.disallowed);
        const log = [...pageRequests(web)].sort((a, b) => a.wallMs - b.wallMs);
        return { order: Uint32Array.from(log, (e) => node.get(pageKey(e.host, e.path))!), seconds };
      };

      const one = await crawl(1);
      const eight = await crawl(8);
      // The same crawl with the scheduler's other orderings: breadth-first, and IPR with the VR cut-off.
      const bfCrawl = await crawl(8, 'bf');
      const vrCrawl = await crawl(8, 'ipr-vr');
      const b = (order: Uint32Array): number => evaluateOrder(order, rank).criterionB[CHECKPOINT];
      const bfOrder = replay(g, 'bf', seedNodes);
      const fig = {
        pages: g.n,
        hosts: hostIds.size,
        links: g.m,
        seconds1: one.seconds,
        seconds8: eight.seconds,
        B1: b(one.order),
        B8: b(eight.order),
        offlineIprDl1: b(replay(g, 'ipr-dl1', seedNodes)),
        offlineBf: b(bfOrder),
        random: b(shuffled(g.n, 5)),
        hostScheduleBf1: b(sameHostSchedule(one.order, host, bfOrder)),
        hostScheduleBf8: b(sameHostSchedule(eight.order, host, bfOrder)),
        crawlBf8: b(bfCrawl.order),
        crawlVr8: b(vrCrawl.order),
        hostScheduleBfVr8: b(sameHostSchedule(vrCrawl.order, host, bfOrder)),
      };
      const round = (x: number): number => Math.round(x * 10_000) / 10_000;
      t.diagnostic(`ordering-partitions ${JSON.stringify(Object.fromEntries(Object.entries(fig).map(([k, v]) => [k, round(v)])))}`);

      assert.ok(Math.abs(fig.B1 - fig.B8) / Math.max(fig.B1, fig.B8) <= 0.05, `B at 25 %: ${fig.B1} with 1 partition, ${fig.B8} with 8`);
      for (const [name, value] of [
        ['1 partition', fig.B1],
        ['8 partitions', fig.B8],
      ] as const) {
        assert.ok(value > fig.random, `${name}: B ${value} vs a random order ${fig.random}`);
        assert.ok(value > fig.offlineBf, `${name}: B ${value} vs breadth-first over the graph ${fig.offlineBf}`);
        const sameSchedule = name === '1 partition' ? fig.hostScheduleBf1 : fig.hostScheduleBf8;
        assert.ok(value > sameSchedule, `${name}: B ${value} vs the same host schedule taking each host's pages breadth-first ${sameSchedule}`);
        assert.ok(value > fig.crawlBf8, `${name}: B ${value} vs the crawler with ordering bf ${fig.crawlBf8}`);
      }
      // IPR-VR against breadth-first under the same host schedule (its own crawl's): the order within
      // hosts is what VR decides. Which host goes next depends on timing under CPU load, so neither
      // another crawl nor the unconstrained offline order is a fair yardstick for this crawl alone:
      // across full-suite runs its B ranged 0.40-0.50 against the offline breadth-first 0.4175.
      assert.ok(fig.crawlVr8 > fig.hostScheduleBfVr8, `ordering ipr-vr: B ${fig.crawlVr8} vs its host schedule taking each host's pages breadth-first ${fig.hostScheduleBfVr8}`);
    } finally {
      await web.close();
    }
  });
});
