import { describe, expect, it } from 'vitest';
import { ConfigError } from '@signalyard/core';
import { MAX_CONFIG_CHARS } from '@signalyard/core/internal';
import { parseCrewConfig } from '@signalyard/crew';
import { thrown } from '@signalyard/test-utils';

const lines = (n: number, line: (i: number) => string): string => Array.from({ length: n }, (_, i) => line(i)).join('');
const head = 'entry_point: a\nagents:\n  - id: a\n';

// Each form at n = 10,000 is over 100 KB; what the loader makes of it: the agents read, or the
// count of problems and where the last one is.
type Outcome = { agents: number } | { problems: number; last: { path: string; line: number | undefined } };
const forms: [string, (n: number) => string, Outcome][] = [
  [
    'many unknown top-level keys',
    (n) => head + lines(n, (i) => `k${i}: ${i}\n`),
    { problems: 10_000, last: { path: 'k9999', line: 10_003 } },
  ],
  [
    'many unknown nested keys',
    (n) => `${head}settings:\n${lines(n, (i) => `  k${i}: ${i}\n`)}`,
    { problems: 10_000, last: { path: 'settings.k9999', line: 10_004 } },
  ],
  ['many agents', (n) => `entry_point: a0\nagents:\n${lines(n, (i) => `  - id: a${i}\n`)}`, { agents: 10_000 }],
  [
    'a wide flow mapping',
    (n) => `${head}x: {${Array.from({ length: n }, (_, i) => `k${i}: ${i}`).join(', ')}}\n`,
    { problems: 1, last: { path: 'x', line: 4 } },
  ],
  [
    'many signals',
    (n) => `${head}routing:\n  signals:\n    a:\n${lines(n / 4, (i) => `      - { signal: "[S${i}]", target: a }\n`)}`,
    { agents: 1 },
  ],
];

function outcome(text: string): Outcome {
  try {
    return { agents: parseCrewConfig(text).agents.length };
  } catch (error) {
    if (!ConfigError.isInstance(error)) throw error;
    const last = error.problems.at(-1);
    return { problems: error.problems.length, last: { path: last?.path ?? '', line: last?.line } };
  }
}

// That reading takes time linear in the input (regression: duplicate-key checks were quadratic)
// is measured by `pnpm bench crew` (bench/growth.bench.ts), not asserted here.
describe('crew.yaml: large inputs, and a size limit', () => {
  it.each(forms)(
    '%s: read whole (its agents, or every problem up to the last one at its line)',
    (_name, make, expected) => {
      const text = make(10_000);
      expect(text.length).toBeGreaterThan(100_000);
      expect(outcome(text)).toEqual(expected);
    },
  );

  it('a duplicate key is still an error at the repeated key, also deep in the tree', () => {
    const error = thrown(() => parseCrewConfig(`${head}settings:\n  max_rounds: 3\n  max_rounds: 4\n`)) as ConfigError;
    expect(error.problems).toEqual([
      { path: '', message: 'YAML syntax error: Map keys must be unique', line: 6, column: 3 },
    ]);
  });

  it('a text over the limit is a ConfigError naming the size and the limit, before any parsing', () => {
    const error = thrown(() => parseCrewConfig(`${head}# ${'x'.repeat(MAX_CONFIG_CHARS)}\n`));
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as ConfigError).problems[0]?.message).toMatch(/over the limit of 2,097,152 \(2 MiB\)/);
  });
});
