/** Types of dist-stamp.mjs (plain JavaScript, read by bin/meguri.js before any TypeScript loader). */
export declare const STAMP_VERSION: number;
export declare const DIST_DIR: string;
export declare const STAMP_FILE: string;
export declare const SOURCE_ROOTS: readonly string[];
export declare const SOURCE_FILES: readonly string[];
/** [path, size (-1 for a directory), mtimeMs] */
export type StampEntry = [path: string, size: number, mtimeMs: number];
export interface Stamp {
  version: number;
  entries: StampEntry[];
}
export declare function takeStamp(root: string): Stamp;
export declare function checkStamp(root: string): { fresh: boolean; reason: string };
