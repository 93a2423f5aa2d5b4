// `signalyard validate` reads crew.yaml (crew) and routing TOML (sessions): both must name a bad
// key the same way, whichever file it is in. Both loaders convert zod issues and print paths
// with the one implementation in `@signalyard/core/internal`; this pins the result down from the
// outside, where the two packages meet.
import { describe, expect, it } from 'vitest';
import { ConfigError, type ConfigProblem } from '@signalyard/core';
import { parseCrewConfig } from '@signalyard/crew';
import { parseRoutingConfig } from '@signalyard/sessions';

function problemsOf(fn: () => unknown): readonly ConfigProblem[] {
  try {
    fn();
  } catch (error) {
    if (ConfigError.isInstance(error)) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

/** A valid crew with `keys` added, each set to 1, under its `routing` mapping. */
const crewWith = (...keys: string[]): string =>
  ['entry_point: a', 'agents:', '  - id: a', 'routing:', ...keys.map((k) => `  ${JSON.stringify(k)}: 1`), ''].join(
    '\n',
  );

/** A routing TOML with `keys` added, each set to 1, under its `[routing]` table. */
const routingWith = (...keys: string[]): string =>
  ['[routing]', ...keys.map((k) => `${JSON.stringify(k)} = 1`), ''].join('\n');

describe('the same bad key prints the same path in crew.yaml and routing TOML problems', () => {
  it.each([
    ['a bare identifier', 'colour', 'routing.colour'],
    ['a key with a dash and digits', 'max-rounds2', 'routing.max-rounds2'],
    ['a key starting with a digit', '1abc', 'routing["1abc"]'],
    ['a key starting with a dash', '-x', 'routing["-x"]'],
    ['a key with a dot', 'a.b', 'routing["a.b"]'],
    ['a key with a space', 'with space', 'routing["with space"]'],
    ['a key with a non-ASCII letter', 'clé', 'routing["clé"]'],
    ['an all-digit key (not an index)', '0', 'routing["0"]'],
  ])('%s: %j → %s', (_label, key, path) => {
    const crew = problemsOf(() => parseCrewConfig(crewWith(key)));
    const routing = problemsOf(() => parseRoutingConfig(routingWith(key)));

    expect(crew.map((p) => p.path)).toEqual([path]);
    expect(routing.map((p) => p.path)).toEqual([path]);
    for (const p of [...crew, ...routing]) expect(p.message).toContain(`unknown key ${JSON.stringify(key)}`);
    expect(crew[0]?.line).toBe(5);
    expect(routing[0]?.line).toBe(2);
  });

  it('each unknown key of one mapping is its own problem, in both files', () => {
    const keys = ['zeta', '1abc', 'with space'];
    const crew = problemsOf(() => parseCrewConfig(crewWith(...keys)));
    const routing = problemsOf(() => parseRoutingConfig(routingWith(...keys)));

    const expected = ['routing.zeta', 'routing["1abc"]', 'routing["with space"]'];
    expect(crew.map((p) => p.path)).toEqual(expected);
    expect(routing.map((p) => p.path)).toEqual(expected);
    expect(crew.map((p) => p.line)).toEqual([5, 6, 7]);
    expect(routing.map((p) => p.line)).toEqual([2, 3, 4]);
  });
});
