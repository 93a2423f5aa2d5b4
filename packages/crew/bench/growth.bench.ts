// Time linear in the input, as figures (tests never assert timings): reading crew.yaml in the
// forms that were quadratic (duplicate-key checks compared each key with every earlier one), and
// matching replies made of the matcher's anchor characters (its comparisons give up on a
// budget). Each figure is the time on 4× the input over the time on the input: about 4 when
// linear, 16 when quadratic; target at most 8.
import { parseCrewConfig, SignalMatcher } from '@signalyard/crew';
import { MAX_CONFIG_CHARS } from '@signalyard/core/internal';
import { growth } from '../../../scripts/bench/growth.mjs';

const lines = (n: number, line: (i: number) => string): string => Array.from({ length: n }, (_, i) => line(i)).join('');
const head = 'entry_point: a\nagents:\n  - id: a\n';

await growth({
  workload: 'crew: crew.yaml of n = 10,000 keys (over 100 KB) and 4n',
  n: 10_000,
  maxLength: MAX_CONFIG_CHARS,
  run: (text: string) => parseCrewConfig(text),
  forms: [
    ['many unknown top-level keys', (n) => head + lines(n, (i) => `k${i}: ${i}\n`)],
    ['many unknown nested keys', (n) => `${head}settings:\n${lines(n, (i) => `  k${i}: ${i}\n`)}`],
    ['many agents', (n) => `entry_point: a0\nagents:\n${lines(n, (i) => `  - id: a${i}\n`)}`],
    ['a wide flow mapping', (n) => `${head}x: {${Array.from({ length: n }, (_, i) => `k${i}: ${i}`).join(', ')}}\n`],
    [
      'many signals',
      (n) =>
        `${head}routing:\n  signals:\n    a:\n${lines(n / 4, (i) => `      - { signal: "[S${i}]", target: a }\n`)}`,
    ],
  ],
});

const matcher = new SignalMatcher(['::::::::x', '[[[[[[[[y]', '#'.repeat(40) + 'z', '[DONE]']);
await growth({
  workload: 'crew: SignalMatcher.matchAll on replies of anchor characters, n = 50,000 and 4n',
  n: 50_000,
  run: (content: string) => matcher.matchAll(content),
  forms: [
    ["n × ':'", (n) => ':'.repeat(n)],
    ["n × '[' then ']'", (n) => '['.repeat(n) + ']'],
    ["n × '#:['", (n) => '#:['.repeat(n)],
  ],
});
