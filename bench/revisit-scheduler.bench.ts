/**
 * The scheduler's revisit bookkeeping on real RocksDB state: a partition that already knows N URLs
 * (default 10^6, each with its estimator state, hashes, validators and a revisit index entry) runs
 * the revisit loop — long-term queue sweep, host queues, dispatch, outcome with change detection,
 * estimator update, next visit, load index — and the time per revisit outcome is measured,
 * including the RocksDB write batch of every batch. Also reports the bytes of RocksDB state per
 * known URL (logical key + value bytes, and on disk after compaction).
 *
 *   npm run bench:revisit-scheduler -- [--urls 1000000] [--hosts 10000] [--outcomes 100000] [--json]
 *
 * The changelog copy of each state change (a Kafka or embedded-log write made by the runtime) is
 * not included; bench/platform.bench.ts measures that path.
 */
import { parseArgs } from 'node:util';
import { execSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { SCHEMA_VERSION } from '../schemas/index.ts';
import type { FrontierRecord, LinksRecord, OutcomeLink } from '../schemas/index.ts';
import { ManualClock, silentLogger } from '../services/runtime/index.ts';
import type { InputRecord, ProcessorContext } from '../services/runtime/index.ts';
import { TaskStores } from '../services/runtime/store.ts';
import { SchedulerProcessor, schedulerOptionsSchema } from '../services/scheduler/service.ts';
import { STATS_KEY, emptyStats, packMd5, packRevisit, revisitKey, roundScore } from '../services/scheduler/state.ts';
import type { HostState, UrlState } from '../services/scheduler/state.ts';
import { rulesForFetchResult, toJSON } from '../services/scheduler/robots/index.ts';
import { changePageInterval, emptyPoliteness } from '../services/scheduler/politeness/index.ts';
import { DAY_S, initialState, nextInterval, update } from '../services/revisit/estimator.ts';
import type { RevisitState } from '../services/revisit/estimator.ts';
import { mulberry32 } from '../services/revisit/simulate.ts';
import { tempDir, removeDir } from '../test/support/transports.ts';
import { machineInfo, machineLine } from './machine.ts';

const { values } = parseArgs({
  options: {
    urls: { type: 'string', default: '1000000' },
    hosts: { type: 'string', default: '10000' },
    outcomes: { type: 'string', default: '100000' },
    json: { type: 'boolean', default: false },
    /** write a CPU profile of the revisit loop (not the population) to this file */
    profile: { type: 'string' },
  },
});
const URLS = Number(values.urls);
const HOSTS = Number(values.hosts);
const OUTCOMES = Number(values.outcomes);
const NOW = Date.UTC(2026, 5, 1);
const STORES = ['urls', 'hosts', 'queues'] as const;

function post(session: Session, method: string): Promise<unknown> {
  return new Promise((resolve, reject) => session.post(method, (err, result) => (err ? reject(err) : resolve(result))));
}

const rng = mulberry32(7);
const hex = (n: number): string => Array.from({ length: n }, () => Math.floor(rng() * 16).toString(16)).join('');
const urlOf = (h: number, j: number): string => `http://www.host${h}.example.com/section/${j % 7}/page-${j}.html`;
const hostOf = (h: number): string => `www.host${h}.example.com`;

const dir = tempDir('meguri-bench-revisit-');
const stores = await TaskStores.open(dir, 'scheduler', 0, STORES);

async function commit(): Promise<number> {
  const ops = STORES.flatMap((n) => stores.store<unknown>(n).pendingOps());
  await stores.db.batch(ops);
  stores.committed();
  return ops.length;
}

// --- Populate: every URL fetched a few times already, due between now and 30 days from now. ---
const t0 = performance.now();
const robots = toJSON(rulesForFetchResult({ status: 404, nowMs: NOW, unreachableSinceMs: null }).rules);
let logicalBytes = 0;
const perHost = Math.ceil(URLS / HOSTS);
let written = 0;
for (let h = 0; h < HOSTS && written < URLS; h++) {
  let pol = emptyPoliteness();
  for (let j = 0; j < perHost && written < URLS; j++, written++) {
    const url = urlOf(h, j);
    // A history of 3–12 visits of a page with a mean change interval between 1 hour and a year.
    const tau = 3600 * Math.exp(rng() * Math.log(8760));
    let r: RevisitState = initialState(NOW / 1000 - 200 * DAY_S);
    let t = r.l;
    const visits = 3 + Math.floor(rng() * 10);
    for (let v = 0; v < visits; v++) {
      const dt = nextInterval(r, rng).interval;
      t += dt;
      r = update(r, { at: t, changed: rng() < 1 - Math.exp(-dt / tau) });
    }
    const w = Math.round(nextInterval(r, rng).interval * 1000);
    const due = NOW + Math.floor(rng() * 30 * 86_400_000);
    const state: UrlState = {
      st: 'done',
      d: 1 + Math.floor(rng() * 6),
      c: 0,
      s: roundScore(1 + rng() * 3),
      f: due - w,
      h: 200,
      m: packMd5(hex(32)),
      p: hex(16),
      // Most servers send an ETag; Last-Modified is stored only for those that do not.
      ...(rng() < 0.8 ? { e: `"${hex(16)}"` } : { l: new Date(due - w - Math.floor(rng() * 1e10)).toUTCString() }),
      r: packRevisit(r),
      n: due,
      w,
    };
    stores.store<UrlState>('urls').put(url, state);
    stores.store<string>('queues').put(revisitKey(due, url), '');
    pol = changePageInterval(pol, undefined, w);
    logicalBytes += Buffer.byteLength(url) + Buffer.byteLength(JSON.stringify(state)) + Buffer.byteLength(revisitKey(due, url)) + 2;
  }
  const host: HostState = { queued: 0, fetched: perHost, nextAt: 0, scheme: 'http', robots, robotsDueAt: NOW + 365 * 86_400_000, pol };
  stores.store<HostState>('hosts').put(hostOf(h), host);
  if (h % 200 === 199) await commit();
}
stores.store('hosts').put(STATS_KEY, { ...emptyStats(), urlsKnown: written, hosts: HOSTS, seq: 1 });
await commit();
await stores.db.compactRange(Buffer.from([0]), Buffer.from([0xff]));
const populateS = (performance.now() - t0) / 1000;
const diskBytes = Number(execSync(`du -sb ${JSON.stringify(TaskStores.directory(dir, 'scheduler', 0))}`).toString().split('\t')[0]);

// --- The revisit loop, driven by hand: sweep, dispatch, outcomes, one write batch per round. ---
const clock = new ManualClock(NOW);
const timers: { intervalMs: number; fn: (ctx: ProcessorContext) => Promise<void> | void }[] = [];
const frontier: FrontierRecord[] = [];
const ctx: ProcessorContext = {
  service: 'scheduler',
  partition: 0,
  logger: silentLogger,
  now: () => clock.now(),
  emit: (topic, _key, value) => {
    if (topic === 'frontier') frontier.push(value as FrontierRecord);
  },
  store: <V>(name: string) => stores.store<V>(name),
  schedule: (intervalMs, fn) => {
    timers.push({ intervalMs, fn });
    return { cancel: () => undefined };
  },
};
const options = schedulerOptionsSchema.parse({ minIntervalMs: 0, maxDispatchPerRound: 5000, politeness: { kFactor: 0, suspendEnabled: false } });
const processor = new SchedulerProcessor(0, options, {});
await processor.init(ctx);
await commit();

let outcomes = 0;
let changed = 0;
let offset = 0;
const session = values.profile ? new Session() : undefined;
if (session) {
  session.connect();
  await post(session, 'Profiler.enable');
  await post(session, 'Profiler.start');
}
const t1 = performance.now();
// Timers in init() order: the dispatch tick, then the long-term queue sweep.
const [tick, sweep] = timers;
if (!tick || !sweep) throw new Error('scheduler timers not registered');
const sweptPerCall = 1000;
/** Wall ms per phase of the loop (the rest is the benchmark making outcome records). */
const phase = { sweep: 0, dispatch: 0, outcome: 0, commit: 0 };
while (outcomes < OUTCOMES) {
  // An hour of crawl time: its due URLs move to their hosts' queues, then every host is drained
  // request by request (one in flight per host), each outcome processed as it would arrive.
  clock.advance(3_600_000);
  const dueEstimate = Math.ceil((written / (30 * 24)) * 1.5);
  let ts = performance.now();
  for (let k = 0; k <= dueEstimate / sweptPerCall; k++) {
    await sweep.fn(ctx);
    await commit();
  }
  phase.sweep += performance.now() - ts;
  for (;;) {
    ts = performance.now();
    await tick.fn(ctx);
    phase.dispatch += performance.now() - ts;
    ts = performance.now();
    await commit();
    phase.commit += performance.now() - ts;
    if (frontier.length === 0) break;
    const batch = frontier.splice(0, frontier.length);
    for (let i = 0; i < batch.length; i += 1000) {
      const records: InputRecord<LinksRecord>[] = batch.slice(i, i + 1000).map((req) => {
        const isChanged = rng() < 0.3;
        if (isChanged) changed++;
        const value: OutcomeLink = {
          v: SCHEMA_VERSION,
          type: 'outcome',
          requestId: req.requestId,
          url: req.url,
          reason: req.reason,
          status: isChanged ? 200 : 304,
          result: isChanged ? 'ok' : 'not-modified',
          outDegree: 20,
          fetch: { totalMs: 80, bytes: isChanged ? 21_806 : 0 },
          fetchedAt: clock.now(),
          ...(isChanged ? { md5: hex(32), fingerprint: hex(16), validators: { etag: `"${hex(16)}"` }, page: { topic: 'pages', partition: 0, offset: String(offset) } } : {}),
        };
        const record: InputRecord<LinksRecord> = { topic: 'links', partition: 0, offset: offset++, key: req.host, value, timestamp: clock.now(), headers: {} };
        return record;
      });
      ts = performance.now();
      await processor.process(records, ctx);
      phase.outcome += performance.now() - ts;
      ts = performance.now();
      await commit();
      phase.commit += performance.now() - ts;
      outcomes += records.length;
    }
  }
}
const loopS = (performance.now() - t1) / 1000;
if (session && values.profile) {
  const { profile } = (await post(session, 'Profiler.stop')) as { profile: unknown };
  writeFileSync(values.profile, JSON.stringify(profile));
  session.disconnect();
}
await stores.close();
removeDir(dir);

const result = {
  machine: machineInfo(),
  knownUrls: written,
  hosts: HOSTS,
  populateS: Math.round(populateS * 10) / 10,
  revisitOutcomes: outcomes,
  changedShare: Math.round((changed / outcomes) * 1000) / 1000,
  usPerRevisitOutcome: Math.round(((loopS * 1e6) / outcomes) * 10) / 10,
  usPerOutcomeByPhase: Object.fromEntries(Object.entries(phase).map(([k, ms]) => [k, Math.round(((ms * 1000) / outcomes) * 10) / 10])),
  revisitOutcomesPerS: Math.round(outcomes / loopS),
  stateBytesPerUrl: {
    logical: Math.round(logicalBytes / written),
    onDisk: Math.round(diskBytes / written),
  },
};
if (values.json) console.log(JSON.stringify(result));
else {
  console.log(machineLine(result.machine));
  console.log(`${written} known URLs on ${HOSTS} hosts (populated in ${result.populateS} s)`);
  console.log(`revisit loop: ${outcomes} outcomes (${Math.round(result.changedShare * 100)} % changed), ${result.usPerRevisitOutcome} µs per outcome, ${result.revisitOutcomesPerS}/s`);
  console.log('µs per outcome by phase:', result.usPerOutcomeByPhase);
  console.log(`state per known URL: ${result.stateBytesPerUrl.logical} B logical (key + value, urls store and revisit index), ${result.stateBytesPerUrl.onDisk} B on disk after compaction`);
}
