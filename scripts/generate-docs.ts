/**
 * Writes the generated parts of the reference docs from their single sources: the environment
 * table of docs/configuration.md (services/cli/environment.ts, with the runtime's zod schema) and
 * the usage, arguments and flags of every command in docs/cli.md (the commander definitions, through
 * services/cli/cli-reference.ts). The field reference of docs/topics.md comes from
 * `npm run schemas:generate`. `--check` writes nothing and fails when a file is stale
 * (test/unit/reference-docs.test.ts does the same).
 *
 *   npm run docs:generate [-- --check]
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generatedDocs, withGenerated } from '../services/cli/reference-docs.ts';
import type { GeneratedDoc } from '../services/cli/reference-docs.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const check = process.argv.includes('--check');
// A doc can hold several blocks: each file is read once, all its blocks replaced, written once.
const byPath = new Map<string, GeneratedDoc[]>();
for (const doc of generatedDocs()) byPath.set(doc.path, [...(byPath.get(doc.path) ?? []), doc]);
let stale = 0;
for (const [file, docs] of byPath) {
  const path = join(root, file);
  const text = readFileSync(path, 'utf8');
  const next = docs.reduce(withGenerated, text);
  if (next === text) continue;
  if (check) {
    const blocks = docs.filter((doc) => withGenerated(text, doc) !== text).map((doc) => `"${doc.block}"`);
    console.error(`${file} is stale (${blocks.join(', ')}): run \`npm run docs:generate\``);
    stale++;
  } else {
    writeFileSync(path, next);
    console.log(`wrote the generated parts of ${file}`);
  }
}
process.exitCode = stale > 0 ? 1 : 0;
