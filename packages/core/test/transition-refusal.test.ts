import { describe, expect, it } from 'vitest';
import { SignalyardError, isTransitionRefusal, transitionRefusal } from '@signalyard/core';

class NotNowError extends SignalyardError<'NOT_NOW'> {
  readonly [transitionRefusal] = true;
}

describe('transition refusals', () => {
  it('recognises an error carrying the marker, whatever its class or code', () => {
    expect(isTransitionRefusal(new NotNowError({ code: 'NOT_NOW', message: 'not now' }))).toBe(true);
    // A plain object with the marker counts too: the check is by Symbol.for, across installed copies.
    expect(isTransitionRefusal({ [Symbol.for('signalyard.transitionRefusal')]: true })).toBe(true);
  });

  it('is false for failures and for values that are not errors', () => {
    expect(isTransitionRefusal(new SignalyardError({ code: 'FSM_GUARD_FAILED', message: 'threw' }))).toBe(false);
    expect(isTransitionRefusal(new Error('boom'))).toBe(false);
    expect(isTransitionRefusal({ [transitionRefusal]: 'yes' })).toBe(false);
    for (const value of [undefined, null, 'FSM_INVALID_TRANSITION', 42]) expect(isTransitionRefusal(value)).toBe(false);
  });
});
