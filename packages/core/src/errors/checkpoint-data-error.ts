import { SignalyardError, hasErrorMarker } from './signalyard-error.js';

const marker = Symbol.for('signalyard.error.CheckpointDataError');

/** The code of {@link CheckpointDataError}. */
export type CheckpointDataErrorCode =
  /** Data given to a checkpoint store holds a value JSON cannot represent (`NaN`, `±Infinity`, a `BigInt`, a function, a symbol, a cycle) at the error's `path`; nothing was written. Fix: keep engine state and tool results plain JSON (convert a `BigInt` to a string, a `Date` to an ISO string, drop functions). */
  'CHECKPOINT_DATA_INVALID';

/**
 * Checkpoint data cannot be stored as JSON (code `CHECKPOINT_DATA_INVALID`): it holds `NaN`,
 * `±Infinity`, a `BigInt`, a function, a symbol or a cycle, or is `undefined` itself.
 * Nothing was written.
 */
export class CheckpointDataError extends SignalyardError<CheckpointDataErrorCode> {
  private readonly [marker] = true;
  /** Where in the data the bad value sits, as a JSON path (`$.history[3].meta`). */
  readonly path: string;

  constructor(options: { path: string; problem: string; key?: string }) {
    super({
      code: 'CHECKPOINT_DATA_INVALID',
      message: `Checkpoint data${options.key === undefined ? '' : ` for ${JSON.stringify(options.key)}`} is not JSON-safe at ${options.path}: ${options.problem}`,
    });
    this.path = options.path;
  }

  /** True when `error` is a `CheckpointDataError`, from any installed copy of core. */
  static override isInstance(error: unknown): error is CheckpointDataError {
    return hasErrorMarker(error, marker);
  }
}
