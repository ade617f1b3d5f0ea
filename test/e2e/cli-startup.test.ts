/**
 * How `meguri` starts: bin/meguri.js runs the JavaScript compiled into dist/ while dist/stamp.json
 * matches the sources, and the TypeScript sources through tsx otherwise (before a build, after an
 * edit, with MEGURI_NO_DIST=1, or without TypeScript installed, where `prepare` builds nothing).
 * Each case works on a copy of the repository's sources in a temporary directory and builds it
 * there with scripts/build.mjs, as `npm ci` does through `prepare`; MEGURI_DEBUG makes bin say
 * which of the two it runs.
 */
import { describe, it, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const repo = fileURLToPath(new URL('../..', import.meta.url));
/** What a checkout holds that the command and its build need (not dist/, not the tests). */
const COPIED = ['bin', 'scripts', 'services', 'schemas', 'topology', 'package.json', 'tsconfig.json', 'tsconfig.build.json'];

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** A copy of the sources; node_modules links to the repository's, leaving out the packages named. */
function checkout(dirs: string[], without: string[] = []): string {
  const dir = mkdtempSync(join(tmpdir(), 'meguri-startup-'));
  dirs.push(dir);
  for (const entry of COPIED) cpSync(join(repo, entry), join(dir, entry), { recursive: true });
  if (without.length === 0) {
    symlinkSync(join(repo, 'node_modules'), join(dir, 'node_modules'), 'dir');
  } else {
    mkdirSync(join(dir, 'node_modules'));
    for (const name of readdirSync(join(repo, 'node_modules'))) {
      if (!without.includes(name)) symlinkSync(join(repo, 'node_modules', name), join(dir, 'node_modules', name));
    }
  }
  return dir;
}

function node(dir: string, args: string[], env: Record<string, string> = {}, timeout = 180_000): Run {
  const r = spawnSync(process.execPath, args, { cwd: dir, encoding: 'utf8', timeout, env: { ...process.env, MEGURI_DEBUG: '1', ...env } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

function meguri(dir: string, args: string[], env: Record<string, string> = {}): Run {
  return node(dir, [join(dir, 'bin/meguri.js'), ...args], env);
}

describe('meguri start-up: compiled dist/ or the sources', { timeout: 600_000 }, () => {
  const dirs: string[] = [];
  after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

  it('without TypeScript, prepare builds nothing and does not fail; the command runs the sources', () => {
    const dir = checkout(dirs, ['typescript']);
    const prepare = node(dir, ['scripts/build.mjs', '--optional']);
    assert.equal(prepare.status, 0, prepare.stderr);
    assert.match(prepare.stderr, /TypeScript is not installed/);
    assert.equal(existsSync(join(dir, 'dist')), false);
    // `npm run build` asked for a build: it says why there is none and fails.
    assert.equal(node(dir, ['scripts/build.mjs']).status, 1);
    const help = meguri(dir, ['--help']);
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stderr, /running the sources through tsx \(dist\/ is not built\)/);
    assert.match(help.stdout, /Usage: meguri/);
  });

  it('run as a program, bin/meguri.js becomes node with meguri\'s V8 flags in the same process', () => {
    const dir = checkout(dirs);
    const r = spawnSync(join(dir, 'bin/meguri.js'), ['--version'], { cwd: dir, encoding: 'utf8', env: { ...process.env, MEGURI_DEBUG: '1' } });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^\d+\.\d+\.\d+/);
    // sh replaced itself with node: the pid the caller knows is the crawler's (signals, kill -9).
    assert.match(r.stderr, new RegExp(`^meguri: process ${r.pid}, node flags: --max-semi-space-size=32 --initial-old-space-size=256 --v8-pool-size=\\d$`, 'm'));
    // Two malloc arenas unless the caller chose a number (glibc reads it when the process starts).
    const { MALLOC_ARENA_MAX: _arenas, ...inherited } = process.env;
    const arenas = spawnSync(join(dir, 'bin/meguri.js'), ['--version'], { cwd: dir, encoding: 'utf8', env: { ...inherited, MEGURI_DEBUG: '1' } });
    assert.match(arenas.stderr, /^meguri: malloc arenas: 2$/m);
    const chosen = spawnSync(join(dir, 'bin/meguri.js'), ['--version'], { cwd: dir, encoding: 'utf8', env: { ...inherited, MEGURI_DEBUG: '1', MALLOC_ARENA_MAX: '4' } });
    assert.match(chosen.stderr, /^meguri: malloc arenas: 4$/m);
    // GC helper threads: the cores the crawl's event loop and parse workers leave idle, 1 to 4
    // (nproc reads OMP_NUM_THREADS, which stands in for machines of other sizes here).
    for (const [cores, helpers] of [[2, 1], [6, 1], [7, 2], [8, 3], [64, 4]] as const) {
      const sized = spawnSync(join(dir, 'bin/meguri.js'), ['--version'], { cwd: dir, encoding: 'utf8', env: { ...process.env, MEGURI_DEBUG: '1', OMP_NUM_THREADS: String(cores) } });
      assert.equal(sized.status, 0, sized.stderr);
      assert.match(sized.stderr, new RegExp(`node flags: --max-semi-space-size=32 --initial-old-space-size=256 --v8-pool-size=${helpers}$`, 'm'), `${cores} cores`);
    }
    // Started by node directly, the launcher line is inert and node keeps the caller's flags.
    const direct = node(dir, ['--max-semi-space-size=8', join(dir, 'bin/meguri.js'), '--version']);
    assert.equal(direct.status, 0, direct.stderr);
    assert.match(direct.stderr, /node flags: --max-semi-space-size=8$/m);
    if (process.env.MALLOC_ARENA_MAX === undefined) assert.match(direct.stderr, /^meguri: malloc arenas: glibc's default$/m);
  });

  it('after a build it runs dist/ with the same output; an edited source or MEGURI_NO_DIST runs the sources', () => {
    const dir = checkout(dirs);
    const build = node(dir, ['scripts/build.mjs']);
    assert.equal(build.status, 0, build.stderr);
    for (const file of ['stamp.json', 'services/cli/main.js', 'services/parser/parse-worker.js', 'services/parser/parse-worker-boot.mjs', 'services/runtime/kafka/kafkajs.cjs', 'services/runtime/kafka/read-committed.cjs', 'package.json']) {
      assert.ok(existsSync(join(dir, 'dist', file)), `dist/${file} missing`);
    }

    for (const args of [['--help'], ['crawl', '--help'], ['run', '--help'], ['--version']]) {
      const compiled = meguri(dir, args);
      assert.equal(compiled.status, 0, compiled.stderr);
      assert.match(compiled.stderr, /^meguri: running dist\/$/m);
      const sources = meguri(dir, args, { MEGURI_NO_DIST: '1' });
      assert.equal(sources.status, 0, sources.stderr);
      assert.match(sources.stderr, /running the sources through tsx \(MEGURI_NO_DIST is set\)/);
      assert.equal(compiled.stdout, sources.stdout, `${args.join(' ')}: dist/ and the sources print the same`);
    }
    // A bad flag fails the same way from dist/.
    const bad = meguri(dir, ['crawl', '--resolve', 'no-ip', 'http://a.test/']);
    assert.equal(bad.status, 1);
    assert.match(bad.stderr, /--resolve "no-ip": expected PATTERN=IP/);

    // A whole crawl from dist/: RocksDB, the package.json import, the kafkajs .cjs files, and the
    // parse worker thread booted from dist/ with no TypeScript loader.
    const data = join(dir, 'crawl-data');
    const demo = meguri(dir, ['demo', '--hosts', '2', '--pages', '5', '--no-progress', '--parser-workers', '1', '--data', data]);
    assert.equal(demo.status, 0, demo.stderr);
    assert.match(demo.stderr, /^meguri: running dist\/$/m);
    const summary = JSON.parse(demo.stdout) as { pagesFetched: number; errors: number };
    assert.equal(summary.pagesFetched, 10);
    assert.equal(summary.errors, 0);

    // A developer edits a source: the next start runs the edit, not the stale dist/.
    const main = join(dir, 'services/cli/program.ts');
    writeFileSync(main, readFileSync(main, 'utf8').replace("'An incremental, polite web crawler", "'(edited) An incremental, polite web crawler"));
    const edited = meguri(dir, ['--help']);
    assert.equal(edited.status, 0, edited.stderr);
    assert.match(edited.stderr, /running the sources through tsx \(services\/cli\/program\.ts changed since the build\)/);
    assert.match(edited.stdout, /\(edited\) An incremental/);
    // Built again, dist/ has the edit and is used.
    assert.equal(node(dir, ['scripts/build.mjs']).status, 0);
    const rebuilt = meguri(dir, ['--help']);
    assert.match(rebuilt.stderr, /^meguri: running dist\/$/m);
    assert.match(rebuilt.stdout, /\(edited\) An incremental/);
  });
});
