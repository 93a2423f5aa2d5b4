import { SignalyardError, hasErrorMarker } from '@signalyard/core';

const marker = Symbol.for('signalyard.error.CliSessionError');

/** The codes of {@link CliSessionError}. */
export type CliSessionErrorCode =
  /** `sessions fork` into a key of another agent: the agent of a session key is its second part (`agent:<id>:…`), and a fork belongs to the agent of the session it copies. Nothing was written (exit code 1). Fix: fork into a key of the same agent, `agent:<source agent>:…`. */
  | 'CLI_SESSION_AGENT_MISMATCH'
  /** The stored checkpoint is not a session checkpoint this release reads (`v: 1`, `agentId`, `strategy`, `history`, `engine`): it was written by a newer release or by something else. Nothing was written (exit code 1). Fix: upgrade `@signalyard/cli`, or delete the session if it is not a Signalyard session. */
  | 'CLI_CHECKPOINT_UNSUPPORTED'
  /** Another writer (a running Runner) saved the session while `sessions rewind` was writing, so the rewind was not written. Nothing was written (exit code 1). Fix: run it again, or stop the runners serving the session; on a live system prefer `runner.rewind()`. */
  | 'CLI_SESSION_CONFLICT'
  /** `approve` named an approval the session does not hold pending: a wrong id, or one already decided (by another process, or an earlier `approve`). Nothing ran (exit code 1). Fix: see the pending ids with `signalyard sessions show <key>`; a decided approval cannot be decided again. */
  | 'CLI_APPROVAL_NOT_PENDING'
  /** `approve` reached the runner, but the decision was not applied: a route refused it (`rejected`, e.g. a reviewers-only route on `tool_approval`), or the resumed turn failed or was stopped. The outcome is printed on stdout (exit code 1). Fix: read the outcome: pass a `--by` the app's routes accept, or fix what the failed turn reports. */
  | 'CLI_APPROVAL_REFUSED';

/**
 * The sessions in the store refused a `signalyard sessions` or `approve` command (codes
 * {@link CliSessionErrorCode}): a fork crosses agents, a checkpoint cannot be read, or a runner
 * wrote meanwhile (nothing was written); `approve` named no pending approval (nothing ran), or its
 * decision was refused or its turn failed (the outcome printed). A missing or existing session
 * and a version no longer kept are the Runner's `RunnerError` codes `SESSION_NOT_FOUND`,
 * `SESSION_EXISTS`, `VERSION_UNAVAILABLE`. `run` prints its message as one line on stderr and
 * returns exit code 1.
 */
export class CliSessionError extends SignalyardError<CliSessionErrorCode> {
  private readonly [marker] = true;
  /** The session key the command was about. */
  readonly sessionKey: string;

  constructor(options: { code: CliSessionErrorCode; sessionKey: string; message: string; cause?: unknown }) {
    super({ code: options.code, message: options.message, cause: options.cause });
    this.sessionKey = options.sessionKey;
  }

  /** True when `error` is a `CliSessionError`, from any installed copy of this package. */
  static override isInstance(error: unknown): error is CliSessionError {
    return hasErrorMarker(error, marker);
  }
}
