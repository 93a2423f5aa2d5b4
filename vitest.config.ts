import { readdirSync, existsSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

// One vitest project per package that has tests. Sources are read through the private
// `@signalyard/source` export condition, so tests need no build.
const packages = readdirSync(new URL('./packages', import.meta.url), { withFileTypes: true })
  .filter((d) => d.isDirectory() && existsSync(new URL(`./packages/${d.name}/test`, import.meta.url)))
  .map((d) => d.name);

export default defineConfig({
  ssr: { resolve: { conditions: ['@signalyard/source'] } },
  resolve: { conditions: ['@signalyard/source'] },
  test: {
    projects: packages.map((name) => ({
      extends: true,
      test: {
        name,
        root: `packages/${name}`,
        include: ['test/**/*.test.ts'],
      },
    })),
    coverage: {
      provider: 'v8',
      include: ['packages/*/src/**/*.ts'],
      exclude: ['packages/*/src/**/index.ts', 'packages/*/src/**/*.d.ts'],
      reporter: ['text-summary', 'text'],
      thresholds: { lines: 90, branches: 85 },
    },
  },
});
