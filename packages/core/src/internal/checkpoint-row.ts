import type { Checkpoint } from '../checkpoint-store.js';
import { describeValue } from '../signal.js';

/**
 * The checkpoint a store row holds — `version` a positive safe integer, `text` the JSON it
 * wrote, `updatedAt` an ISO string — parsed into a fresh `Checkpoint`. A row that is not what a
 * store writes is reported through `corrupt(what, cause?)`, whose error is thrown.
 */
export function checkpointFromRow(
  version: unknown,
  text: unknown,
  updatedAt: unknown,
  corrupt: (what: string, cause?: unknown) => Error,
): Checkpoint {
  if (!isStoredVersion(version) || typeof text !== 'string' || typeof updatedAt !== 'string') {
    throw corrupt(
      `a row (version ${describeValue(version)}, ${typeof text} data, updatedAt ${describeValue(updatedAt)})`,
    );
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw corrupt('data that is not JSON', error);
  }
  return { version, data, updatedAt };
}

/** True for a version a store can hold: a positive safe integer. */
export function isStoredVersion(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}
