/**
 * `@signalyard/replay/vitest`: each cassette as its own Vitest test. A subpath of its own, so
 * Vitest (an optional peer dependency) is needed only by the test files that import it.
 *
 * @packageDocumentation
 */
import { describe, it } from 'vitest';
import { cassetteTests } from './cassette-tests.js';
import type { ReplayOptions, ReplayRunnerFactory } from './replay.js';

/** Options of {@link describeCassettes}. */
export interface DescribeCassettesOptions {
  /** Tools that may run for real when a call is not recorded (as `replay`'s `live`). */
  readonly live?: ReplayOptions['live'];
  /** The suite's name (default `cassettes in <dir>`). */
  readonly name?: string;
}

/**
 * Declares a Vitest suite with one test per cassette in `dir` (a folder of cassettes, a file, or
 * a list of them), named by session key: each test replays its cassette against the runner
 * `runnerFactory` builds with today's configuration and fails with the first divergence
 * (`turn 4 › handoffs[1].to: billing → refunds`) or the replay's error. A session replayed up
 * to a partial turn passes (what could be replayed was the same); a cassette whose first turn is
 * partial replays nothing, and its test is skipped (named with the reason).
 * @throws ReplayError `REPLAY_CASSETTE_UNREADABLE` / `REPLAY_CASSETTE_INVALID` while the file is
 * collected, for cassettes that cannot be read.
 * @example
 * ```ts
 * import { describeCassettes } from '@signalyard/replay/vitest';
 * describeCassettes('cassettes/', ({ store, clock, model, tools }) =>
 *   createRunner({ agents: [{ id: 'desk', engine: crewEngine(crew, { model, tools: tools(myTools) }) }], store, clock }));
 * ```
 */
export function describeCassettes(
  dir: string | readonly string[],
  runnerFactory: ReplayRunnerFactory,
  options: DescribeCassettesOptions = {},
): void {
  const tests = cassetteTests(dir, runnerFactory, options.live);
  describe(options.name ?? `cassettes in ${typeof dir === 'string' ? dir : dir.join(', ')}`, () => {
    for (const t of tests) {
      if (t.skip === undefined) it(t.name, t.run);
      else it.skip(`${t.name} (${t.skip})`, t.run);
    }
  });
}
