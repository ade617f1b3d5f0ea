/**
 * The reference docs cannot drift from the code: the generated blocks are current (the environment
 * table, and every command's usage and flags in docs/cli.md), every environment variable the sources
 * read is in the generated table, and every flag each command defines is in docs/cli.md.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Command, Option } from 'commander';
import { generatedDocs, withGenerated } from '../../services/cli/reference-docs.ts';
import { commandLines, commandReferences } from '../../services/cli/cli-reference.ts';
import { environmentVariables } from '../../services/cli/environment.ts';
import { buildProgram } from '../../services/cli/program.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

test('the generated blocks of the reference docs are current (run `npm run docs:generate`)', () => {
  for (const doc of generatedDocs()) {
    const text = readFileSync(join(root, doc.path), 'utf8');
    assert.equal(withGenerated(text, doc), text, `${doc.path}: its "${doc.block}" block is stale; run \`npm run docs:generate\``);
  }
});

function sources(dir: string): string[] {
  return readdirSync(join(root, dir), { recursive: true })
    .map(String)
    .filter((f) => /\.(ts|js|mjs|cjs|sh)$/.test(f))
    .map((f) => join(dir, f));
}

test('every MEGURI_ environment variable the sources read is in docs/configuration.md', () => {
  const documented = new Set(environmentVariables().flatMap((v) => v.names));
  const read = new Map<string, string>();
  for (const file of [...sources('services'), ...sources('bin')]) {
    for (const m of readFileSync(join(root, file), 'utf8').matchAll(/\bMEGURI_(?!ERR_)[A-Z0-9_]*[A-Z0-9]\b/g)) read.set(m[0], file);
  }
  assert.ok(read.size >= 20, `found ${read.size} variables: the scan works`);
  const missing = [...read].filter(([name]) => !documented.has(name)).map(([name, file]) => `${name} (${file})`);
  assert.deepEqual(missing, [], 'variables read but not documented (add them to services/cli/environment.ts)');
  // And a table row a variable no longer has is caught too.
  const gone = [...documented].filter((name) => name.startsWith('MEGURI_') && !read.has(name));
  assert.deepEqual(gone, [], 'documented variables nothing reads');
});

test('every flag of every command is in docs/cli.md', () => {
  const doc = readFileSync(join(root, 'docs/cli.md'), 'utf8');
  const missing: string[] = [];
  const walk = (cmd: Command, path: string): void => {
    for (const option of cmd.options) {
      const flag = option.long;
      if (flag && flag !== '--version' && !doc.includes(flag)) missing.push(`${path} ${flag}`);
    }
    for (const sub of cmd.commands) walk(sub, `${path} ${sub.name()}`);
  };
  const program = buildProgram();
  walk(program, 'meguri');
  assert.ok(program.commands.length >= 10);
  assert.deepEqual(missing, [], 'flags the CLI defines that docs/cli.md does not mention');
});

test('every command of the CLI has its generated block in docs/cli.md', () => {
  const program = buildProgram();
  const blocks = new Set(generatedDocs().filter((doc) => doc.path === 'docs/cli.md').map((doc) => doc.block));
  const paths = commandReferences(program).map((ref) => ref.path);
  // Groups that only hold commands have none of their own; every command that runs has one.
  for (const path of ['crawl', 'demo', 'run', 'seed', 'tail', 'replay', 'analyze', 'export warc', 'parse', 'topics create', 'topics describe', 'simulate', 'config', 'stats hosts', 'stats crawl', 'robots check']) {
    assert.ok(paths.includes(path), `no reference for meguri ${path}`);
  }
  assert.ok(!paths.includes('topics') && !paths.includes('help'));
  for (const path of paths) assert.ok(blocks.has(`cli ${path}`), `cli ${path} is not a generated block`);
});

test('a command reference is the help text laid out as markdown', () => {
  const program = new Command('meguri');
  const cmd = program
    .command('try')
    .description('Try <things> out.')
    .argument('<mode...>', 'a | b')
    .requiredOption('--url <url>', 'where')
    .option('--data <dir>', 'data directory', '.data')
    .option('--list <x>', 'repeatable', (v: string, prev: string[]) => [...prev, v], [])
    .addOption(new Option('--dns <mode>', 'static or *system*; `a|b` stays code').choices(['static', 'system']).default('system'))
    .addOption(new Option('--tmp <dir>', 'scratch').default('', 'a new temporary directory'))
    .addOption(new Option('--secret').hideHelp());
  program.command('hidden', { hidden: true });
  assert.deepEqual(commandLines(cmd, 'try'), [
    '`meguri try [options] <mode...>`',
    '',
    'Try \\<things> out.',
    '',
    '| argument | meaning |',
    '|---|---|',
    '| `<mode...>` | a \\| b |',
    '',
    '| flag | default | meaning |',
    '|---|---|---|',
    '| `--url <url>` | required | where |',
    '| `--data <dir>` | `".data"` | data directory |',
    '| `--list <x>` |  | repeatable |',
    '| `--dns <mode>` | `"system"` | static or \\*system\\*; `a\\|b` stays code (choices: `static`, `system`) |',
    '| `--tmp <dir>` | a new temporary directory | scratch |',
  ]);
  assert.deepEqual(commandReferences(program).map((ref) => ref.path), ['try']);
});
