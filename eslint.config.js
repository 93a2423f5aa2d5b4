// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import noTimeAssertions from './scripts/lint/no-time-assertions.mjs';
import { LAYERING, restrictedImportsOf } from './scripts/lint/layering.mjs';

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/coverage/**',
      'docs/api/**',
      'node_modules/**',
      '**/*.config.ts',
      '**/*.config.js',
      'scripts/**',
      'packages/*/scripts/**',
      '**/.doc-blocks/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.strictTypeChecked,
  ...tseslint.configs.stylisticTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/restrict-template-expressions': ['error', { allowNumber: true, allowBoolean: true }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unnecessary-condition': ['error', { allowConstantLoopConditions: true }],
      '@typescript-eslint/prefer-for-of': 'off',
      '@typescript-eslint/no-extraneous-class': 'off',
      '@typescript-eslint/unified-signatures': 'off',
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/non-nullable-type-assertion-style': 'off',
    },
  },
  {
    // The inspector's page: plain browser JavaScript served as it is (no build, no tsconfig), so
    // the recommended rules without type information, with the browser's globals.
    files: ['packages/inspector/ui/**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      sourceType: 'module',
      globals: Object.fromEntries(
        [
          'window',
          'document',
          'location',
          'history',
          'fetch',
          'EventSource',
          'URLSearchParams',
          'DOMParser',
          'console',
          'setTimeout',
          'clearTimeout',
          'AbortController',
          'TextDecoder',
        ].map((g) => [g, 'readonly']),
      ),
    },
  },
  {
    // A package's published bin (packages/cli/bin/signalyard.js): a plain Node module that loads
    // the built program, outside every tsconfig, so the rules without type information.
    files: ['packages/*/bin/**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      sourceType: 'module',
      globals: { process: 'readonly', URL: 'readonly' },
    },
  },
  {
    // MCP servers in plain JavaScript, started by path in child processes (a test fixture, the
    // support desk's order-lookup server): outside every tsconfig, so the rules without types.
    files: ['packages/*/test/fixtures/**/*.mjs', 'examples/*/src/**/*.mjs'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: {
      ...tseslint.configs.disableTypeChecked.languageOptions,
      sourceType: 'module',
      globals: { process: 'readonly', Buffer: 'readonly' },
    },
  },
  {
    // A function over 80 lines is a room with several jobs: find its seams (an exception needs a
    // justifying comment at the function).
    files: ['packages/*/src/**/*.ts'],
    rules: {
      'max-lines-per-function': ['error', { max: 80, skipBlankLines: true, skipComments: true }],
      // A file over 450 lines of code is a room with several jobs: split it by job (an exception
      // needs an `eslint-disable max-lines` comment at the top saying why).
      'max-lines': ['error', { max: 450, skipBlankLines: true, skipComments: true }],
    },
  },
  // Layering (scripts/lint/layering.mjs, the design's "depends on" column): a package imports
  // only the workspace packages its row allows; sibling packages never import each other.
  ...Object.keys(LAYERING)
    .filter((folder) => restrictedImportsOf(folder).length > 0)
    .map((folder) => ({
      files: [`packages/${folder}/src/**/*.ts`],
      rules: {
        '@typescript-eslint/no-restricted-imports': [
          'error',
          {
            patterns: [
              {
                group: restrictedImportsOf(folder),
                message: `packages/${folder} may import only ${LAYERING[folder].join(', ') || 'no workspace package'} (design README, "depends on"; scripts/lint/layering.mjs).`,
              },
            ],
          },
        ],
      },
    })),
  {
    files: ['**/test/**/*.ts', '**/bench/**/*.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-empty-function': 'off',
      '@typescript-eslint/require-await': 'off',
      '@typescript-eslint/only-throw-error': 'off',
      '@typescript-eslint/no-confusing-void-expression': 'off',
      '@typescript-eslint/no-unnecessary-condition': 'off',
    },
  },
  {
    // Tests never assert timings (a loaded machine fails them at random): fake timers, counted
    // operations or `pnpm bench` instead (scripts/lint/no-time-assertions.mjs).
    files: ['**/test/**/*.ts', '**/*.test.ts'],
    plugins: { signalyard: { rules: { 'no-time-assertions': noTimeAssertions } } },
    rules: { 'signalyard/no-time-assertions': 'error' },
  },
);
