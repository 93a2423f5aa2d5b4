import { readdirSync, existsSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

// One vitest project per package (and example) that has tests. Sources are read through the
// private `@signalyard/source` export condition, so tests need no build.
const withTests = (folder: string): string[] =>
  readdirSync(new URL(`./${folder}`, import.meta.url), { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(new URL(`./${folder}/${d.name}/test`, import.meta.url)))
    .map((d) => `${folder}/${d.name}`);
const projects = [...withTests('packages'), ...withTests('examples')];

export default defineConfig({
  ssr: { resolve: { conditions: ['@signalyard/source'] } },
  resolve: { conditions: ['@signalyard/source'] },
  test: {
    // A test's timeout is a hang guard, never a speed check: on a 2-core machine running two whole
    // suites at once, a 100-run property test can take over vitest's default 5 s. Tests that need
    // longer still set their own.
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Test files share their worker's module graph instead of each importing every package's
    // sources again: the per-file import was about 40% of the suite's CPU time (vitest's `import`
    // figure: 312 s of a 1,026 s run, against 63 s shared). The suite keeps no state across files
    // (no vi.mock or stubbed globals; fake timers and spies are restored by the tests that use them),
    // so a test that starts depending on a fresh module instance must restore what it changes.
    isolate: false,
    projects: [
      ...projects.map((dir) => ({
        extends: true,
        test: {
          name: dir.startsWith('packages/') ? dir.slice('packages/'.length) : dir,
          root: dir,
          include: ['test/**/*.test.ts'],
        },
      })),
      // The guides' runnable code blocks (README.md and docs/*.md), type-checked and run.
      { extends: true, test: { name: 'docs', root: 'docs', include: ['test/**/*.test.ts'] } },
      // Checks of the repository itself (generated docs are fresh, …).
      { extends: true, test: { name: 'repo', root: '.', include: ['scripts/test/**/*.test.ts'] } },
    ],
    coverage: {
      provider: 'v8',
      include: ['packages/*/src/**/*.ts'],
      exclude: ['packages/*/src/**/index.ts', 'packages/*/src/**/*.d.ts'],
      reporter: ['text-summary', 'text'],
      thresholds: { lines: 90, branches: 85 },
    },
  },
});
