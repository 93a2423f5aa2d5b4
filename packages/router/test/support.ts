// Shared helpers for the router tests (not a test file: vitest only runs `*.test.ts`).
import type { SignalRoute, Tier } from '@signalyard/core';

export const TIERS: readonly Tier[] = ['strategy', 'agent', 'plugin'];

/**
 * Runs `fn`, which must throw an error that `type.isInstance` accepts, and returns that error.
 * An error of another kind is rethrown as it is, so a failing test shows what was thrown.
 */
export function catchError<E>(fn: () => unknown, type: { isInstance(error: unknown): error is E }): E {
  try {
    fn();
  } catch (error) {
    if (type.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected the call to throw, but it returned normally');
}

/** Casts a deliberately malformed value to a route, for validation tests. */
export function malformed(value: unknown): SignalRoute {
  return value as SignalRoute;
}
