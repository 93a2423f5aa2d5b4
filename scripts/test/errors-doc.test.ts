import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
// @ts-expect-error -- a plain .mjs script without type declarations
import { collectErrorCodes, renderErrorsDoc } from '../errors-doc.mjs';

interface Row {
  pkg: string;
  code: string;
  classes: string[];
  cause: string;
  fix: string;
}

describe('docs/errors.md', () => {
  it('is up to date with the error-code unions (run `node scripts/errors-doc.mjs`)', () => {
    const page = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
    expect(page).toBe((renderErrorsDoc as () => string)());
  });

  it('explains every code with a cause and a fix, and names a class for each', () => {
    const rows = (collectErrorCodes as () => Row[])();
    expect(rows.length).toBeGreaterThan(40);
    for (const row of rows) {
      expect(row.code, row.pkg).toMatch(/^[A-Z][A-Z0-9_]*$/);
      expect(row.cause.length, row.code).toBeGreaterThan(20);
      expect(row.fix.length, row.code).toBeGreaterThan(5);
      expect(row.classes.length, row.code).toBeGreaterThan(0);
    }
  });

  it('lists the codes users meet most, with their owner classes', () => {
    const rows = (collectErrorCodes as () => Row[])();
    const owner = (code: string): string[] => rows.filter((r) => r.code === code).flatMap((r) => r.classes);
    expect(owner('RUNNER_CLOSED')).toEqual(['RunnerError']);
    expect(owner('CHECKPOINT_CONFLICT')).toEqual(['CheckpointConflictError']);
    expect(owner('FSM_INVALID_TRANSITION')).toEqual(['InvalidTransitionError']);
    expect(owner('CONFIG_INVALID')).toContain('ConfigError');
  });
});
