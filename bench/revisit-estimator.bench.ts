// Revisit policies on simulated Poisson pages (meguri's equation-(4) estimator, the Cho MLE, a
// fixed interval with meguri's fetch budget), the estimator's bookkeeping cost per fetch outcome,
// and the stored state size per URL.
// and the scheduler's bookkeeping per revisit outcome on RocksDB with 10^6 known URLs plus the
// state bytes per URL (bench/revisit-scheduler.bench.ts, run as a child; --scheduler-urls 0 skips it).
// Run: npm run bench:revisit -- [--json] [--pages N] [--days D] [--seed S] [--scheduler-urls N]
import {
  DAY_S,
  HOUR_S,
  PACKED_STATE_BYTES,
  choInitialState,
  choNextInterval,
  choObserve,
  initialState,
  nextInterval,
  serializeState,
  update,
  type RevisitState,
} from '../services/revisit/estimator.ts';
import { comparePolicies, mulberry32 } from '../services/revisit/simulate.ts';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const args = process.argv.slice(2);
const json = args.includes('--json');
const num = (flag: string, dflt: number): number => {
  const i = args.indexOf(flag);
  const v = i >= 0 ? Number(args[i + 1]) : NaN;
  return Number.isFinite(v) ? v : dflt;
};
const pages = num('--pages', 5_000);
const days = num('--days', 60);
const seed = num('--seed', 1);
const schedulerUrls = num('--scheduler-urls', 1_000_000);

const t0 = performance.now();
const cmp = comparePolicies({ pages, days, seed });
const simMs = performance.now() - t0;

// Bookkeeping cost: update() + nextInterval() per outcome over many pages with random rates.
function outcomeCost(kind: 'meguri' | 'cho'): number {
  const rng = mulberry32(seed + 17);
  const N = 10_000;
  const perPage = 100;
  const rates = Array.from({ length: N }, () => 1 / (HOUR_S * Math.exp(rng() * Math.log(8760))));
  // Pre-draw the outcomes so the timed loop only does estimator work.
  const changed = new Uint8Array(N * perPage);
  const dts = new Float64Array(N * perPage);
  for (let i = 0; i < N * perPage; i++) {
    const rate = rates[i % N] ?? 1;
    const dt = (0.3 + 2 * rng()) / rate;
    dts[i] = dt;
    changed[i] = rng() < 1 - Math.exp(-rate * dt) ? 1 : 0;
  }
  const times = new Float64Array(N);
  let sink = 0;
  const start = performance.now();
  if (kind === 'meguri') {
    const states: RevisitState[] = Array.from({ length: N }, () => initialState(0));
    for (let r = 0; r < perPage; r++) {
      for (let p = 0; p < N; p++) {
        const i = r * N + p;
        times[p] = (times[p] ?? 0) + (dts[i] ?? 1);
        const s = update(states[p] as RevisitState, { at: times[p] ?? 0, changed: changed[i] === 1 });
        states[p] = s;
        sink += nextInterval(s, rng).interval;
      }
    }
  } else {
    const states = Array.from({ length: N }, () => choInitialState(0));
    for (let r = 0; r < perPage; r++) {
      for (let p = 0; p < N; p++) {
        const i = r * N + p;
        times[p] = (times[p] ?? 0) + (dts[i] ?? 1);
        const s = states[p] ?? choInitialState(0);
        choObserve(s, { at: times[p] ?? 0, changed: changed[i] === 1 });
        sink += choNextInterval(s, rng).interval;
      }
    }
  }
  const us = ((performance.now() - start) * 1000) / (N * perPage);
  if (!Number.isFinite(sink)) throw new Error('unreachable');
  return us;
}

// State size: JSON of realistic states (epoch-second times, histories of 1–200 fetches).
function stateSizes(): { jsonMeanBytes: number; jsonMaxBytes: number; packedBytes: number } {
  const rng = mulberry32(seed + 23);
  let total = 0;
  let max = 0;
  const N = 5_000;
  for (let p = 0; p < N; p++) {
    const epoch = 1_750_000_000 + Math.floor(rng() * 1e7);
    const rate = 1 / (HOUR_S * Math.exp(rng() * Math.log(8760)));
    let s = initialState(epoch, epoch - Math.floor(rng() * 400 * DAY_S));
    const visits = 1 + Math.floor(rng() * 200);
    let t = epoch;
    for (let v = 0; v < visits; v++) {
      const dt = Math.round(nextInterval(s, rng).interval);
      t += dt;
      s = update(s, { at: t, changed: rng() < 1 - Math.exp(-rate * dt) });
    }
    const len = Buffer.byteLength(serializeState(s));
    total += len;
    max = Math.max(max, len);
  }
  return { jsonMeanBytes: total / N, jsonMaxBytes: max, packedBytes: PACKED_STATE_BYTES };
}

const pick = (r: typeof cmp.meguri) => ({
  fetches: r.fetches,
  versionsCaptured: r.versionsCaptured,
  versionsPerFetch: round(r.versionsPerFetch, 4),
  meanStalenessS: Math.round(r.meanStalenessS),
  freshness: round(r.freshness, 4),
  meanAgeS: Math.round(r.meanAgeS),
  fetchesPerDay: Math.round(r.fetchesPerDay),
  fetchesPerPagePerDay: round(r.fetchesPerPagePerDay, 3),
  ...(r.fixedIntervalS != null ? { fixedIntervalS: Math.round(r.fixedIntervalS) } : {}),
});
function round(x: number, digits: number): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}

const result = {
  pages,
  days,
  seed,
  simulationMs: Math.round(simMs),
  allocation: cmp.options.revisit.allocation,
  freshnessScaleS: cmp.options.revisit.freshnessScaleS,
  meguri: pick(cmp.meguri),
  cho: pick(cmp.cho),
  fixed: pick(cmp.fixed),
  ratios: {
    versionsPerFetchMeguriOverFixed: round(cmp.meguri.versionsPerFetch / cmp.fixed.versionsPerFetch, 3),
    stalenessMeguriOverFixed: round(cmp.meguri.meanStalenessS / cmp.fixed.meanStalenessS, 3),
  },
  bookkeepingUsPerOutcome: { meguri: round(outcomeCost('meguri'), 3), cho: round(outcomeCost('cho'), 3) },
  estimatorStateBytes: stateSizes(),
  scheduler: schedulerFigures(),
};

/** The scheduler-level figures from bench/revisit-scheduler.bench.ts (its JSON line). */
function schedulerFigures(): Record<string, unknown> | null {
  if (schedulerUrls <= 0) return null;
  const script = fileURLToPath(new URL('./revisit-scheduler.bench.ts', import.meta.url));
  const hosts = String(Math.max(1, Math.round(schedulerUrls / 100)));
  const out = execFileSync(process.execPath, ['--import', 'tsx', script, '--urls', String(schedulerUrls), '--hosts', hosts, '--outcomes', '50000', '--json'], { encoding: 'utf8', maxBuffer: 1 << 24 });
  const line = out.trim().split('\n').pop() ?? 'null';
  return JSON.parse(line) as Record<string, unknown>;
}

if (json) {
  console.log(JSON.stringify(result));
} else {
  console.log(`revisit policies: ${pages} pages, ${days} days, seed ${seed} (simulation ${result.simulationMs} ms)`);
  console.log('policy   fetches  versions  vers/fetch  staleness(s)  freshness  age(s)  fetches/day');
  for (const name of ['meguri', 'cho', 'fixed'] as const) {
    const r = result[name];
    console.log(
      `${name.padEnd(8)} ${String(r.fetches).padStart(8)} ${String(r.versionsCaptured).padStart(9)} ${r.versionsPerFetch
        .toFixed(4)
        .padStart(11)} ${String(r.meanStalenessS).padStart(13)} ${r.freshness.toFixed(4).padStart(10)} ${String(r.meanAgeS).padStart(7)} ${String(r.fetchesPerDay).padStart(12)}`,
    );
  }
  console.log('ratios', result.ratios);
  console.log('µs per outcome', result.bookkeepingUsPerOutcome);
  console.log('estimator state bytes per URL', result.estimatorStateBytes);
  if (result.scheduler) console.log('scheduler (RocksDB, known URLs):', result.scheduler);
}
