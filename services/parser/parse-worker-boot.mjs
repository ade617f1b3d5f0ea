// Worker threads do not inherit a loader registered through tsx's API. In the compiled tree
// (dist/, see scripts/build.mjs) the worker is JavaScript already, beside this file; from the
// sources, register tsx here, then load the TypeScript worker.
import { existsSync } from 'node:fs';

const compiled = new URL('./parse-worker.js', import.meta.url);
if (existsSync(compiled)) {
  await import(compiled.href);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('./parse-worker.ts');
}
