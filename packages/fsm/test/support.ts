// Shared helpers for the fsm tests (not a test file: vitest only runs `*.test.ts`).
import { expect } from 'vitest';
import { FsmDefinitionError, type FsmStrategyBuilder } from '@signalyard/fsm';

/**
 * Runs `fn`, which must throw an error that `is` accepts, and returns that error. An error of
 * another kind is rethrown as it is, so a failing test shows what was actually thrown.
 */
export function catchError<E>(fn: () => unknown, is: (error: unknown) => error is E): E {
  try {
    fn();
  } catch (error) {
    if (is(error)) return error;
    throw error;
  }
  return expect.unreachable('expected the call to throw, but it returned normally');
}

/** The `problems` of the FsmDefinitionError that `define()` throws for `builder`. */
export function definitionProblems(builder: FsmStrategyBuilder): readonly string[] {
  const error = catchError(
    () => builder.define(),
    (e) => FsmDefinitionError.isInstance(e),
  );
  expect(error.code).toBe('FSM_DEFINITION_INVALID');
  return error.problems;
}
