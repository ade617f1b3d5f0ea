// Lint rules: typescript-eslint's recommended set plus a few rules that catch real bugs in async stream code.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', '.cache/**', '.data/**', 'schemas/json/**', 'deploy/**', 'coverage/**'] },
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
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        { paths: [{ name: 'kafkajs', message: "import { kafkajs } from services/runtime/kafka/kafkajs.ts (it fixes kafkajs's read_committed filter)", allowTypeImports: true }] },
      ],
    },
  },
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
