import { CheckpointStoreError } from '../errors/checkpoint-store-error.js';
import { describeValue } from '../signal.js';

/**
 * How many versions before the current one a store keeps when given no `keepVersions`.
 * For store implementers.
 */
export const DEFAULT_KEEP_VERSIONS = 20;

/**
 * What is wrong with a `keepVersions` option (a safe integer ≥ 0), or `undefined` when nothing
 * is. For store implementers, who report it as a `ConfigError` problem with the other options.
 */
export function keepVersionsProblem(value: unknown): string | undefined {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0
    ? undefined
    : `expected how many versions before the current one to keep: an integer >= 0 (0 = the current version only), got ${describeValue(value)}`;
}

/** `history` options after validation: `undefined` where none was given. */
export interface HistoryQuery {
  /** Only versions lower than this. */
  readonly before: number | undefined;
  /** At most this many checkpoints. */
  readonly limit: number | undefined;
}

const NONE: HistoryQuery = { before: undefined, limit: undefined };

/**
 * Checks the options of `CheckpointStore.history`: absent, or `{ before?, limit? }` where each
 * given value is a positive safe integer. Unknown keys are refused (a typo must not widen the
 * result silently). For store implementers.
 *
 * @throws CheckpointStoreError `CHECKPOINT_HISTORY_OPTIONS_INVALID`.
 */
export function resolveHistoryOptions(opts: unknown): HistoryQuery {
  if (opts === undefined) return NONE;
  if (typeof opts !== 'object' || opts === null || Array.isArray(opts)) {
    throw historyOptionsError(`Invalid history options ${describeValue(opts)}: expected { before?, limit? }`);
  }
  for (const key of Object.keys(opts)) {
    if (key !== 'before' && key !== 'limit') {
      throw historyOptionsError(`Invalid history option ${JSON.stringify(key)}: expected only before and limit`);
    }
  }
  const { before, limit } = opts as { before?: unknown; limit?: unknown };
  if (before !== undefined && !isPositiveInteger(before)) {
    throw historyOptionsError(
      `Invalid history option before ${describeValue(before)}: expected a version, an integer >= 1 (only versions lower than it are listed)`,
    );
  }
  if (limit !== undefined && !isPositiveInteger(limit)) {
    throw historyOptionsError(
      `Invalid history option limit ${describeValue(limit)}: expected an integer >= 1 (the most checkpoints to list)`,
    );
  }
  return { before, limit };
}

/**
 * Checks the version given to `CheckpointStore.loadVersion`: a positive safe integer. For store
 * implementers.
 * @throws CheckpointStoreError `CHECKPOINT_VERSION_INVALID`.
 */
export function assertCheckpointVersion(version: unknown): asserts version is number {
  if (!isPositiveInteger(version)) {
    throw new CheckpointStoreError({
      code: 'CHECKPOINT_VERSION_INVALID',
      message: `Invalid checkpoint version ${describeValue(version)}: expected an integer >= 1 (versions start at 1)`,
    });
  }
}

function isPositiveInteger(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 1;
}

function historyOptionsError(message: string): CheckpointStoreError {
  return new CheckpointStoreError({ code: 'CHECKPOINT_HISTORY_OPTIONS_INVALID', message });
}
