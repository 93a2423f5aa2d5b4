import { loadCassettesSync } from './cassette-file.js';
import { replay, type ReplayOptions, type ReplayRunnerFactory } from './replay.js';

/** One cassette as a test: its name (the session key) and what the test runs. @internal */
export interface CassetteTest {
  readonly name: string;
  readonly run: () => Promise<void>;
  /** Why the test is skipped: its cassette's first turn is partial, so nothing can be replayed. */
  readonly skip?: string;
}

/**
 * The tests `describeCassettes` declares, one per cassette in `paths`: each replays its cassette
 * and throws on a divergence or a failure (a session replayed up to a partial turn passes; one
 * whose first turn is partial replays nothing: its test is marked skipped, with the reason).
 * Reads the cassettes synchronously: test files declare their tests while they are collected.
 * @internal
 */
export function cassetteTests(
  paths: string | readonly string[],
  runner: ReplayRunnerFactory,
  live: ReplayOptions['live'],
): CassetteTest[] {
  return loadCassettesSync(paths).map((cassette) => ({
    name: cassette.sessionKey,
    ...(cassette.turns[0]?.partial !== undefined && {
      skip: `turn 1 is partial: ${cassette.turns[0].partial.reason}`,
    }),
    run: async () => {
      const report = await replay([cassette], { runner, ...(live !== undefined && { live }) });
      const session = report.sessions[0];
      if (session?.status === 'diverged')
        throw new Error(`Session ${cassette.sessionKey} diverged: ${session.divergence?.text ?? ''}`);
      if (session?.status === 'failed')
        throw new Error(`Session ${cassette.sessionKey} failed: ${session.error?.message ?? ''}`);
    },
  }));
}
