import { describe, expect, it } from 'vitest';
import { ConfigError } from '@signalyard/core';
import { MAX_CONFIG_CHARS } from '@signalyard/core/internal';
import { parseCrewConfig } from '@signalyard/crew';
import { growthFactor, thrown } from '@signalyard/test-utils';

const lines = (n: number, line: (i: number) => string): string => Array.from({ length: n }, (_, i) => line(i)).join('');
const head = 'entry_point: a\nagents:\n  - id: a\n';

const forms: [string, (n: number) => string][] = [
  ['many unknown top-level keys', (n) => head + lines(n, (i) => `k${i}: ${i}\n`)],
  ['many unknown nested keys', (n) => `${head}settings:\n${lines(n, (i) => `  k${i}: ${i}\n`)}`],
  ['many agents', (n) => `entry_point: a0\nagents:\n${lines(n, (i) => `  - id: a${i}\n`)}`],
  ['a wide flow mapping', (n) => `${head}x: {${Array.from({ length: n }, (_, i) => `k${i}: ${i}`).join(', ')}}\n`],
  [
    'many signals',
    (n) => `${head}routing:\n  signals:\n    a:\n${lines(n / 4, (i) => `      - { signal: "[S${i}]", target: a }\n`)}`,
  ],
];

describe('crew.yaml: time linear in the input, and a size limit', () => {
  it.each(forms)(
    '%s: 4× the input takes far less than 16× the time (regression: duplicate-key checks were quadratic)',
    (_name, make) => {
      expect(make(10_000).length).toBeGreaterThan(100_000);
      expect(growthFactor(make, (text) => parseCrewConfig(text), 10_000)).toBeLessThan(9);
    },
    180_000,
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
