import { readFileSync } from 'node:fs';
import { ESLint, RuleTester } from 'eslint';
import tseslint from 'typescript-eslint';
import { afterAll, describe, expect, it } from 'vitest';
// @ts-expect-error -- a plain .mjs script without type declarations
import rule from '../lint/no-time-assertions.mjs';

RuleTester.afterAll = afterAll;
RuleTester.describe = describe;
RuleTester.it = it;
RuleTester.itOnly = it.only;

const tester = new RuleTester({ languageOptions: { parser: tseslint.parser } });
const duration = (what: string) => ({ messageId: 'duration', data: { what: `\`${what}\`` } });

tester.run('no-time-assertions', rule as never, {
  valid: [
    // counted operations, fake clocks read once, timestamps that are never subtracted
    'expect(ran.count).toBe(fired.stagesBefore);',
    'vi.useFakeTimers({ now: 1000 }); expect(systemClock.now()).toBe(Date.now());',
    'const ticks = []; setInterval(() => ticks.push(performance.now()), 5); expect(ticks.length).toBe(3);',
    // a busy stage reads the clock to spin, not to assert
    'const until = performance.now() + 30; while (performance.now() < until) {} expect(env.terminalReason).toBe("x");',
    // a duration computed for a log line, not asserted
    'const started = Date.now(); await run(); console.info(`took ${(Date.now() - started) / 1000} s`);',
    // differences of values that are no clock readings
    'const a = items.length; expect(a - 1).toBe(2); expect(env.agentHops - env.trace.length).toBe(0);',
    'expect(timeline.entries[0].durationMs).toBeGreaterThanOrEqual(0);',
  ],
  invalid: [
    {
      // packages/pipeline/test/time-slicing.test.ts before issue 39
      code: `
        function abortAfter(controller, ms) {
          const fired = { at: undefined };
          setTimeout(() => { fired.at = performance.now(); controller.abort('stop'); }, ms);
          return fired;
        }
        const fired = abortAfter(controller, 50);
        const env = await loop(2_000_000).run(null, { abortSignal: controller.signal });
        const endedAt = performance.now();
        expect(endedAt - (fired.at as number)).toBeLessThan(100);
        expect(performance.now() - (fired.at as number)).toBeLessThan(100);
        const startedAt = performance.now();
        expect(performance.now() - startedAt).toBeLessThan(150);`,
      errors: [
        duration('endedAt - (fired.at as number)'),
        duration('performance.now() - (fired.at as number)'),
        duration('performance.now() - startedAt'),
      ],
    },
    {
      // packages/crew/test/config-size.test.ts before issue 39
      code: 'expect(growthFactor(make, (text) => parseCrewConfig(text), 10_000)).toBeLessThan(9);',
      errors: [duration('growthFactor(make, (text) => parseCrewConfig(text), 10_000)')],
    },
    {
      // through variables, in a matcher's argument, in node:assert
      code: `
        const t0 = Date.now();
        const start = t0;
        await work();
        const elapsed = Date.now() - start;
        const seconds = elapsed / 1000;
        expect(2).toBeGreaterThan(seconds);
        assert.ok(elapsed < 100);`,
      errors: [duration('seconds'), duration('elapsed')],
    },
    {
      code: `
        const begin = process.hrtime.bigint();
        expect(process.hrtime.bigint() - begin).toBeLessThan(1_000_000n);
        const cpu = process.cpuUsage();
        expect.soft(process.cpuUsage(cpu).user).toBeLessThan(5000);
        const at = new Date().getTime();
        expect(new Date().getTime() - at).not.toBeGreaterThan(10);
        const spent = process.hrtime(begin);
        expect(spent[0]).toBe(0);`,
      errors: [
        duration('process.hrtime.bigint() - begin'),
        duration('process.cpuUsage(cpu)'),
        duration('new Date().getTime() - at'),
        duration('spent'),
      ],
    },
  ],
});

describe('the rule in the repository', () => {
  it('is on for every test file, and off for sources and benchmarks', async () => {
    const eslint = new ESLint({ cwd: new URL('../..', import.meta.url).pathname });
    const on = async (file: string) =>
      ((await eslint.calculateConfigForFile(file)) as { rules?: Record<string, unknown> }).rules?.[
        'signalyard/no-time-assertions'
      ];
    for (const file of [
      'packages/pipeline/test/time-slicing.test.ts',
      'packages/crew/test/fixtures/adversarial.ts',
      'examples/support-desk/test/story.test.ts',
      'docs/test/snippets.test.ts',
    ]) {
      expect(await on(file), file).toEqual([2]);
    }
    expect(await on('packages/pipeline/src/runtime/time-slice.ts')).toBeUndefined();
    expect(await on('packages/crew/bench/growth.bench.ts')).toBeUndefined();
  });

  it('fails eslint on a test that asserts a duration', async () => {
    const eslint = new ESLint({
      cwd: new URL('../..', import.meta.url).pathname,
      overrideConfigFile: true,
      overrideConfig: [
        { languageOptions: { parser: tseslint.parser } },
        {
          files: ['**/*.ts'],
          plugins: { signalyard: { rules: { 'no-time-assertions': rule } } },
          rules: { 'signalyard/no-time-assertions': 'error' },
        },
      ],
    });
    const sample = readFileSync(new URL('./fixtures/time-assertion.sample.ts', import.meta.url), 'utf8');
    const [result] = await eslint.lintText(sample, { filePath: 'packages/pipeline/test/sample.test.ts' });
    expect(result?.errorCount).toBe(1);
    expect(result?.messages[0]?.message).toMatch(/^Tests never assert timings: `performance\.now\(\) - started`/);
  });
});
