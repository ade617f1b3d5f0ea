/**
 * Writes the generated parts of the reference docs from their single sources: the environment
 * table of docs/configuration.md (services/cli/environment.ts, with the runtime's zod schema). The
 * field reference of docs/topics.md comes from `npm run schemas:generate`. `--check` writes nothing
 * and fails when a file is stale (test/unit/reference-docs.test.ts does the same).
 *
 *   npm run docs:generate [-- --check]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatedDocs, withGenerated } from '../services/cli/reference-docs.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const check = process.argv.includes('--check');
let stale = 0;
for (const doc of generatedDocs()) {
  const path = join(root, doc.path);
  const text = readFileSync(path, 'utf8');
  const next = withGenerated(text, doc);
  if (next === text) continue;
  if (check) {
    console.error(`${doc.path} is stale: run \`npm run docs:generate\``);
    stale++;
  } else {
    writeFileSync(path, next);
    console.log(`wrote the generated part of ${doc.path}`);
  }
}
process.exitCode = stale > 0 ? 1 : 0;
