import { readFileSync, readdirSync } from 'node:fs';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
// @ts-expect-error -- a plain .mjs script without type declarations
import { LAYERING, WORKSPACE_PACKAGES, restrictedImportsOf } from '../lint/layering.mjs';

const layering = LAYERING as Record<string, string[] | null>;
const root = new URL('../../', import.meta.url);
const folders = readdirSync(new URL('packages/', root), { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .map((d) => d.name);
const manifest = (folder: string): { name: string; private?: boolean; dependencies?: Record<string, string> } =>
  JSON.parse(readFileSync(new URL(`packages/${folder}/package.json`, root), 'utf8')) as never;

describe('layering (scripts/lint/layering.mjs)', () => {
  it('has a row for every package folder', () => {
    for (const folder of folders) expect(Object.keys(layering), folder).toContain(folder);
  });

  it('every package.json depends on no workspace package beyond its row', () => {
    for (const folder of folders) {
      const allowed = layering[folder];
      if (allowed === null || allowed === undefined) continue;
      const workspaceDeps = Object.keys(manifest(folder).dependencies ?? {}).filter((name) =>
        (WORKSPACE_PACKAGES as string[]).includes(name),
      );
      for (const dep of workspaceDeps) expect(allowed, `packages/${folder} depends on ${dep}`).toContain(dep);
    }
  });

  // Type-aware linting builds a TypeScript program of the package first: seconds on a quiet
  // machine, a minute or more beside another test run.
  it('a package may not import a sibling outside its row (eslint refuses it)', { timeout: 300_000 }, async () => {
    const eslint = new ESLint({ cwd: new URL('.', root).pathname });
    const [result] = await eslint.lintText(
      "import { CrewExecutor } from '@signalyard/crew';\nexport const x = CrewExecutor;\n",
      {
        // an existing file's path, so the type-aware parser finds its project; the text is the probe's
        filePath: new URL('packages/fsm/src/guard.ts', root).pathname,
      },
    );
    expect(result?.messages.map((m) => m.ruleId)).toContain('@typescript-eslint/no-restricted-imports');
    expect((restrictedImportsOf as (f: string) => string[])('signalyard')).not.toContain('@signalyard/crew');
    expect((restrictedImportsOf as (f: string) => string[])('crew')).toContain('@signalyard/pipeline/*');
  });
});
