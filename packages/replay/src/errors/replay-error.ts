import { SignalyardError, hasErrorMarker } from '@signalyard/core';

const marker = Symbol.for('signalyard.error.ReplayError');

/** The codes of {@link ReplayError}. */
export type ReplayErrorCode =
  /** A cassette is not a valid cassette (`v: 1`): the message lists every problem with its path. Fix: re-export or re-record it with this release; a cassette edited by hand must keep the format of `Cassette`. */
  | 'REPLAY_CASSETTE_INVALID'
  /** A cassette file or folder could not be read (missing, not JSON, no `*.json` files in a folder). Fix: check the path; cassettes are the `.json` files `exportCassettes` / `cassetteRecorder` / `signalyard cassettes export` write. */
  | 'REPLAY_CASSETTE_UNREADABLE'
  /** An argument or option of `replay`, `evaluate`, `exportCassettes`, `cassetteRecorder`, `diffRuns` or a scorer is invalid (a `runner` that is not a function, a threshold outside [0, 1], a scorer that returned a score outside [0, 1]). Fix: the message names the value and what was expected. */
  | 'REPLAY_INPUT_INVALID'
  /** The runner factory given to `replay` / `evaluate` threw, or returned something that is not a Runner (`{ dispatch, close }`). Fix: the factory must build a runner from `{ store, clock, model, tools }` and return it. */
  | 'REPLAY_RUNNER_INVALID'
  /** No longer thrown: `cassetteRecorder`'s plugin now records on its own (it learns each turn's end from the runner's `outcome` event), so its store wrapper is optional. Kept so code that names it still compiles. Deprecated. Fix: nothing to fix. */
  | 'REPLAY_RECORDER_INCOMPLETE'
  /** An LLM judge (`llmJudge`) could not get its verdict: its model threw (the error is the `cause`), or its `judgeCassette` file could not be written (`file` names it). Fix: check the model's credentials and network, or the file's folder and permissions; a recorded judge cassette serves every call it holds without the model. */
  | 'REPLAY_JUDGE_FAILED'
  /** A replayed run asked for something the cassette does not hold (a model call past the recorded ones, a tool call not recorded): thrown inside the run under test so it stops there, and reported as the session's divergence. Fix: nothing to fix in the replay; the change under test made the run go elsewhere. */
  | 'REPLAY_NOT_RECORDED';

/**
 * A replay failed to start, a cassette is invalid or unreadable, or a replayed run asked for a
 * model call or tool result the cassette does not hold (codes in {@link ReplayErrorCode}).
 *
 * @example
 * ```ts
 * try {
 *   await loadCassettes('cassettes/');
 * } catch (error) {
 *   if (ReplayError.isInstance(error) && error.code === 'REPLAY_CASSETTE_INVALID') console.error(error.message);
 * }
 * ```
 */
export class ReplayError extends SignalyardError<ReplayErrorCode> {
  private readonly [marker] = true;
  /** The cassette file the error is about, when it is about one. */
  declare readonly file?: string;

  constructor(options: { code: ReplayErrorCode; message: string; file?: string; cause?: unknown }) {
    super({ code: options.code, message: options.message, cause: options.cause });
    if (options.file !== undefined) this.file = options.file;
  }

  /** True when `error` is a `ReplayError`, from any installed copy of this package. */
  static override isInstance(error: unknown): error is ReplayError {
    return hasErrorMarker(error, marker);
  }
}

/** A `REPLAY_INPUT_INVALID` error. @internal */
export function inputInvalid(message: string): ReplayError {
  return new ReplayError({ code: 'REPLAY_INPUT_INVALID', message });
}
