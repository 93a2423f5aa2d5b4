import { SignalyardError, hasErrorMarker } from './signalyard-error.js';

const marker = Symbol.for('signalyard.error.CheckpointStoreError');

/** The codes of {@link CheckpointStoreError}, shared by every checkpoint store. */
export type CheckpointStoreErrorCode =
  /** A checkpoint key (or key prefix) is not a non-empty string, or holds a character the store's text column cannot keep (NUL, a lone surrogate). Nothing was read or written. Fix: use non-empty, well-formed Unicode keys; session keys made by `@signalyard/sessions` always are. */
  | 'CHECKPOINT_KEY_INVALID'
  /** `save` was given an expected version that is not an integer ≥ 0, or `loadVersion` a version that is not an integer ≥ 1. Fix: pass the `version` of the checkpoint you loaded (0 to `save` for a key that must not exist yet), or a version `history` listed. */
  | 'CHECKPOINT_VERSION_INVALID'
  /** `history` was given options other than `{ before?, limit? }` with integers ≥ 1 (a non-object, an unknown key, a `before` or `limit` that is 0, negative, fractional or not a number). Nothing was read. Fix: pass `before` as a version (page with the last version you got) and `limit` as a count ≥ 1, or leave them out. */
  | 'CHECKPOINT_HISTORY_OPTIONS_INVALID'
  /** The store was used after `close()`. Fix: create a new store; close a store only when nothing uses it anymore (a Runner closes only a store it created). */
  | 'CHECKPOINT_STORE_CLOSED';

/**
 * A checkpoint store was called with a key, version or history options it cannot take, or after
 * it was closed.
 * Every store (memory, SQLite, PostgreSQL, a third-party one using the conformance suite) throws
 * these codes for these cases; nothing was written.
 *
 * @example
 * ```ts
 * try {
 *   await store.save('', data, 0);
 * } catch (error) {
 *   if (CheckpointStoreError.isInstance(error)) console.error(error.code); // CHECKPOINT_KEY_INVALID
 * }
 * ```
 */
export class CheckpointStoreError extends SignalyardError<CheckpointStoreErrorCode> {
  private readonly [marker] = true;

  /** True when `error` is a `CheckpointStoreError`, from any installed copy of core. */
  static override isInstance(error: unknown): error is CheckpointStoreError {
    return hasErrorMarker(error, marker);
  }
}
