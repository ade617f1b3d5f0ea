/**
 * The stamp that lets bin/meguri.js run the compiled dist/ only while it matches the sources:
 * fresh right after a build; stale once a source file is edited, touched, added or removed, or
 * when a file that decides the build appears; missing or unreadable stamps never count as fresh.
 */
import { describe, it, beforeEach, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkStamp, STAMP_FILE, STAMP_VERSION, takeStamp } from '../../scripts/dist-stamp.mjs';

/** Every file and directory under `dir` back to one old time, so any later change gets a new one. */
function ageTree(dir: string, when = new Date('2026-01-01T00:00:00Z')): void {
  for (const name of readdirSync(dir, { recursive: true })) utimesSync(join(dir, String(name)), when, when);
  utimesSync(dir, when, when);
}

describe('dist/ stamp', () => {
  let root: string;

  function write(rel: string, text: string): void {
    mkdirSync(join(root, rel, '..'), { recursive: true });
    writeFileSync(join(root, rel), text);
  }

  function build(): void {
    ageTree(root);
    const stamp = takeStamp(root);
    write(STAMP_FILE, JSON.stringify(stamp));
  }

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'meguri-stamp-'));
    write('package.json', '{"name":"x"}');
    write('tsconfig.json', '{}');
    write('services/cli/main.ts', 'export {};\n');
    write('services/parser/parse-worker-boot.mjs', '// boot\n');
    write('schemas/index.ts', 'export const A = 1;\n');
    write('topology/index.ts', 'export const B = 2;\n');
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('lists every file and directory of the source trees and the root files that exist', () => {
    const stamp = takeStamp(root);
    assert.equal(stamp.version, STAMP_VERSION);
    const paths = stamp.entries.map((e) => e[0]);
    assert.deepEqual(paths, ['services', 'services/cli', 'services/cli/main.ts', 'services/parser', 'services/parser/parse-worker-boot.mjs', 'schemas', 'schemas/index.ts', 'topology', 'topology/index.ts', 'package.json', 'tsconfig.json']);
    const main = stamp.entries.find((e) => e[0] === 'services/cli/main.ts')!;
    assert.equal(main[1], 'export {};\n'.length);
    assert.equal(main[2], statSync(join(root, 'services/cli/main.ts')).mtimeMs);
    assert.equal(stamp.entries.find((e) => e[0] === 'services')![1], -1);
  });

  it('is fresh right after a build', () => {
    build();
    assert.deepEqual(checkStamp(root), { fresh: true, reason: 'dist/ matches the sources' });
  });

  it('is missing before the first build, and an unreadable or foreign stamp is not fresh', () => {
    assert.deepEqual(checkStamp(root), { fresh: false, reason: 'dist/ is not built' });
    write(STAMP_FILE, '{"version": 1, "entr');
    assert.equal(checkStamp(root).fresh, false);
    assert.match(checkStamp(root).reason, /unreadable/);
    write(STAMP_FILE, JSON.stringify({ ...takeStamp(root), version: STAMP_VERSION + 1 }));
    assert.deepEqual(checkStamp(root), { fresh: false, reason: `${STAMP_FILE} is from another version of the build` });
  });

  it('goes stale when a source is edited, even to the same size', () => {
    build();
    write('schemas/index.ts', 'export const A = 2;\n');
    assert.deepEqual(checkStamp(root), { fresh: false, reason: 'schemas/index.ts changed since the build' });
    build();
    assert.equal(checkStamp(root).fresh, true);
    // Same bytes, new time (a checkout or an editor's save): stale too, to be safe.
    const now = new Date();
    utimesSync(join(root, 'services/cli/main.ts'), now, now);
    assert.deepEqual(checkStamp(root), { fresh: false, reason: 'services/cli/main.ts changed since the build' });
  });

  it('goes stale when a source file is added or removed, or a build file appears at the root', () => {
    build();
    write('services/cli/new-command.ts', 'export {};\n');
    assert.deepEqual(checkStamp(root), { fresh: false, reason: 'services/cli changed since the build' });
    build();
    rmSync(join(root, 'topology/index.ts'));
    assert.deepEqual(checkStamp(root), { fresh: false, reason: 'topology changed since the build' });
    // Even with the directory's time set back, the file itself is missed.
    ageTree(join(root, 'topology'));
    assert.deepEqual(checkStamp(root), { fresh: false, reason: 'topology/index.ts was removed since the build' });
    build();
    write('tsconfig.build.json', '{}');
    assert.deepEqual(checkStamp(root), { fresh: false, reason: 'tsconfig.build.json was added since the build' });
    build();
    write('package.json', '{"name":"x","version":"2"}');
    assert.deepEqual(checkStamp(root), { fresh: false, reason: 'package.json changed since the build' });
  });

  it('goes stale when a file becomes a directory', () => {
    build();
    rmSync(join(root, 'schemas/index.ts'));
    mkdirSync(join(root, 'schemas/index.ts'));
    // The directory's time changed first; either way the stamp no longer matches.
    assert.equal(checkStamp(root).fresh, false);
  });
});
