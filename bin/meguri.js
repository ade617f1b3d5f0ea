#!/usr/bin/env node
// The `meguri` command. It runs the JavaScript compiled into dist/ (built by `npm ci` / `npm install`
// through the `prepare` script, or by `npm run build`) while dist/ matches the sources, and the
// TypeScript sources through tsx otherwise: after an edit, without TypeScript installed
// (`npm ci --omit=dev`), or with MEGURI_NO_DIST=1. With MEGURI_DEBUG set it says which on stderr.
import { fileURLToPath } from 'node:url';
import { checkStamp } from '../scripts/dist-stamp.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = process.env.MEGURI_NO_DIST ? { fresh: false, reason: 'MEGURI_NO_DIST is set' } : checkStamp(root);
if (process.env.MEGURI_DEBUG) console.error(`meguri: ${dist.fresh ? 'running dist/' : `running the sources through tsx (${dist.reason})`}`);
if (dist.fresh) {
  await import('../dist/services/cli/main.js');
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../services/cli/main.ts');
}
