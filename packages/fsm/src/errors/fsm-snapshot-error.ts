import { SignalyardError, hasErrorMarker } from '@signalyard/core';

const marker = Symbol.for('signalyard.error.FsmSnapshotError');

/** The code of {@link FsmSnapshotError}. */
export type FsmSnapshotErrorCode =
  /** `restore()` was given a snapshot that is malformed, of another `type`, or names a state the FSM does not have; the state is unchanged. Fix: restore a snapshot this FSM definition produced; after renaming states, migrate stored snapshots. */
  'FSM_SNAPSHOT_INVALID';

/**
 * `restore()` was given a snapshot it cannot take (code `FSM_SNAPSHOT_INVALID`): not an object,
 * of another `type`, or naming a state the FSM does not have. The state is unchanged.
 */
export class FsmSnapshotError extends SignalyardError<FsmSnapshotErrorCode> {
  private readonly [marker] = true;

  constructor(options: { message: string }) {
    super({ code: 'FSM_SNAPSHOT_INVALID', message: options.message });
  }

  /** True when `error` is an `FsmSnapshotError`, from any installed copy of the package. */
  static override isInstance(error: unknown): error is FsmSnapshotError {
    return hasErrorMarker(error, marker);
  }
}
