// Language detectors on the project's multilingual sample: accuracy, µs per text and load cost.
// ELD (`eld/small`) as the parser runs it (language-detector.ts: ELD's tables and answers, less
// work per text) and through its own detect(), against tinyld (the runner-up, a dev dependency
// kept for this comparison). Each detector is loaded in this process in turn; load time and heap
// growth are measured around its import.
// Run: npm run bench:language -- [--rounds N] [--json]
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { machineInfo, machineLine } from './machine.ts';

interface Sample {
  lang: string;
  text: string;
}

const args = process.argv.slice(2);
const json = args.includes('--json');
const roundsAt = args.indexOf('--rounds');
const rounds = roundsAt >= 0 ? Math.max(1, Number(args[roundsAt + 1]) || 200) : 200;
const here = path.dirname(fileURLToPath(import.meta.url));
const samples = JSON.parse(readFileSync(path.join(here, '..', 'test', 'fixtures', 'lang', 'samples.json'), 'utf8')) as Sample[];

interface Candidate {
  name: string;
  load: () => Promise<(text: string) => string>;
}

const candidates: Candidate[] = [
  {
    name: 'eld/small, compiled (used)',
    load: async () => {
      const { createDetector, loadEldTables } = await import('../services/parser/language-detector.ts');
      const detector = createDetector(await loadEldTables());
      return (t) => detector.detect(t).language;
    },
  },
  {
    // the same tables, already loaded by the row above: its load and heap are its own code only
    name: 'eld/small detect()',
    load: async () => {
      const { eld } = await import('eld/small');
      return (t) => eld.detect(t).language;
    },
  },
  {
    name: 'tinyld',
    load: async () => {
      const { detect } = await import('tinyld');
      return (t) => detect(t);
    },
  },
];

interface Row {
  name: string;
  correct: number;
  total: number;
  wrong: string[];
  usPerText: number;
  loadMs: number;
  heapMB: number;
}

const rows: Row[] = [];
for (const c of candidates) {
  global.gc?.();
  const heap0 = process.memoryUsage().heapUsed;
  const t0 = performance.now();
  const detect = await c.load();
  detect('warm up');
  const loadMs = performance.now() - t0;
  const heapMB = (process.memoryUsage().heapUsed - heap0) / 2 ** 20;
  let correct = 0;
  const wrong: string[] = [];
  for (const s of samples) {
    const got = detect(s.text);
    if (got === s.lang) correct++;
    else wrong.push(`${s.lang}→${got || '?'}`);
  }
  for (let i = 0; i < 20; i++) for (const s of samples) detect(s.text);
  const t1 = performance.now();
  for (let i = 0; i < rounds; i++) for (const s of samples) detect(s.text);
  const usPerText = ((performance.now() - t1) * 1000) / (rounds * samples.length);
  rows.push({ name: c.name, correct, total: samples.length, wrong, usPerText, loadMs, heapMB });
}

const machine = machineInfo();
if (json) console.log(JSON.stringify({ machine, rounds, rows }, null, 2));
else {
  console.log(`language detection on ${samples.length} texts in ${new Set(samples.map((s) => s.lang)).size} languages, ${rounds} timed rounds`);
  for (const r of rows) {
    console.log(
      `  ${r.name.padEnd(28)} correct ${r.correct}/${r.total}  ${r.usPerText.toFixed(1).padStart(7)} µs/text  load ${r.loadMs.toFixed(0)} ms, heap +${r.heapMB.toFixed(0)} MB${r.wrong.length > 0 ? `  wrong: ${r.wrong.join(' ')}` : ''}`,
    );
  }
  console.log(machineLine(machine));
}
