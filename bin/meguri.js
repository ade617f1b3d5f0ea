#!/bin/sh
":" // -- ; n=$(nproc 2>/dev/null) || n=9; export MALLOC_ARENA_MAX="${MALLOC_ARENA_MAX:-2}"; exec node --max-semi-space-size=32 --initial-old-space-size=256 --v8-pool-size=$((n < 6 ? 1 : n > 9 ? 4 : n - 5)) "$0" "$@"
// The line above is read by sh and by Node alike. Run as a program (`npx meguri`, `./bin/meguri.js`,
// the container's entrypoint), sh replaces itself with Node (same process id, so signals reach the
// crawler directly) with two malloc arenas unless MALLOC_ARENA_MAX says otherwise (glibc otherwise
// gives each thread that allocates — event loop, parse workers, RocksDB's and libuv's threads — an
// arena of its own, up to 8 per core, and freed memory stays spread over them: a 20,000-page crawl
// peaks 33–60 MiB lower, no slower; one arena is slower), and with three V8 settings
// (docs/benchmarks.md has the measurements):
// - 32 MiB semi-spaces: the event loop allocates ~250 KB per page of records in flight, and with
//   the default 16 MiB a third of them outlive a scavenge (5-14 % more pages/s, ~60 MiB more RSS);
// - no full collection before the old generation reaches 256 MiB: the parse worker's start-up (the
//   language tables, ~60 MB) otherwise ends in full collections after which V8 lets its heap grow
//   to 170-230 MB of garbage before the next; with it the worker's heap stays under ~100 MB (peak
//   RSS 70-100 MiB lower, 2-4 % more pages/s);
// - as many GC helper threads as there are cores the crawl leaves idle (cores - 1 event loop -
//   parse workers, at least 1, at most Node's default 4): helpers on cores the crawl's own threads
//   keep busy only add CPU (on 2 cores, 1 helper instead of 4: 1-4 % more pages/s, 2-5 % less CPU).
// Node reads the line as a string and a comment, so `node bin/meguri.js` with flags of one's own
// still works.
// The `meguri` command. It runs the JavaScript compiled into dist/ (built by `npm ci` / `npm install`
// through the `prepare` script, or by `npm run build`) while dist/ matches the sources, and the
// TypeScript sources through tsx otherwise: after an edit, without TypeScript installed
// (`npm ci --omit=dev`), or with MEGURI_NO_DIST=1. With MEGURI_DEBUG set it says which on stderr,
// with its process id and Node flags.
import { fileURLToPath } from 'node:url';
import { checkStamp } from '../scripts/dist-stamp.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = process.env.MEGURI_NO_DIST ? { fresh: false, reason: 'MEGURI_NO_DIST is set' } : checkStamp(root);
if (process.env.MEGURI_DEBUG) {
  console.error(`meguri: ${dist.fresh ? 'running dist/' : `running the sources through tsx (${dist.reason})`}`);
  console.error(`meguri: process ${process.pid}, node flags: ${process.execArgv.join(' ') || '(none)'}`);
  console.error(`meguri: malloc arenas: ${process.env.MALLOC_ARENA_MAX ?? "glibc's default"}`);
}
if (dist.fresh) {
  await import('../dist/services/cli/main.js');
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../services/cli/main.ts');
}
