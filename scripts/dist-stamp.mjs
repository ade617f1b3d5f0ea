// The stamp of the compiled tree (dist/): every source file and directory it was built from, with
// its size and modification time, taken just before compiling. bin/meguri.js runs dist/ only while
// the sources still match the stamp (one stat per entry, a few milliseconds), so a source that was
// edited, added or removed after the build never runs as stale JavaScript.
//
// Plain JavaScript on purpose: bin/meguri.js reads it before any TypeScript loader is registered.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Bumped when the stamp's layout changes: an older stamp is then stale. */
export const STAMP_VERSION = 1;
/** The compiled output and its stamp, relative to the repository root. */
export const DIST_DIR = 'dist';
export const STAMP_FILE = 'dist/stamp.json';
/** The trees compiled into dist/ (all of their files count, so a new or removed file is seen). */
export const SOURCE_ROOTS = ['services', 'schemas', 'topology'];
/** Files outside those trees that decide what the compiled code is. */
export const SOURCE_FILES = ['package.json', 'tsconfig.json', 'tsconfig.build.json'];

/**
 * Entries of the stamp: [path, size, mtimeMs] for a file, [path, -1, mtimeMs] for a directory (its
 * time changes when a file in it is added, removed or renamed). Paths use '/' and are sorted.
 */
export function takeStamp(root) {
  const entries = [];
  const visit = (rel) => {
    const st = statSync(join(root, rel));
    if (st.isDirectory()) {
      entries.push([rel, -1, st.mtimeMs]);
      for (const name of readdirSync(join(root, rel)).sort()) visit(`${rel}/${name}`);
    } else if (st.isFile()) {
      entries.push([rel, st.size, st.mtimeMs]);
    }
  };
  for (const dir of SOURCE_ROOTS) visit(dir);
  for (const file of SOURCE_FILES) {
    const st = statSync(join(root, file), { throwIfNoEntry: false });
    if (st?.isFile()) entries.push([file, st.size, st.mtimeMs]);
  }
  return { version: STAMP_VERSION, entries };
}

/**
 * Whether dist/ under `root` was built from the sources as they are now. `reason` says why not (no
 * stamp, an unreadable one, or the first entry that differs).
 */
export function checkStamp(root) {
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(join(root, STAMP_FILE), 'utf8'));
  } catch (err) {
    return { fresh: false, reason: err.code === 'ENOENT' ? 'dist/ is not built' : `${STAMP_FILE} is unreadable: ${err.message}` };
  }
  if (stamp?.version !== STAMP_VERSION || !Array.isArray(stamp.entries)) return { fresh: false, reason: `${STAMP_FILE} is from another version of the build` };
  for (const [rel, size, mtimeMs] of stamp.entries) {
    const st = statSync(join(root, rel), { throwIfNoEntry: false });
    if (st === undefined) return { fresh: false, reason: `${rel} was removed since the build` };
    const same = size === -1 ? st.isDirectory() && st.mtimeMs === mtimeMs : st.isFile() && st.size === size && st.mtimeMs === mtimeMs;
    if (!same) return { fresh: false, reason: `${rel} changed since the build` };
  }
  // A file that did not exist at build time (e.g. tsconfig.build.json added later) is caught by its
  // directory's time, except at the root: check the few root files the stamp does not list.
  const listed = new Set(stamp.entries.map((e) => e[0]));
  for (const file of SOURCE_FILES) {
    if (!listed.has(file) && statSync(join(root, file), { throwIfNoEntry: false }) !== undefined) return { fresh: false, reason: `${file} was added since the build` };
  }
  return { fresh: true, reason: 'dist/ matches the sources' };
}
