import { SignalyardError, hasErrorMarker } from '@signalyard/core';

const marker = Symbol.for('signalyard.error.CliReplayError');

/** The codes of {@link CliReplayError}. */
export type CliReplayErrorCode =
  /** `signalyard replay` replayed sessions that diverged from their cassettes, or failed (exit code 1): the table (or `--json` report) on stdout says which, and where each first parted. Fix: nothing, if the change was meant to reroute those conversations (record new cassettes); else change the configuration back. */
  | 'CLI_REPLAY_DIVERGED'
  /** `signalyard eval` scored below `--threshold` (a scorer's mean, or a replay that failed) (exit code 1): the table on stdout lists the means and the failing sessions. Fix: look at the failing sessions; raise the bar only on purpose. */
  | 'CLI_EVAL_BELOW_THRESHOLD';

/**
 * A replay or an eval in the CLI found what CI should fail on (codes {@link CliReplayErrorCode}):
 * sessions that diverged or failed, or scores below the threshold. Exit code 1; the report is on
 * stdout already.
 */
export class CliReplayError extends SignalyardError<CliReplayErrorCode> {
  private readonly [marker] = true;

  constructor(options: { code: CliReplayErrorCode; message: string }) {
    super({ code: options.code, message: options.message });
  }

  /** True when `error` is a `CliReplayError`, from any installed copy of this package. */
  static override isInstance(error: unknown): error is CliReplayError {
    return hasErrorMarker(error, marker);
  }
}
