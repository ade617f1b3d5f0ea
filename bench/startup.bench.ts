/**
 * How long `meguri` takes to start: `meguri --help` and `meguri crawl --help` run from the compiled
 * dist/ and from the sources through tsx (MEGURI_NO_DIST=1), alternated, each in a fresh process;
 * and `npx meguri --help` (npm's own start-up included). Prints the median and range of CPU time
 * (user + system, the whole process) and wall time per variant, and what the stamp check that
 * bin/meguri.js makes at every start costs.
 *
 *   npm run bench:startup -- [--runs 5] [--json]
 *
 * dist/ must be built and match the sources (`npm run build`); the bench stops otherwise.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { checkStamp } from '../scripts/dist-stamp.mjs';
import { machineInfo, machineLine } from './machine.ts';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' }, json: { type: 'boolean', default: false } } });
const runs = Number(values.runs);
const root = fileURLToPath(new URL('..', import.meta.url));
const usagePreload = join(root, 'bench/vs-peer/report-usage.mjs');
const bin = join(root, 'bin/meguri.js');

const dist = checkStamp(root);
if (!dist.fresh) {
  console.error(`bench:startup: ${dist.reason}; run \`npm run build\` first`);
  process.exit(1);
}

interface Variant {
  name: string;
  command: string;
  args: string[];
  env: Record<string, string>;
}

const variants: Variant[] = [
  { name: 'meguri --help, dist/', command: process.execPath, args: ['--import', usagePreload, bin, '--help'], env: {} },
  { name: 'meguri --help, sources (tsx)', command: process.execPath, args: ['--import', usagePreload, bin, '--help'], env: { MEGURI_NO_DIST: '1' } },
  { name: 'meguri crawl --help, dist/', command: process.execPath, args: ['--import', usagePreload, bin, 'crawl', '--help'], env: {} },
  { name: 'meguri crawl --help, sources (tsx)', command: process.execPath, args: ['--import', usagePreload, bin, 'crawl', '--help'], env: { MEGURI_NO_DIST: '1' } },
  // The launcher: bin/meguri.js run as a program, sh exec-ing node with meguri's flags (the preload
  // rides in NODE_OPTIONS, since the launcher picks node's command line).
  { name: 'bin/meguri.js --help as a program (launcher), dist/', command: bin, args: ['--help'], env: { NODE_OPTIONS: `--import=${pathToFileURL(usagePreload).href}` } },
  // npx is npm: its CPU is not in the preload's figure, so only wall time is measured for it.
  { name: 'npx meguri --help, dist/ (wall only)', command: 'npx', args: ['meguri', '--help'], env: {} },
];

interface Sample {
  cpuMs: number;
  wallMs: number;
}

function runOnce(v: Variant, dir: string): Sample {
  const usageFile = join(dir, 'usage.json');
  rmSync(usageFile, { force: true });
  const t0 = performance.now();
  const r = spawnSync(v.command, v.args, { cwd: root, encoding: 'utf8', env: { ...process.env, ...v.env, MEGURI_BENCH_USAGE_FILE: usageFile } });
  const wallMs = performance.now() - t0;
  if (r.status !== 0 || !/Usage: meguri/.test(r.stdout)) throw new Error(`${v.name}: exit ${r.status}: ${r.stderr}`);
  const cpuMs = v.command === 'npx' ? NaN : (JSON.parse(readFileSync(usageFile, 'utf8')) as { cpuMs: number }).cpuMs;
  return { cpuMs, wallMs };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

const dir = mkdtempSync(join(tmpdir(), 'meguri-bench-startup-'));
const samples = new Map<string, Sample[]>(variants.map((v) => [v.name, []]));
try {
  for (const v of variants) runOnce(v, dir); // warm the page cache and tsx's transform cache
  for (let i = 0; i < runs; i++) for (const v of variants) samples.get(v.name)!.push(runOnce(v, dir));
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const rows = variants.map((v) => {
  const s = samples.get(v.name)!;
  const cpu = s.map((x) => x.cpuMs);
  const wall = s.map((x) => x.wallMs);
  return {
    variant: v.name,
    runs: s.length,
    'CPU ms (median)': Number.isNaN(cpu[0]) ? '' : Math.round(median(cpu)),
    'CPU ms (range)': Number.isNaN(cpu[0]) ? '' : `${Math.round(Math.min(...cpu))}–${Math.round(Math.max(...cpu))}`,
    'wall ms (median)': Math.round(median(wall)),
    'wall ms (range)': `${Math.round(Math.min(...wall))}–${Math.round(Math.max(...wall))}`,
  };
});
// What bin/meguri.js adds to every start: reading the stamp and one stat per source entry.
const checks = 50;
const c0 = process.cpuUsage();
const t0 = performance.now();
for (let i = 0; i < checks; i++) checkStamp(root);
const c = process.cpuUsage(c0);
const stampCheck = { wallMs: (performance.now() - t0) / checks, cpuMs: (c.user + c.system) / 1000 / checks };

const machine = machineInfo();
if (values.json) console.log(JSON.stringify({ machine, date: new Date().toISOString(), results: rows, stampCheck }, null, 2));
else {
  console.log(machineLine(machine));
  console.table(rows);
  console.log(`stamp check (bin/meguri.js, every start): ${stampCheck.wallMs.toFixed(2)} ms wall, ${stampCheck.cpuMs.toFixed(2)} ms CPU (mean of ${checks}, warm cache)`);
}
