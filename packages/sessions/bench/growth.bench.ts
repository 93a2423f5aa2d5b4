// Time linear in the input, as figures (tests never assert timings): reading routing TOML in
// the forms that were quadratic (the key-line locator formatted the path of every prefix of a
// dotted key). Each figure is the time on 4× the input over the time on the input: about 4 when
// linear, 16 when quadratic; target at most 8.
import { parseRoutingConfig } from '@signalyard/sessions';
import { MAX_CONFIG_CHARS } from '@signalyard/core/internal';
import { growth } from '../../../scripts/bench/growth.mjs';

const keys = (n: number, key: (i: number) => string): string => Array.from({ length: n }, (_, i) => key(i)).join('');

await growth({
  workload: 'sessions: routing TOML of n = 25,000 keys (about 100 KB) and 4n',
  n: 25_000,
  maxLength: MAX_CONFIG_CHARS,
  run: (text: string) => parseRoutingConfig(text),
  forms: [
    ['a long dotted key', (n) => `[routing]\n${Array.from({ length: n }, (_, i) => `k${i}`).join('.')} = 1\n`],
    [
      'a long quoted dotted key',
      (n) => `[routing]\n${Array.from({ length: n }, (_, i) => `"k ${i}"`).join('.')} = 1\n`,
    ],
    ['many keys', (n) => `[routing]\n${keys(n, (i) => `k${i} = ${i}\n`)}`],
    ['many tables', (n) => keys(n, (i) => `[routing.t${i}]\na = 1\n`), 20_000], // 4n of 25,000: over 2 MiB
    [
      'many arrays of tables',
      (n) => `[routing]\n${keys(n / 4, () => '[[routing.bindings]]\nagent_id = "x"\nmatch = { channel = "cli" }\n')}`,
    ],
    [
      'a wide inline table',
      (n) => `[routing]\nx = {${Array.from({ length: n }, (_, i) => `k${i} = ${i}`).join(', ')}}\n`,
    ],
    ['a long array', (n) => `[routing]\nx = [${Array.from({ length: n * 2 }, (_, i) => `${i}`).join(', ')}]\n`],
  ],
});
