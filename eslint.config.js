// Lint rules: typescript-eslint's recommended set plus a few rules that catch real bugs in async stream code.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import { readdirSync } from 'node:fs';

const KAFKAJS_RULE = { name: 'kafkajs', message: "import { kafkajs } from services/runtime/kafka/kafkajs.ts (it fixes kafkajs's read_committed filter)", allowTypeImports: true };

/** Modules under services/ any service may import: the runtime, shared rules, and pure libraries with no service of their own. */
const SHARED_MODULES = ['runtime', 'common', 'revisit'];
/** The composition root: wires every service into commands. */
const COMPOSITION_ROOTS = ['cli'];
/**
 * The bottom layer: a stream-processing runtime that knows nothing of the crawler. It imports no
 * other part of services/ (not even the shared ones), nor schemas/ or topology/, which build on it.
 */
const BOTTOM_LAYER = 'runtime';

/**
 * One no-restricted-imports block per directory level of each service: from services/<a>/ (at any
 * depth) an import that climbs out to services/<b>/ is refused unless <b> is a shared module.
 */
function serviceBoundaries() {
  const services = readdirSync(new URL('./services', import.meta.url), { withFileTypes: true })
    .filter((d) => d.isDirectory() && !COMPOSITION_ROOTS.includes(d.name))
    .map((d) => d.name);
  const blocks = [];
  for (const service of services) {
    for (let depth = 1; depth <= 4; depth++) {
      const up = '\\.\\./'.repeat(depth);
      const bottom = service === BOTTOM_LAYER;
      const allowed = (bottom ? [service] : [...SHARED_MODULES, service]).map((m) => `${m}/`).join('|');
      const patterns = [
        {
          regex: `^${up}(?!${allowed})[a-z][a-z0-9-]*/`,
          message: bottom
            ? 'services/runtime must not import from the rest of services/: it is the bottom layer every service builds on.'
            : `services/${service} must not import another service: move what both need to services/common (or schemas/, topology/), or wire them together in services/cli.`,
        },
      ];
      if (bottom) {
        patterns.push({
          regex: `^${up}\\.\\./(schemas|topology)/`,
          message: 'services/runtime must not import schemas/ or topology/: they build on the runtime, which knows no topic or record format.',
        });
      }
      blocks.push({
        files: [`services/${service}/${'*/'.repeat(depth - 1)}*.ts`],
        rules: { '@typescript-eslint/no-restricted-imports': ['error', { paths: [KAFKAJS_RULE], patterns }] },
      });
    }
  }
  return blocks;
}

/** schemas/ (the record formats) build on nothing in services/; topology/ on no part of the CLI. */
function layerBoundaries() {
  const rule = (regex, message) => ({ '@typescript-eslint/no-restricted-imports': ['error', { paths: [KAFKAJS_RULE], patterns: [{ regex, message }] }] });
  return [
    {
      files: ['schemas/**/*.ts'],
      rules: rule('^(\\.\\./)+services/', 'schemas/ must not import from services/: the record formats are the layer services build on (pass what a schema needs in as an argument).'),
    },
    {
      files: ['topology/**/*.ts'],
      rules: rule('^(\\.\\./)+services/cli/', 'topology/ must not import services/cli: the CLI wires topology in, not the other way round (move the shared part next to the service it describes).'),
    },
  ];
}

/**
 * Size limits (issue 45): past them a file or function is split along its seams. Every line counts,
 * comments and blank lines included, so the figure is the one `wc -l` and an editor show; a doc
 * comment costs as much as code, and the limits leave room for both.
 */
const SIZE_LIMITS = {
  'max-lines': ['error', { max: 600, skipBlankLines: false, skipComments: false }],
  'max-lines-per-function': ['error', { max: 120, skipBlankLines: false, skipComments: false, IIFEs: true }],
};
/**
 * Tests: a describe() or test() callback is a list of cases rather than one piece of logic, so no
 * per-function limit; files may be longer than sources but may not grow past the largest of today.
 */
const TEST_SIZE_LIMITS = { 'max-lines': ['error', { max: 1100, skipBlankLines: false, skipComments: false }] };

export default tseslint.config(
  { ignores: ['node_modules/**', 'dist/**', '.cache/**', '.data/**', 'schemas/json/**', 'deploy/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-constant-condition': ['error', { checkLoops: false }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
    },
  },
  {
    // kafkajs only through services/runtime/kafka/kafkajs.ts, which fixes its read_committed filter.
    files: ['services/**/*.ts', 'topology/**/*.ts', 'bench/**/*.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', { paths: [KAFKAJS_RULE] }] },
  },
  // Services never import each other (docs/architecture.md, "Dependencies"): each depends only on
  // services/runtime, services/common, the pure libraries, schemas/ and topology/. The CLI is the
  // composition root that wires them together, so it alone may import any service.
  ...serviceBoundaries(),
  // The layers around the services (docs/architecture.md, "Dependencies"): runtime at the bottom,
  // then schemas/ and topology/, then the services, then the CLI.
  ...layerBoundaries(),
  { files: ['**/*.ts', '**/*.js', '**/*.mjs', '**/*.cjs'], ignores: ['test/**'], rules: SIZE_LIMITS },
  { files: ['test/**/*.ts', 'test/**/*.js', 'test/**/*.mjs', 'test/**/*.cjs'], rules: TEST_SIZE_LIMITS },
  {
    // CommonJS on purpose: the kafkajs fix must sit in require's module cache.
    files: ['**/*.cjs', '**/*.d.cts'],
    languageOptions: { sourceType: 'commonjs', globals: { require: 'readonly', module: 'writable', Buffer: 'readonly' } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
  {
    files: ['**/*.js', '**/*.mjs'],
    languageOptions: { globals: { process: 'readonly', console: 'readonly', URL: 'readonly', setTimeout: 'readonly' } },
  },
);
