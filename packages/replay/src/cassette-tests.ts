import { loadCassettesSync } from './cassette-file.js';
import { replay, type ReplayOptions, type ReplayRunnerFactory } from './replay.js';

/** One cassette as a test: its name (the session key) and what the test runs. @internal */
export interface CassetteTest {
  readonly name: string;
  readonly run: () => Promise<void>;
}

/**
 * The tests `describeCassettes` declares, one per cassette in `paths`: each replays its cassette
 * and throws on a divergence or a failure (a session replayed up to a partial turn passes).
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
