import { describe, expect, it } from 'vitest';
import { ConfigError } from '@signalyard/core';
import { MAX_CONFIG_CHARS } from '@signalyard/core/internal';
import { parseRoutingConfig } from '@signalyard/sessions';
import { growthFactor, thrown } from '@signalyard/test-utils';

const keys = (n: number, key: (i: number) => string): string => Array.from({ length: n }, (_, i) => key(i)).join('');

// Each form grows with n: about 100 KB at n = 10,000 for most forms, 4× that at the bound below.
const forms: [string, (n: number) => string][] = [
  ['a long dotted key', (n) => `[routing]\n${Array.from({ length: n }, (_, i) => `k${i}`).join('.')} = 1\n`],
  ['a long quoted dotted key', (n) => `[routing]\n${Array.from({ length: n }, (_, i) => `"k ${i}"`).join('.')} = 1\n`],
  ['many keys', (n) => `[routing]\n${keys(n, (i) => `k${i} = ${i}\n`)}`],
  ['many tables', (n) => keys(n, (i) => `[routing.t${i}]\na = 1\n`)],
  [
    'many arrays of tables',
    (n) => `[routing]\n${keys(n / 4, () => '[[routing.bindings]]\nagent_id = "x"\nmatch = { channel = "cli" }\n')}`,
  ],
  [
    'a wide inline table',
    (n) => `[routing]\nx = {${Array.from({ length: n }, (_, i) => `k${i} = ${i}`).join(', ')}}\n`,
  ],
  ['a long array', (n) => `[routing]\nx = [${Array.from({ length: n * 2 }, (_, i) => `${i}`).join(', ')}]\n`],
];

describe('routing TOML: time linear in the input, and a size limit', () => {
  it.each(forms)(
    '%s: 4× the input takes far less than 16× the time (regression: a dotted key was quadratic)',
    (_name, make) => {
      expect(make(25_000).length).toBeGreaterThan(100_000);
      // Linear is about 4; quadratic about 16. The bound leaves room for a noisy machine.
      expect(growthFactor(make, (text) => parseRoutingConfig(text), 25_000)).toBeLessThan(9);
    },
    120_000,
  );

  it('a text over the limit is a ConfigError naming the size and the limit, before any parsing', () => {
    const text = `[routing]\n# ${'x'.repeat(MAX_CONFIG_CHARS)}\n`;
    const error = thrown(() => parseRoutingConfig(text));
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as ConfigError).problems).toEqual([
      { path: '', message: expect.stringMatching(/over the limit of 2,097,152 \(2 MiB\)/) },
    ]);
  });

  it('a text just under the limit is read', () => {
    const text = `[routing]\n# ${'x'.repeat(MAX_CONFIG_CHARS - 20)}\n`;
    expect(text.length).toBeLessThanOrEqual(MAX_CONFIG_CHARS);
    expect(parseRoutingConfig(text).defaultAgentId).toBe('main');
  });
});
