import { SignalyardError, hasErrorMarker } from './signalyard-error.js';

const marker = Symbol.for('signalyard.error.CheckpointConflictError');

/** The code of {@link CheckpointConflictError}. */
export type CheckpointConflictErrorCode =
  /** A compare-and-set save found another version than the one expected: another writer (a second runner over the same store) saved first. Nothing was written. Fix: reload and re-apply (the Runner does this by itself, up to 3 times); if it persists, serialise writers with a `SessionLock`. */
  'CHECKPOINT_CONFLICT';

/**
 * A compare-and-set save lost (code `CHECKPOINT_CONFLICT`): the stored version was not the
 * expected one, because another writer saved first. Nothing was written; reload and retry.
 */
export class CheckpointConflictError extends SignalyardError<CheckpointConflictErrorCode> {
  private readonly [marker] = true;
  /** The checkpoint key. */
  readonly key: string;
  /** The version the caller expected (0 = "must not exist yet"). */
  readonly expected: number;
  /** The version actually stored (0 = absent). */
  readonly actual: number;

  /**
   * `message`: what the conflict means where it happened, when more needs saying than the
   * versions (default: `Checkpoint "<key>" is at version <actual>, expected version <expected>`);
   * `cause`: the conflict this one reports, if any.
   */
  constructor(options: { key: string; expected: number; actual: number; message?: string; cause?: unknown }) {
    super({
      code: 'CHECKPOINT_CONFLICT',
      message:
        options.message ??
        `Checkpoint ${JSON.stringify(options.key)} is at version ${options.actual}, expected version ${options.expected}`,
      ...(options.cause === undefined ? {} : { cause: options.cause }),
    });
    this.key = options.key;
    this.expected = options.expected;
    this.actual = options.actual;
  }

  /** True when `error` is a `CheckpointConflictError`, from any installed copy of core. */
  static override isInstance(error: unknown): error is CheckpointConflictError {
    return hasErrorMarker(error, marker);
  }
}
