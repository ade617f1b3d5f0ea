/**
 * Scheduler throughput: the scheduler service (IPR-DL1 host queues, RocksDB stores, exactly-once
 * commits) on one partition of the embedded log, fed `link` records as the parser writes them.
 *
 * The links come from the simulated web's graph (services/simweb, no sockets): pages are taken in
 * breadth-first order from every host's home page, and each page's followed links become records
 * with the DL1 contribution (score + 1) / out-degree. Popular pages are linked from many pages, so
 * most records re-score a URL that is already queued and move it in its host's queue.
 *
 * Two modes:
 *   backlog  all records are in `links` before the scheduler starts (seeds first); hosts get their
 *            robots.txt request and wait, so the figure is the discovery path alone.
 *   loop     a responder in this process answers every frontier request at once (robots.txt 404, the
 *            page's outcome and its links), so the scheduler also applies outcomes, tracks changes
 *            and dispatches the next URL of each host, as in a crawl with interval 0. The responder
 *            shares the CPU; `perBusyS` divides by the scheduler's own batch time only.
 *
 *   npm run bench:scheduler -- [--mode backlog|loop|both] [--records 200000] [--hosts 2000] [--pages 100] [--json]
 */
import { parseArgs } from 'node:util';
import { createHash } from 'node:crypto';
import { SCHEMA_VERSION } from '../schemas/index.ts';
import type { DiscoveredLink, FrontierRecord, UnbundledLinksRecord, LinksRecord, OutcomeLink, SeedLink } from '../schemas/index.ts';
import { StreamService, createTransport } from '../services/runtime/index.ts';
import type { ServiceDefinition } from '../services/runtime/index.ts';
import { schedulerService, CrawlProgress, hostKey } from '../services/scheduler/service.ts';
import { SimWebModel } from '../services/simweb/index.ts';
import { isDynamicUrl } from '../services/common/url.ts';
import { changelogTopicName } from '../topology/index.ts';
import { tempDir, removeDir } from '../test/support/transports.ts';
import { machineInfo, machineLine } from './machine.ts';
import { totalLag } from '../services/cli/crawl.ts';
import { crawlCatalog } from '../topology/catalog.ts';

const { values } = parseArgs({
  options: {
    mode: { type: 'string', default: 'both' },
    records: { type: 'string', default: '200000' },
    hosts: { type: 'string', default: '2000' },
    pages: { type: 'string', default: '100' },
    seed: { type: 'string', default: '9' },
    json: { type: 'boolean', default: false },
  },
});
const N = Number(values.records);
const HOSTS = Number(values.hosts);
const T0 = Date.UTC(2026, 0, 1);
// Port 80: canonical URLs without a port, as on the open web.
const model = new SimWebModel({ seed: Number(values.seed), hosts: HOSTS, pagesPerHost: (h) => Math.max(1, Math.round(Number(values.pages) * (0.25 + ((h * 7919) % 1000) / 666))) }, 80, T0);

/** The followed links of a page, distinct, in page order (what the parser emits), or [] for non-pages. */
function followedLinks(url: string): string[] {
  const p = model.parseUrl(url);
  const n = p === undefined ? undefined : model.pageOfPath(p.host, p.path);
  if (p === undefined || n === undefined) return [];
  const out = new Set<string>();
  for (const l of model.pageLinks(p.host, n)) if (!l.nofollow) out.add(model.canonical(l.host, l.path));
  return [...out];
}

function linkRecords(source: string, score: number, depth: number, cgiHops: number, now: number): DiscoveredLink[] {
  const targets = followedLinks(source);
  const contribution = (Math.max(0, score) + 1) / Math.max(1, targets.length);
  const sourceHost = hostKey(source);
  const hops = isDynamicUrl(source) ? cgiHops + 1 : 0;
  return targets.map((url) => ({ v: SCHEMA_VERSION, type: 'link', url, source, depth: depth + 1, cgiHops: hops, contribution, sameSite: hostKey(url) === sourceHost, foundAt: now }));
}

function seedRecords(now: number): SeedLink[] {
  return Array.from({ length: HOSTS }, (_, h) => ({ v: SCHEMA_VERSION, type: 'seed', url: model.urlOf(h, 0), addedAt: now }));
}

interface Workload {
  records: UnbundledLinksRecord[];
  links: number;
  distinctTargets: number;
}

/** Breadth-first from every home page; each page passes on the score it collected so far. */
function backlogWorkload(): Workload {
  const records: UnbundledLinksRecord[] = seedRecords(T0);
  const score = new Map<string, number>();
  const depth = new Map<string, number>();
  const queue: string[] = [];
  for (const s of records) {
    queue.push(s.url);
    depth.set(s.url, 0);
    score.set(s.url, 1);
  }
  let links = 0;
  for (let head = 0; head < queue.length && links < N; head++) {
    const url = queue[head]!;
    const d = depth.get(url)!;
    for (const r of linkRecords(url, score.get(url) ?? 0, d, 0, T0)) {
      if (links >= N) break;
      records.push(r);
      links++;
      score.set(r.url, (score.get(r.url) ?? 0) + r.contribution);
      if (!depth.has(r.url)) {
        depth.set(r.url, r.depth);
        queue.push(r.url);
      }
    }
  }
  return { records, links, distinctTargets: depth.size - HOSTS };
}

function encode(prefix: string, r: UnbundledLinksRecord): { topic: string; key: string; value: Buffer } {
  return { topic: `${prefix}links`, key: hostKey(r.url), value: Buffer.from(JSON.stringify(r)) };
}

async function busySeconds(service: StreamService<LinksRecord>, topic: string): Promise<number> {
  const m = await service.metrics.processingSeconds.get();
  return m.values.filter((v) => v.metricName?.endsWith('_sum') && v.labels.topic === topic).reduce((s, v) => s + v.value, 0);
}

/** Answers frontier requests at once from the model: robots.txt 404; a page's outcome and links. */
function responder(budget: { links: number; outcomes: number }): ServiceDefinition<FrontierRecord> {
  return {
    name: 'bench-responder',
    inputs: ['frontier'],
    outputs: ['links'],
    guarantee: 'at-least-once',
    maxBatchRecords: 1000,
    createProcessor: () => ({
      process(records, ctx) {
        const now = ctx.now();
        for (const { value: req } of records) {
          if (budget.links >= N) return;
          const base = { v: SCHEMA_VERSION, type: 'outcome', requestId: req.requestId, url: req.url, reason: req.reason, fetchedAt: now } as const;
          if (req.reason === 'robots') {
            const outcome: OutcomeLink = { ...base, status: 404, result: 'client-error', outDegree: 0, fetch: { totalMs: 2, bytes: 0 }, robots: { status: 404 } };
            ctx.emit('links', hostKey(req.url), outcome);
            continue;
          }
          const links = linkRecords(req.url, req.score, req.depth, req.cgiHops, now);
          for (const l of links) ctx.emit('links', hostKey(l.url), l);
          budget.links += links.length;
          budget.outcomes++;
          const md5 = createHash('md5').update(req.url).digest('hex');
          const outcome: OutcomeLink = { ...base, status: 200, result: 'ok', md5, outDegree: links.length, fetch: { totalMs: 5, bytes: 21_806 } };
          ctx.emit('links', hostKey(req.url), outcome);
        }
      },
    }),
  };
}

async function run(mode: 'backlog' | 'loop'): Promise<Record<string, number | string>> {
  const dir = tempDir('meguri-bench-scheduler-');
  const transport = await createTransport({ transport: 'embedded', kafkaBrokers: [], dataDir: dir });
  const progress = new CrawlProgress();
  const options = { transport, catalog: crawlCatalog, dataDir: dir, partitions: 1 };
  // Interval 0 and no politeness delays: the loop runs as fast as the scheduler lets it.
  const scheduler = new StreamService(
    schedulerService({ minIntervalMs: 0, politeness: { kFactor: 0, suspendEnabled: false, maxDelay1Ms: 0, maxDelay2Ms: 0 } }, { progress }),
    options,
  );
  const budget = { links: 0, outcomes: 0 };
  const extra = mode === 'loop' ? new StreamService(responder(budget), options) : undefined;
  await transport.ensureTopics([...scheduler.topicDefinitions(1), ...(extra?.topicDefinitions(1) ?? [])]);
  let workload: Workload | undefined;
  if (mode === 'backlog') {
    workload = backlogWorkload();
    for (let i = 0; i < workload.records.length; i += 2000) await transport.send(workload.records.slice(i, i + 2000).map((r) => encode('', r)));
  } else {
    await transport.send(seedRecords(T0).map((r) => encode('', r)));
  }
  const t0 = performance.now();
  await scheduler.start();
  if (extra) await extra.start();
  let idle = 0;
  for (;;) {
    await new Promise((r) => setTimeout(r, 20));
    const done = mode === 'backlog' || budget.links >= N;
    if (done && (await totalLag(transport, 'scheduler', 'links')) === 0 && (mode === 'backlog' || (await totalLag(transport, 'bench-responder', 'frontier')) === 0)) {
      if (++idle >= 2) break;
    } else idle = 0;
  }
  const seconds = (performance.now() - t0) / 1000;
  const busy = await busySeconds(scheduler, 'links');
  // Store writes after coalescing per batch: the changelog records the commits carried.
  let storeWrites = 0;
  for (const store of ['urls', 'hosts', 'queues']) {
    for (const p of (await transport.describeTopic(changelogTopicName('scheduler', store)))?.partitions ?? []) storeWrites += p.high;
  }
  const totals = progress.totals();
  const links = workload?.links ?? budget.links;
  const rss = process.memoryUsage().rss;
  if (extra) await extra.stop();
  await scheduler.stop();
  await transport.close();
  removeDir(dir);
  return {
    mode,
    linkRecords: links,
    outcomes: mode === 'backlog' ? 0 : budget.outcomes,
    urlsKnown: totals.urlsKnown,
    rediscovered: links - (totals.urlsKnown - HOSTS),
    seconds: Math.round(seconds * 100) / 100,
    linkRecordsPerS: Math.round(links / seconds),
    linkRecordsPerBusyS: Math.round(links / busy),
    storeWritesPerLink: Math.round((storeWrites / links) * 100) / 100,
    pageOutcomesPerS: Math.round(totals.pagesFetched / seconds),
    rssMiB: Math.round(rss / 2 ** 20),
  };
}

const modes = values.mode === 'both' ? (['backlog', 'loop'] as const) : ([values.mode as 'backlog' | 'loop'] as const);
const results = [];
for (const m of modes) results.push(await run(m));
const machine = machineInfo();
const setup = { hosts: HOSTS, meanPagesPerHost: Number(values.pages), records: N, target: 20_000 };
if (values.json) console.log(JSON.stringify({ machine, setup, results }, null, 2));
else {
  console.log(machineLine(machine));
  console.log(`${setup.hosts} hosts, ~${setup.meanPagesPerHost} pages each, ${setup.records} link records, one scheduler partition, embedded log; target ${setup.target} link records/s`);
  console.table(results);
}
process.exit(0);
