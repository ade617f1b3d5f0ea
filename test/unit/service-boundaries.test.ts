import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ESLint } from 'eslint';

const RULE = '@typescript-eslint/no-restricted-imports';
const eslint = new ESLint({ cwd: new URL('../..', import.meta.url).pathname });

async function restricted(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return result!.messages.filter((m) => m.ruleId === RULE).map((m) => m.message);
}

test('a service importing another service fails lint, at any depth of its folder', async () => {
  const cases: [string, string][] = [
    ['services/parser/x.ts', "import { fetchPage } from '../fetcher/fetch.ts';\nexport const f = fetchPage;\n"],
    ['services/fetcher/x.ts', "import { SchedulerProcessor } from '../scheduler/processor.ts';\nexport const f = SchedulerProcessor;\n"],
    ['services/scheduler/robots/x.ts', "import { parserService } from '../../parser/service.ts';\nexport const f = parserService;\n"],
    ['services/scheduler/x.ts', "import { SimWeb } from '../simweb/index.ts';\nexport const f = SimWeb;\n"],
  ];
  for (const [file, code] of cases) {
    const messages = await restricted(file, code);
    assert.equal(messages.length, 1, `${file}: ${code}`);
    assert.match(messages[0]!, /must not import another service/);
  }
});

test('runtime, shared modules, schemas, topology, its own files and the CLI are allowed', async () => {
  const cases: [string, string][] = [
    ['services/parser/x.ts', "import { hostKey } from '../common/url.ts';\nimport { SCHEMA_VERSION } from '../../schemas/index.ts';\nimport { serviceSpec } from '../../topology/index.ts';\nimport { systemClock } from '../runtime/index.ts';\nexport const f = [hostKey, SCHEMA_VERSION, serviceSpec, systemClock];\n"],
    ['services/scheduler/politeness/x.ts', "import { requiredDelay } from '../../revisit/selection.ts';\nimport { queueKey } from '../state.ts';\nimport { SCHEMA_VERSION } from '../../../schemas/index.ts';\nexport const f = [requiredDelay, queueKey, SCHEMA_VERSION];\n"],
    ['services/cli/x.ts', "import { schedulerService } from '../scheduler/service.ts';\nimport { fetcherService } from '../fetcher/service.ts';\nexport const f = [schedulerService, fetcherService];\n"],
  ];
  for (const [file, code] of cases) assert.deepEqual(await restricted(file, code), [], file);
});

test('the runtime imports nothing from the rest of services/, nor schemas/ or topology/', async () => {
  const cases: [string, string][] = [
    ['services/runtime/x.ts', "import { pageRecord } from '../../schemas/index.ts';\nexport const f = pageRecord;\n"],
    ['services/runtime/x.ts', "import { serviceSpec } from '../../topology/index.ts';\nexport const f = serviceSpec;\n"],
    ['services/runtime/x.ts', "import { hostKey } from '../common/url.ts';\nexport const f = hostKey;\n"],
    ['services/runtime/embedded/x.ts', "import { requiredDelay } from '../../revisit/selection.ts';\nexport const f = requiredDelay;\n"],
    ['services/runtime/kafka/x.ts', "import { SCHEMA_VERSION } from '../../../schemas/index.ts';\nexport const f = SCHEMA_VERSION;\n"],
  ];
  for (const [file, code] of cases) {
    const messages = await restricted(file, code);
    assert.equal(messages.length, 1, `${file}: ${code}`);
    assert.match(messages[0]!, /services\/runtime must not import/);
  }
});

test('schemas/ import nothing from services/, topology/ nothing from the CLI', async () => {
  const cases: [string, string, RegExp][] = [
    ['schemas/x.ts', "import { conformanceOf } from '../services/runtime/conformance.ts';\nexport const f = conformanceOf;\n", /schemas\/ must not import from services/],
    ['schemas/x.ts', "import { hostKey } from '../services/common/url.ts';\nexport const f = hostKey;\n", /schemas\/ must not import from services/],
    ['topology/x.ts', "import { readSchedulerConfig } from '../services/cli/scheduler-config.ts';\nexport const f = readSchedulerConfig;\n", /topology\/ must not import services\/cli/],
  ];
  for (const [file, code, message] of cases) {
    const messages = await restricted(file, code);
    assert.equal(messages.length, 1, `${file}: ${code}`);
    assert.match(messages[0]!, message);
  }
});

test('the runtime, schemas/ and topology/ may import their own files and the layers below them', async () => {
  const cases: [string, string][] = [
    ['services/runtime/x.ts', "import { systemClock } from './clock.ts';\nexport const f = systemClock;\n"],
    ['services/runtime/embedded/x.ts', "import { partitionForKey } from '../partitioner.ts';\nexport const f = partitionForKey;\n"],
    ['schemas/x.ts', "import { httpUrl } from './common.ts';\nexport const f = httpUrl;\n"],
    ['topology/x.ts', "import { SCHEMA_VERSION } from '../schemas/index.ts';\nimport { robotsBody } from '../services/common/robots-body.ts';\nimport { schedulerDefaults } from '../services/scheduler/options.ts';\nexport const f = [SCHEMA_VERSION, robotsBody, schedulerDefaults];\n"],
  ];
  for (const [file, code] of cases) assert.deepEqual(await restricted(file, code), [], file);
});
