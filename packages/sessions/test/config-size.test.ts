import { describe, expect, it } from 'vitest';
import { ConfigError } from '@signalyard/core';
import { MAX_CONFIG_CHARS } from '@signalyard/core/internal';
import { parseRoutingConfig } from '@signalyard/sessions';
import { thrown } from '@signalyard/test-utils';

const keys = (n: number, key: (i: number) => string): string => Array.from({ length: n }, (_, i) => key(i)).join('');

// Each form is about 100 KB at n = 25,000 (most of them: see the length check); what the loader
// makes of it: the count of problems and where the last one is.
interface Outcome {
  problems: number;
  last: { path: string; line: number | undefined };
}
const unknown = (key: string, line: number): Outcome => ({ problems: 1, last: { path: `routing.${key}`, line } });
const forms: [string, (n: number) => string, Outcome][] = [
  [
    'a long dotted key',
    (n) => `[routing]\n${Array.from({ length: n }, (_, i) => `k${i}`).join('.')} = 1\n`,
    unknown('k0', 2),
  ],
  [
    'a long quoted dotted key',
    (n) => `[routing]\n${Array.from({ length: n }, (_, i) => `"k ${i}"`).join('.')} = 1\n`,
    { problems: 1, last: { path: 'routing["k 0"]', line: 2 } },
  ],
  [
    'many keys',
    (n) => `[routing]\n${keys(n, (i) => `k${i} = ${i}\n`)}`,
    { problems: 25_000, last: { path: 'routing.k24999', line: 25_001 } },
  ],
  [
    'many tables',
    (n) => keys(n, (i) => `[routing.t${i}]\na = 1\n`),
    { problems: 25_000, last: { path: 'routing.t24999', line: 49_999 } },
  ],
  [
    'many arrays of tables',
    (n) => `[routing]\n${keys(n / 4, () => '[[routing.bindings]]\nagent_id = "x"\nmatch = { channel = "cli" }\n')}`,
    { problems: 6_249, last: { path: 'routing.bindings[6249]', line: 18_749 } },
  ],
  [
    'a wide inline table',
    (n) => `[routing]\nx = {${Array.from({ length: n }, (_, i) => `k${i} = ${i}`).join(', ')}}\n`,
    unknown('x', 2),
  ],
  [
    'a long array',
    (n) => `[routing]\nx = [${Array.from({ length: n * 2 }, (_, i) => `${i}`).join(', ')}]\n`,
    unknown('x', 2),
  ],
];

function outcome(text: string): Outcome {
  const error = thrown(() => parseRoutingConfig(text));
  if (!ConfigError.isInstance(error)) throw error;
  const last = error.problems.at(-1);
  return { problems: error.problems.length, last: { path: last?.path ?? '', line: last?.line } };
}

// That reading takes time linear in the input (regression: a dotted key was quadratic) is
// measured by `pnpm bench sessions` (bench/growth.bench.ts), not asserted here.
describe('routing TOML: large inputs, and a size limit', () => {
  it.each(forms)('%s: read whole, every problem reported up to the last one at its line', (_name, make, expected) => {
    const text = make(25_000);
    expect(text.length).toBeGreaterThan(100_000);
    expect(outcome(text)).toEqual(expected);
  });

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
