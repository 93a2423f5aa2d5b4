import * as core from '@signalyard/core';
import * as crew from '@signalyard/crew';
import * as fsm from '@signalyard/fsm';
import * as pipeline from '@signalyard/pipeline';
import * as router from '@signalyard/router';
import * as sessions from '@signalyard/sessions';
import * as meta from 'signalyard';
import { describe, expect, it } from 'vitest';

const packages = {
  '@signalyard/core': core,
  '@signalyard/router': router,
  '@signalyard/fsm': fsm,
  '@signalyard/sessions': sessions,
  '@signalyard/crew': crew,
  '@signalyard/pipeline': pipeline,
};

describe('the meta-package', () => {
  it.each(Object.entries(packages))('re-exports every runtime export of %s, as the same value', (_name, mod) => {
    const missing = Object.keys(mod).filter((key) => !(key in meta));
    expect(missing).toEqual([]);
    for (const key of Object.keys(mod))
      expect((meta as Record<string, unknown>)[key]).toBe((mod as Record<string, unknown>)[key]);
  });

  it('adds the Runner', () => {
    expect(typeof meta.createRunner).toBe('function');
    expect(typeof meta.RunnerError.isInstance).toBe('function');
  });
});

describe('the meta-package, at the type level', () => {
  it('exports every value and type name of each sibling package', async () => {
    const ts = (await import('typescript')).default;
    const root = new URL('../../../', import.meta.url).pathname;
    const entry = (pkg: string): string => `${root}packages/${pkg}/src/index.ts`;
    const siblings = ['core', 'router', 'fsm', 'sessions', 'crew', 'pipeline'];
    const config = ts.readConfigFile(`${root}tsconfig.base.json`, (f) => ts.sys.readFile(f));
    const { options } = ts.parseJsonConfigFileContent(config.config, ts.sys, root);
    const program = ts.createProgram([entry('signalyard'), ...siblings.map(entry)], {
      ...options,
      noEmit: true,
      composite: false,
      declaration: false,
      emitDeclarationOnly: false,
    });
    const checker = program.getTypeChecker();
    const exportsOf = (file: string): Set<string> => {
      const source = program.getSourceFile(file);
      const symbol = source === undefined ? undefined : checker.getSymbolAtLocation(source);
      if (symbol === undefined) throw new Error(`cannot read ${file}`);
      return new Set(checker.getExportsOfModule(symbol).map((s) => s.name));
    };
    const meta = exportsOf(entry('signalyard'));
    const missing: string[] = [];
    for (const pkg of siblings) {
      const names = exportsOf(entry(pkg));
      expect(names.size, pkg).toBeGreaterThan(5);
      for (const name of names) if (!meta.has(name)) missing.push(`@signalyard/${pkg}: ${name}`);
    }
    expect(missing).toEqual([]);
    // Types are counted too (not only runtime values).
    expect(meta.has('RunnerErrorCode')).toBe(true);
    expect(meta.has('TransitionResult')).toBe(true);
  }, 60_000);
});
