import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
// @ts-expect-error -- a plain .mjs script without type declarations
import { collectErrorCodes, collectSubclasses, ownershipProblems, renderErrorsDoc } from '../errors-doc.mjs';

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

  it('gives every code one owner class (ABORTED may also be carried by a run error whose cause is the AbortedError)', () => {
    expect((ownershipProblems as () => string[])()).toEqual([]);
  });

  it("a subclass that keeps its parent's codes owns none, and the page names it beside its parent", () => {
    const subclasses = (collectSubclasses as () => Map<string, string[]>)();
    expect(subclasses.get('ConfigError')).toContain('PipelineConfigError');
    const rows = (collectErrorCodes as () => Row[])();
    expect(rows.filter((r) => r.code === 'CONFIG_INVALID').flatMap((r) => r.classes)).toEqual(['ConfigError']);
    expect((renderErrorsDoc as () => string)()).toContain(
      '| `CONFIG_INVALID` | `ConfigError` (and its subclass `PipelineConfigError`) |',
    );
  });
});

describe('ownershipProblems', () => {
  const row = (pkg: string, code: string, className: string, cause = 'something went wrong here'): Row => ({
    pkg,
    code,
    classes: [className],
    cause,
    fix: 'do this',
  });
  const problems = ownershipProblems as (rows: Row[]) => string[];

  it('reports a code two classes declare, in one package or across packages', () => {
    expect(problems([row('a', 'X_FAILED', 'AError'), row('a', 'X_FAILED', 'BError')])).toEqual([
      'X_FAILED: AError (a), BError (a)',
    ]);
    expect(problems([row('a', 'X_FAILED', 'AError'), row('b', 'X_FAILED', 'BError')])).toEqual([
      'X_FAILED: AError (a), BError (b)',
    ]);
    expect(problems([row('a', 'X_FAILED', 'AError'), row('a', 'Y_FAILED', 'BError')])).toEqual([]);
  });

  it('lets a run error carry ABORTED besides AbortedError only when it says the AbortedError is its cause', () => {
    const aborted = row('core', 'ABORTED', 'AbortedError', 'a run was stopped by its abortSignal');
    const carried = row('crew', 'ABORTED', 'CrewRunError', 'the run was aborted; the `AbortedError` is the `cause`');
    expect(problems([aborted, carried])).toEqual([]);
    expect(problems([aborted, row('crew', 'ABORTED', 'CrewRunError', 'the run was aborted')])).toEqual([
      'ABORTED: AbortedError (core), CrewRunError (crew)',
    ]);
    expect(
      problems([carried, row('x', 'ABORTED', 'XRunError', 'aborted; the AbortedError is the cause')]),
    ).toHaveLength(1);
  });
});
