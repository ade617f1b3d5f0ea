/**
 * `meguri --help` stays fast only while building the program loads no crawler: main.ts imports the
 * modules of a command inside its action. This walks the static imports from main.ts (type-only
 * imports are erased and do not count) and checks which packages they reach.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const STATIC_IMPORT = /^(?:import|export)\s+(?!type\b)[^;]*?\bfrom\s+'([^']+)'|^import\s+'([^']+)'/gm;

function staticGraph(entry: string): { modules: string[]; packages: Set<string> } {
  const seen = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string): void => {
    if (seen.has(file)) return;
    seen.add(file);
    for (const m of readFileSync(file, 'utf8').matchAll(STATIC_IMPORT)) {
      const spec = (m[1] ?? m[2])!;
      if (spec.startsWith('.')) visit(join(dirname(file), spec));
      else if (!spec.startsWith('node:')) packages.add(spec);
    }
  };
  visit(join(root, entry));
  return { modules: [...seen].map((f) => relative(root, f)), packages };
}

describe('CLI start-up imports', () => {
  it('the walk follows static imports into other modules and packages', () => {
    const { modules, packages } = staticGraph('services/fetcher/dns.ts');
    assert.ok(modules.includes('services/fetcher/resolve-entry.ts'));
    assert.ok(packages.has('undici'), 'dns.ts reaches undici through errors.ts');
  });

  it('building the program (and `--help`) loads commander and small pure modules only', () => {
    const { modules, packages } = staticGraph('services/cli/main.ts');
    assert.deepEqual([...packages].sort(), ['commander']);
    for (const heavy of ['services/runtime/index.ts', 'services/cli/crawl.ts', 'services/fetcher/fetch.ts', 'services/fetcher/dns.ts', 'services/simweb/index.ts']) {
      assert.ok(!modules.includes(heavy), `${heavy} is imported statically by main.ts (directly or not)`);
    }
  });
});
