/**
 * The scheduler's revisit bookkeeping on real RocksDB state: a partition that already knows N URLs
 * (each with its estimator state, hashes, validators and a revisit index entry) runs the revisit
 * loop — long-term queue sweep, host queues, dispatch, outcome with change detection, estimator
 * update, next visit, load index — and the time per revisit outcome is measured, including the
 * RocksDB write batch of every round. Also reports the bytes of RocksDB state per known URL
 * (logical key + value bytes, and on disk after compaction) and the process's memory.
 *
 *   npm run bench:revisit-scheduler -- [--urls 1000000] [--hosts 10000] [--outcomes 100000] [--json]
 *   npm run bench:revisit-scheduler -- --series 100000,1000000,10000000
 *
 * With --series one partition grows through the sizes in one process: the URLs are added, the
 * state compacted, the loop run, then the next URLs added to the same state. So the resident
 * memory of each size is that of a partition that has lived through the smaller ones, as a real
 * one does, and the figures come out side by side.
 *
 * Every round of the loop moves the same number of due URLs (--due-per-round, by default what
 * 10^6 URLs due over 30 days make in one hour): the clock steps by the time in which that many
 * become due at the current size. Per-round costs (a sweep call, a dispatch tick over the ready
 * hosts) then weigh the same at every size, and what changes between sizes is only the state.
 *
 * The population is written straight into RocksDB in large write batches (the stores' own key
 * encoding, not through their write buffer and read cache), so the benchmark holds nothing in
 * memory that grows with N: a template pool of estimator histories and one record per host.
 *
 * The changelog copy of each state change (a Kafka or embedded-log write made by the runtime) is
 * not included; bench/platform.bench.ts measures that path.
 */
import { parseArgs } from 'node:util';
import { execSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { randomFillSync } from 'node:crypto';
import { Session } from 'node:inspector';
import { SCHEMA_VERSION } from '../schemas/index.ts';
import type { FrontierRecord, LinksRecord, OutcomeLink } from '../schemas/index.ts';
import { ManualClock, silentLogger } from '../services/runtime/index.ts';
import type { InputRecord, ProcessorContext } from '../services/runtime/index.ts';
import type { BatchOp } from '../services/runtime/rocksdb.ts';
import { TaskStores } from '../services/runtime/task-stores.ts';
import { SchedulerProcessor, schedulerOptionsSchema } from '../services/scheduler/service.ts';
import { REVISIT_PREFIX, STATS_KEY, emptyStats, packRevisit, revisitKey, roundScore } from '../services/scheduler/state.ts';
import { encodeUrlState, withStateCodecs } from '../services/scheduler/state-codec.ts';
import type { HostState, PartitionStats, UrlState } from '../services/scheduler/state.ts';
import { rulesForFetchResult, toJSON } from '../services/scheduler/robots/index.ts';
import { emptyPoliteness, intervalBin } from '../services/scheduler/politeness/index.ts';
import type { PolitenessState } from '../services/scheduler/politeness/index.ts';
import { DAY_S, initialState, nextInterval, update } from '../services/revisit/estimator.ts';
import type { RevisitState } from '../services/revisit/estimator.ts';
import { mulberry32 } from '../services/revisit/simulate.ts';
import { tempDir, removeDir } from '../test/support/transports.ts';
import { machineInfo, machineLine } from './machine.ts';

const { values } = parseArgs({
  options: {
    urls: { type: 'string', default: '1000000' },
    /** sizes to grow one partition through, e.g. 100000,1000000,10000000 (overrides --urls) */
    series: { type: 'string' },
    hosts: { type: 'string', default: '10000' },
    outcomes: { type: 'string', default: '100000' },
    'due-per-round': { type: 'string', default: String(Math.round(1_000_000 / (30 * 24))) },
    json: { type: 'boolean', default: false },
    /** write a CPU profile of the revisit loop of the last size (not the population) to this file */
    profile: { type: 'string' },
  },
});

function positiveInt(name: string, text: string): number {
  const n = Number(text.replace(/_/g, ''));
  if (!Number.isInteger(n) || n <= 0) throw new Error(`--${name}: expected a positive integer, got "${text}"`);
  return n;
}

const SIZES = (values.series ?? values.urls)
  .split(',')
  .map((s) => positiveInt(values.series ? 'series' : 'urls', s.trim()))
  .sort((a, b) => a - b);
const HOSTS = positiveInt('hosts', values.hosts);
const OUTCOMES = positiveInt('outcomes', values.outcomes);
const DUE_PER_ROUND = positiveInt('due-per-round', values['due-per-round']);
const NOW = Date.UTC(2026, 5, 1);
const DUE_SPAN_MS = 30 * 86_400_000;
const STORES = ['urls', 'hosts', 'queues'] as const;
/** URLs per RocksDB write batch while populating (two operations each). */
const POPULATE_BATCH = 25_000;
/** Due URLs one sweep call moves at most (services/scheduler/revisits.ts). */
const SWEEP_LIMIT = 1000;

function post(session: Session, method: string): Promise<unknown> {
  return new Promise((resolve, reject) => session.post(method, (err, result) => (err ? reject(err) : resolve(result))));
}

const rng = mulberry32(7);
const hex = (n: number): string => {
  let s = '';
  while (s.length < n) s += ((rng() * 0x1_0000_0000) >>> 0).toString(16).padStart(8, '0');
  return s.slice(0, n);
};
/** URL i of the partition: spread over every host, so each size adds pages to every host. */
const hostOf = (h: number): string => `www.host${h}.example.com`;
const urlOf = (i: number): string => {
  const h = i % HOSTS;
  const j = Math.floor(i / HOSTS);
  return `http://${hostOf(h)}/section/${j % 7}/page-${j}.html`;
};

/**
 * Estimator histories to draw from: a page visited 3–12 times, its mean change interval between
 * one hour and a year. Drawn from a pool so populating 10^7 URLs does not replay 10^8 visits.
 */
const HISTORY_POOL = Array.from({ length: 4096 }, () => {
  const tau = 3600 * Math.exp(rng() * Math.log(8760));
  let r: RevisitState = initialState(NOW / 1000 - 200 * DAY_S);
  let t = r.l;
  const visits = 3 + Math.floor(rng() * 10);
  for (let v = 0; v < visits; v++) {
    const dt = nextInterval(r, rng).interval;
    t += dt;
    r = update(r, { at: t, changed: rng() < 1 - Math.exp(-dt / tau) });
  }
  return { r: packRevisit(r), w: Math.round(nextInterval(r, rng).interval * 1000) };
});

const dir = tempDir('meguri-bench-revisit-');
const stores = await TaskStores.open(dir, 'scheduler', 0, withStateCodecs(STORES.map((name) => ({ name }))));
const clock = new ManualClock(NOW);
const robots = toJSON(rulesForFetchResult({ status: 404, nowMs: NOW, unreachableSinceMs: null }).rules);
const EMPTY_VALUE = Buffer.from(JSON.stringify(''), 'utf8');

/**
 * State writes of the loop: each is one changelog record the runtime would send (key + value
 * bytes as stored; a deletion is a tombstone with no value).
 */
const stateWrites = { records: 0, bytes: 0 };
async function commit(): Promise<number> {
  const ops = STORES.flatMap((n) => stores.store<unknown>(n).pendingOps());
  await stores.db.batch(ops);
  stores.committed();
  stateWrites.records += ops.length;
  for (const op of ops) stateWrites.bytes += Buffer.byteLength(op.key) + (op.type === 'put' ? Buffer.byteLength(op.value) : 0);
  return ops.length;
}

const mib = (bytes: number): number => Math.round((bytes / 2 ** 20) * 10) / 10;
function rocksMemory(): { tableReaders: number; memtables: number; blockCache: number } {
  const prop = (name: string): number => Number(stores.ownDb!.property(name)) || 0;
  return {
    tableReaders: mib(prop('rocksdb.estimate-table-readers-mem')),
    memtables: mib(prop('rocksdb.cur-size-all-mem-tables')),
    blockCache: mib(prop('rocksdb.block-cache-usage')),
  };
}
function memory(): { rssMiB: number; heapUsedMiB: number; externalMiB: number; rocksdbMiB: ReturnType<typeof rocksMemory>; keysInMemory: Record<string, number> } {
  const m = process.memoryUsage();
  const keysInMemory = Object.fromEntries([...stores.stores].map(([name, store]) => [name, store.keysInMemory]));
  return { rssMiB: mib(m.rss), heapUsedMiB: mib(m.heapUsed), externalMiB: mib(m.external), rocksdbMiB: rocksMemory(), keysInMemory };
}

/**
 * Memory after a full collection (through the inspector, so no --expose-gc is needed): what the
 * partition keeps, without the garbage a heap grown by the loop happened to hold when it ended.
 */
async function liveMemory(): Promise<ReturnType<typeof memory>> {
  const session = new Session();
  session.connect();
  try {
    await post(session, 'HeapProfiler.collectGarbage');
  } finally {
    session.disconnect();
  }
  return memory();
}

let logicalBytes = 0;
let batchMs = 0;

/**
 * Adds URLs [from, to) to the partition, each fetched a few times already and due within 30 days
 * of the clock, written straight into RocksDB; then the hosts' load index and the URL count.
 */
async function populate(from: number, to: number): Promise<void> {
  const now = clock.now();
  const urls = stores.store<UrlState>('urls');
  const queues = stores.store<string>('queues');
  const hosts = stores.store<HostState | PartitionStats>('hosts');
  // Per host: the pages added and their share of the load index (L = Σ 1/T, and its interval
  // histogram), summed here and merged into the host's politeness state once at the end.
  const added = Array.from({ length: HOSTS }, () => ({ count: 0, rate: 0, bins: new Map<number, number>() }));
  let ops: BatchOp[] = [];
  // One write batch in flight while the next is made, so RocksDB and the JS side overlap.
  let inFlight: Promise<void> = Promise.resolve();
  const flush = async (): Promise<void> => {
    const tb = performance.now();
    await inFlight;
    batchMs += performance.now() - tb;
    inFlight = stores.db.batch(ops);
    ops = [];
  };
  // Hashes, fingerprints and ETags from a block of random bytes per batch (cheaper than a digit at a time).
  const random = Buffer.alloc(40 * POPULATE_BATCH);
  let at = random.length;
  for (let i = from; i < to; i++) {
    if (at === random.length) {
      randomFillSync(random);
      at = 0;
    }
    const url = urlOf(i);
    const { r, w } = HISTORY_POOL[Math.floor(rng() * HISTORY_POOL.length)]!;
    const due = now + Math.floor(rng() * DUE_SPAN_MS);
    const state: UrlState = { status: 'done', depth: 1 + Math.floor(rng() * 6), cgiHops: 0, score: roundScore(1 + rng() * 3), lastFetchAt: due - w, httpStatus: 200 };
    // The MD5 in its stored form (base64url of 16 bytes, as packMd5 makes it) and a 64-bit fingerprint.
    state.md5 = random.toString('base64url', at, at + 16);
    state.fingerprint = random.toString('hex', at + 16, at + 24);
    // Most servers send an ETag; Last-Modified is stored only for those that do not.
    if (rng() < 0.8) state.etag = `"${random.toString('hex', at + 24, at + 32)}"`;
    else state.lastModified = new Date(due - w - Math.floor(rng() * 1e10)).toUTCString();
    at += 40;
    state.estimator = r;
    state.nextRevisitAt = due;
    state.revisitIntervalMs = w;
    const value = Buffer.from(JSON.stringify(encodeUrlState(state)), 'utf8');
    const qKey = revisitKey(due, url);
    ops.push(urls.restoreOp(url, value), queues.restoreOp(qKey, EMPTY_VALUE));
    logicalBytes += Buffer.byteLength(url) + value.byteLength + Buffer.byteLength(qKey) + EMPTY_VALUE.byteLength;
    const host = added[i % HOSTS]!;
    host.count++;
    host.rate += 1000 / w;
    const bin = intervalBin(w);
    host.bins.set(bin, (host.bins.get(bin) ?? 0) + 1);
    if (ops.length >= 2 * POPULATE_BATCH) await flush();
  }
  await flush();
  await inFlight;
  for (const [h, { count, rate, bins }] of added.entries()) {
    const existing = from === 0 ? undefined : ((await hosts.get(hostOf(h))) as HostState | undefined);
    const before = existing?.politeness ?? emptyPoliteness();
    const lh = { ...before.lh };
    for (const [bin, n] of bins) lh[String(bin)] = (lh[String(bin)] ?? 0) + n;
    const pol: PolitenessState = { ...before, L: (before.L ?? 0) + rate, ...(bins.size > 0 ? { lh } : {}) };
    const host: HostState = existing
      ? { ...existing, fetched: existing.fetched + count, politeness: pol }
      : { queued: 0, fetched: count, nextAt: 0, scheme: 'http', robots, robotsDueAt: now + 365 * 86_400_000, politeness: pol };
    hosts.put(hostOf(h), host);
  }
  const stats = ((await hosts.get(STATS_KEY)) as PartitionStats | undefined) ?? { ...emptyStats(), seq: 1 };
  hosts.put(STATS_KEY, { ...stats, urlsKnown: to, hosts: HOSTS });
  await commit();
}

interface StageResult {
  knownUrls: number;
  populateS: number;
  compactS: number;
  stepS: number;
  revisitOutcomes: number;
  changedShare: number;
  usPerRevisitOutcome: number;
  /** CPU time of the whole process (every thread, RocksDB's included) per outcome: steadier than wall time on a shared machine */
  cpuUsPerRevisitOutcome: number;
  usPerOutcomeByPhase: Record<string, number>;
  revisitOutcomesPerS: number;
  /** changelog records and key + value bytes per revisit outcome (the runtime sends one per state write) */
  stateWritesPerOutcome: { records: number; bytes: number };
  /** mean JSON value bytes of a frontier request and of an outcome record (links topic) */
  meanRecordBytes: { frontier: number; outcome: number };
  stateBytesPerUrl: { logical: number; onDisk: number };
  memory: { afterPopulate: ReturnType<typeof memory>; afterLoop: ReturnType<typeof memory>; afterFullGc: ReturnType<typeof memory>; peakRssMiB: number };
}

/** The revisit loop, driven by hand: sweep, dispatch, outcomes, one write batch per round. */
async function revisitLoop(size: number, profile: boolean): Promise<Omit<StageResult, 'knownUrls' | 'populateS' | 'compactS' | 'stateBytesPerUrl' | 'memory'>> {
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
  // Timers in init() order: the dispatch tick, then the long-term queue sweep.
  const [tick, sweep] = timers;
  if (!tick || !sweep) throw new Error('scheduler timers not registered');
  const stepMs = Math.max(1000, Math.round((DUE_SPAN_MS * DUE_PER_ROUND) / size));
  const queues = stores.store<string>('queues');

  let outcomes = 0;
  let changed = 0;
  let offset = 0;
  const session = profile ? new Session() : undefined;
  if (session) {
    session.connect();
    await post(session, 'Profiler.enable');
    await post(session, 'Profiler.start');
  }
  /** Wall ms per phase of the loop (the rest is the benchmark making outcome records). */
  const phase = { sweep: 0, dispatch: 0, outcome: 0, commit: 0 };
  stateWrites.records = 0;
  stateWrites.bytes = 0;
  /** JSON bytes of the frontier requests and the outcome records of the loop */
  const recordBytes = { frontier: 0, outcome: 0 };
  const cpu1 = process.cpuUsage();
  const t1 = performance.now();
  while (outcomes < OUTCOMES) {
    // One step of crawl time: its due URLs move to their hosts' queues (sweep calls until one
    // moves less than its limit), then every host is drained request by request (one in flight
    // per host), each outcome processed as it would arrive.
    clock.advance(stepMs);
    for (;;) {
      const ts = performance.now();
      await sweep.fn(ctx);
      let swept = 0;
      for (const [key, value] of queues.pending) if (value === null && key.startsWith(REVISIT_PREFIX)) swept++;
      await commit();
      phase.sweep += performance.now() - ts;
      if (swept < SWEEP_LIMIT) break;
    }
    for (;;) {
      let ts = performance.now();
      await tick.fn(ctx);
      phase.dispatch += performance.now() - ts;
      ts = performance.now();
      await commit();
      phase.commit += performance.now() - ts;
      if (frontier.length === 0) break;
      const batch = frontier.splice(0, frontier.length);
      for (const req of batch) recordBytes.frontier += Buffer.byteLength(JSON.stringify(req));
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
          return { topic: 'links', partition: 0, offset: offset++, key: req.host, value, timestamp: clock.now(), headers: {} };
        });
        for (const r of records) recordBytes.outcome += Buffer.byteLength(JSON.stringify(r.value));
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
  const loopCpu = process.cpuUsage(cpu1);
  if (session && values.profile) {
    const { profile: cpuProfile } = (await post(session, 'Profiler.stop')) as { profile: unknown };
    writeFileSync(values.profile, JSON.stringify(cpuProfile));
    session.disconnect();
  }
  const perOutcome = (ms: number): number => Math.round(((ms * 1000) / outcomes) * 10) / 10;
  return {
    stepS: Math.round(stepMs / 1000),
    revisitOutcomes: outcomes,
    changedShare: Math.round((changed / outcomes) * 1000) / 1000,
    usPerRevisitOutcome: Math.round(((loopS * 1e6) / outcomes) * 10) / 10,
    cpuUsPerRevisitOutcome: Math.round(((loopCpu.user + loopCpu.system) / outcomes) * 10) / 10,
    usPerOutcomeByPhase: Object.fromEntries(Object.entries(phase).map(([k, ms]) => [k, perOutcome(ms)])),
    revisitOutcomesPerS: Math.round(outcomes / loopS),
    meanRecordBytes: { frontier: Math.round(recordBytes.frontier / outcomes), outcome: Math.round(recordBytes.outcome / outcomes) },
    stateWritesPerOutcome: { records: Math.round((stateWrites.records / outcomes) * 10) / 10, bytes: Math.round(stateWrites.bytes / outcomes) },
  };
}

const stages: StageResult[] = [];
let known = 0;
for (const [index, size] of SIZES.entries()) {
  const t0 = performance.now();
  await populate(known, size);
  known = size;
  const populateS = (performance.now() - t0) / 1000;
  const tc = performance.now();
  await stores.ownDb!.compactRange(Buffer.from([0]), Buffer.from([0xff]));
  const compactS = (performance.now() - tc) / 1000;
  const diskBytes = Number(execSync(`du -sb ${JSON.stringify(TaskStores.directory(dir, 'scheduler', 0))}`).toString().split('\t')[0]);
  const afterPopulate = memory();
  const loop = await revisitLoop(size, values.profile !== undefined && index === SIZES.length - 1);
  stages.push({
    knownUrls: size,
    populateS: Math.round(populateS * 10) / 10,
    compactS: Math.round(compactS * 10) / 10,
    ...loop,
    stateBytesPerUrl: { logical: Math.round(logicalBytes / size), onDisk: Math.round(diskBytes / size) },
    memory: { afterPopulate, afterLoop: memory(), afterFullGc: await liveMemory(), peakRssMiB: mib(process.resourceUsage().maxRSS * 1024) },
  });
  if (!values.json) console.error(`${size} known URLs: populated in ${stages.at(-1)!.populateS} s (batch wait ${Math.round(batchMs / 1000)} s), compacted in ${stages.at(-1)!.compactS} s, loop ${loop.usPerRevisitOutcome} µs per outcome`);
}
await stores.close();
removeDir(dir);

const first = stages[0]!;
const result = {
  machine: machineInfo(),
  hosts: HOSTS,
  duePerRound: DUE_PER_ROUND,
  stages: stages.map((s) => ({
    ...s,
    throughputVsFirst: Math.round((s.revisitOutcomesPerS / first.revisitOutcomesPerS) * 1000) / 1000,
    cpuThroughputVsFirst: Math.round((first.cpuUsPerRevisitOutcome / s.cpuUsPerRevisitOutcome) * 1000) / 1000,
  })),
};
if (values.json) console.log(JSON.stringify(result));
else {
  console.log(machineLine(result.machine));
  console.log(`${HOSTS} hosts; each round of the loop moves about ${DUE_PER_ROUND} due URLs; ${OUTCOMES} revisit outcomes per size (30 % changed)`);
  const rows: [string, (s: (typeof result.stages)[number]) => string | number][] = [
    ['known URLs', (s) => s.knownUrls],
    ['populated in (s)', (s) => s.populateS],
    ['compacted in (s)', (s) => s.compactS],
    ['clock step per round (s)', (s) => s.stepS],
    ['µs per revisit outcome', (s) => s.usPerRevisitOutcome],
    ['CPU µs per revisit outcome', (s) => s.cpuUsPerRevisitOutcome],
    [`outcomes per CPU s vs ${first.knownUrls}`, (s) => s.cpuThroughputVsFirst],
    ['  of which sweep', (s) => s.usPerOutcomeByPhase.sweep ?? 0],
    ['  of which dispatch', (s) => s.usPerOutcomeByPhase.dispatch ?? 0],
    ['  of which outcome', (s) => s.usPerOutcomeByPhase.outcome ?? 0],
    ['  of which write batch', (s) => s.usPerOutcomeByPhase.commit ?? 0],
    ['revisit outcomes per s', (s) => s.revisitOutcomesPerS],
    [`outcomes per s vs ${first.knownUrls}`, (s) => s.throughputVsFirst],
    ['state writes per outcome', (s) => s.stateWritesPerOutcome.records],
    ['  their key + value bytes', (s) => s.stateWritesPerOutcome.bytes],
    ['frontier / outcome record B', (s) => `${s.meanRecordBytes.frontier} / ${s.meanRecordBytes.outcome}`],
    ['state B per URL, logical', (s) => s.stateBytesPerUrl.logical],
    ['state B per URL, on disk', (s) => s.stateBytesPerUrl.onDisk],
    ['RSS MiB after populate', (s) => s.memory.afterPopulate.rssMiB],
    ['RSS MiB after loop', (s) => s.memory.afterLoop.rssMiB],
    ['peak RSS MiB so far', (s) => s.memory.peakRssMiB],
    ['JS heap MiB after loop', (s) => s.memory.afterLoop.heapUsedMiB],
    ['RSS MiB after a full GC', (s) => s.memory.afterFullGc.rssMiB],
    ['JS heap MiB live (after it)', (s) => s.memory.afterFullGc.heapUsedMiB],
    ['  keys in memory: urls / queues', (s) => `${s.memory.afterFullGc.keysInMemory.urls ?? 0} / ${s.memory.afterFullGc.keysInMemory.queues ?? 0}`],
    ['RocksDB table readers MiB', (s) => s.memory.afterLoop.rocksdbMiB.tableReaders],
    ['RocksDB memtables MiB', (s) => s.memory.afterLoop.rocksdbMiB.memtables],
    ['RocksDB block cache MiB', (s) => s.memory.afterLoop.rocksdbMiB.blockCache],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  for (const [label, cell] of rows) console.log(`${label.padEnd(width)}  ${result.stages.map((s) => String(cell(s)).padStart(17)).join('')}`);
}
