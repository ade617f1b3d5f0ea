#!/usr/bin/env node
// Compiles the TypeScript sources into dist/ (tsconfig.build.json) so that `meguri` starts without
// transpiling them; bin/meguri.js runs dist/ only while dist/stamp.json matches the sources.
//
//   node scripts/build.mjs              `npm run build`: fails when TypeScript is missing or tsc fails
//   node scripts/build.mjs --optional   `prepare` (run by npm ci / npm install): never fails the
//                                       install; without TypeScript (npm ci --omit=dev) or without
//                                       sources (a dependencies-only image layer) it builds nothing,
//                                       and `meguri` runs the sources through tsx.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { DIST_DIR, SOURCE_ROOTS, STAMP_FILE, takeStamp } from './dist-stamp.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const optional = process.argv.includes('--optional');
/** Files the compiled code loads at run time that tsc does not emit: copied beside it. */
const ASSET = /\.(mjs|cjs|json)$/;

function skip(message) {
  console.error(`meguri build: ${message}; \`meguri\` will run the TypeScript sources through tsx`);
  process.exit(optional ? 0 : 1);
}

let tsc;
try {
  tsc = createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc');
} catch {
  skip('TypeScript is not installed (dev dependencies omitted?), dist/ not built');
}
if (!SOURCE_ROOTS.every((dir) => existsSync(join(root, dir))) || !existsSync(join(root, 'tsconfig.build.json'))) {
  skip('no sources to compile here yet, dist/ not built');
}

// The stamp describes the sources as they are before tsc reads them: a file edited while the
// build runs then no longer matches, and the next start falls back to the sources.
const stamp = takeStamp(root);
const dist = join(root, DIST_DIR);
rmSync(dist, { recursive: true, force: true });
const started = Date.now();
const result = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { cwd: root, stdio: 'inherit' });
if (result.status !== 0) skip(`tsc failed (${result.error?.message ?? `exit code ${result.status ?? result.signal}`}), dist/ left without a stamp`);

let copied = 0;
for (const dir of SOURCE_ROOTS) {
  for (const rel of readdirSync(join(root, dir), { recursive: true })) {
    const file = join(dir, String(rel));
    if (!ASSET.test(file) || existsSync(join(dist, file))) continue;
    mkdirSync(dirname(join(dist, file)), { recursive: true });
    copyFileSync(join(root, file), join(dist, file));
    copied++;
  }
}

// ELD's n-gram table as plain arrays, which a parse worker loads in a tenth of the time of ELD's own
// module (services/parser/language-detector.ts, COMPACT_NGRAMS_FILE); without it the parser reads
// ELD's module as it does from the sources.
try {
  const detector = await import(pathToFileURL(join(dist, 'services', 'parser', 'language-detector.js')).href);
  const { data, eld } = await detector.loadEldNgrams();
  writeFileSync(join(dist, 'services', 'parser', detector.COMPACT_NGRAMS_FILE), JSON.stringify(detector.compactNgrams(data, eld)));
} catch (err) {
  console.error(`meguri build: no compact language tables (${err instanceof Error ? err.message : String(err)}); the parser reads ELD's own`);
}

// Written last and atomically: a build that stopped half-way leaves no stamp, so it is never run.
const stampPath = join(root, STAMP_FILE);
writeFileSync(`${stampPath}.tmp`, JSON.stringify(stamp) + '\n');
renameSync(`${stampPath}.tmp`, stampPath);
const sources = stamp.entries.filter(([, size]) => size >= 0).length;
console.error(`meguri build: ${DIST_DIR}/ built from ${sources} source files (${copied} copied as they are) in ${((Date.now() - started) / 1000).toFixed(1)} s`);
