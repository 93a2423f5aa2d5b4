import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
// @ts-expect-error -- a plain .mjs script without type declarations
import { findCycles } from '../check-cycles.mjs';

function tree(files: Record<string, string>): string[] {
  const dir = mkdtempSync(join(tmpdir(), 'cycles-'));
  return Object.entries(files).map(([name, text]) => {
    const path = join(dir, name);
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, text);
    return path;
  });
}

const cyclesOf = (files: string[]): string[][] =>
  (findCycles as (f: string[]) => string[][])(files).map((c) => c.map((f) => f.replace(/^.*cycles-[^/]+\//, '')));

describe('check-cycles', () => {
  it('finds a runtime cycle and a type-only one, and nothing in a tree without cycles', () => {
    expect(cyclesOf(tree({ 'a.ts': "import { b } from './b.js';", 'b.ts': "import { a } from './a.js';" }))).toEqual([
      ['a.ts', 'b.ts'],
    ]);
    expect(
      cyclesOf(
        tree({ 'a.ts': "import type { B } from './sub/b.js';", 'sub/b.ts': "export type { A } from '../a.js';" }),
      ),
    ).toHaveLength(1);
    expect(
      cyclesOf(
        tree({ 'a.ts': "import { b } from './b.js';", 'b.ts': "import { c } from './c.js';", 'c.ts': 'export {};' }),
      ),
    ).toEqual([]);
  });

  it('ignores package imports (only files of the same tree form cycles)', () => {
    expect(cyclesOf(tree({ 'a.ts': "import { x } from '@signalyard/core';" }))).toEqual([]);
  });
});
