import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ESLint } from 'eslint';

const eslint = new ESLint({ cwd: new URL('../..', import.meta.url).pathname });

async function sizeRules(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages.filter((m) => m.ruleId === 'max-lines' || m.ruleId === 'max-lines-per-function').map((m) => m.ruleId!);
}

/** A function of `lines` lines in all (its signature and closing brace included). */
function fn(name: string, lines: number): string {
  const body = Array.from({ length: lines - 3 }, (_, i) => `  n += ${i};`);
  return [`export function ${name}(): number {`, '  let n = 0;', ...body.slice(0, lines - 4), '  return n;', '}'].join('\n');
}

test('a source function over 120 lines and a source file over 600 lines fail lint; comments count', async () => {
  assert.deepEqual(await sizeRules('services/common/x.ts', fn('f', 120) + '\n'), []);
  assert.deepEqual(await sizeRules('services/common/x.ts', fn('f', 121) + '\n'), ['max-lines-per-function']);
  const file = (lines: number): string => Array.from({ length: lines }, (_, i) => (i % 2 === 0 ? `export const c${i} = ${i};` : `// note ${i}`)).join('\n') + '\n';
  assert.deepEqual(await sizeRules('topology/x.ts', file(600)), []);
  assert.deepEqual(await sizeRules('topology/x.ts', file(601)), ['max-lines']);
  assert.deepEqual(await sizeRules('bench/x.ts', file(601)), ['max-lines']);
});

test('tests have no function limit and a file limit of 1100 lines', async () => {
  assert.deepEqual(await sizeRules('test/unit/x.test.ts', fn('f', 400) + '\n'), []);
  const file = (lines: number): string => Array.from({ length: lines }, (_, i) => `export const c${i} = ${i};`).join('\n') + '\n';
  assert.deepEqual(await sizeRules('test/unit/x.test.ts', file(1100)), []);
  assert.deepEqual(await sizeRules('test/unit/x.test.ts', file(1101)), ['max-lines']);
});
