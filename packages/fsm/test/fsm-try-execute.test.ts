import { describe, expect, expectTypeOf, it } from 'vitest';
import { isSignalyardError, isTransitionRefusal } from '@signalyard/core';
import type { ExecutionStrategy, TransitionAttempt, TransitionResult } from '@signalyard/core';
import {
  ClosureGuard,
  FsmStrategy,
  GuardRejectedError,
  InvalidTransitionError,
  type FsmAttempt,
  type TransitionRefusal,
} from '@signalyard/fsm';
import { thrown as thrownBy } from '@signalyard/test-utils';

const catchError = (fn: () => unknown): Error => thrownBy(fn) as Error;

function machine() {
  return FsmStrategy.builder()
    .initial('idle')
    .transition('idle', 'start', 'running')
    .transition('running', 'review', 'done', { guard: new ClosureGuard('good', (q) => q === 'good') })
    .transition('running', 'review', 'done', { guard: new ClosureGuard('great', (q) => q === 'great'), priority: 1 })
    .transition('running', 'stop', 'idle')
    .build();
}

function refusalOf(attempt: FsmAttempt): TransitionRefusal {
  if (attempt.ok) throw new Error(`expected a refusal, got ${JSON.stringify(attempt.result)}`);
  return attempt.refusal;
}

describe('FsmStrategy.tryExecute', () => {
  it('takes an allowed transition and returns it, as execute does', () => {
    const fsm = machine();
    const attempt = fsm.tryExecute('start');
    expect(attempt).toEqual({ ok: true, result: { from: 'idle', action: 'start', to: 'running' } });
    expect(fsm.currentState).toBe('running');
    expect(fsm.tryExecute('review', 'great')).toEqual({
      ok: true,
      result: { from: 'running', action: 'review', to: 'done', guard: 'great' },
    });
  });

  it('returns one frozen object per transition, shared by every execution (a hit allocates nothing)', () => {
    const fsm = machine();
    const first = fsm.tryExecute('start');
    fsm.execute('stop');
    const second = fsm.tryExecute('start');
    expect(second).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    if (!first.ok) throw new Error('expected a transition');
    fsm.execute('stop');
    expect(first.result).toBe(fsm.execute('start'));
  });

  it('returns "no transition" as a value with the fields of InvalidTransitionError, state unchanged', () => {
    const fsm = machine();
    const refusal = refusalOf(fsm.tryExecute('stop'));
    expect(refusal).toMatchObject({
      code: 'FSM_INVALID_TRANSITION',
      currentState: 'idle',
      action: 'stop',
      validActions: ['start'],
    });
    expect(fsm.currentState).toBe('idle');
    expect(refusalOf(fsm.tryExecute('no such action')).code).toBe('FSM_INVALID_TRANSITION');
  });

  it('returns "every guard said no" as a value naming the guards in evaluation order, state unchanged', () => {
    const fsm = machine();
    fsm.execute('start');
    const refusal = refusalOf(fsm.tryExecute('review', 'poor'));
    expect(refusal).toMatchObject({
      code: 'FSM_GUARD_REJECTED',
      currentState: 'running',
      action: 'review',
      guards: ['great', 'good'],
    });
    expect(fsm.currentState).toBe('running');
  });

  it('refusal.toError() is the error execute throws: same class, code, fields and message, a refusal', () => {
    const fsm = machine();
    const invalid = refusalOf(fsm.tryExecute('stop')).toError();
    const thrown = catchError(() => fsm.execute('stop'));
    expect(InvalidTransitionError.isInstance(invalid)).toBe(true);
    expect(invalid.message).toBe(thrown.message);
    expect(invalid.message).toBe('Invalid transition from "idle" via "stop". Valid actions: ["start"]');
    expect(Object.entries(invalid)).toEqual(Object.entries(thrown));
    expect(isTransitionRefusal(invalid)).toBe(true);

    fsm.execute('start');
    const rejected = refusalOf(fsm.tryExecute('review', 'poor')).toError();
    const rejectedThrown = catchError(() => fsm.execute('review', 'poor'));
    expect(GuardRejectedError.isInstance(rejected)).toBe(true);
    expect(rejected.message).toBe(rejectedThrown.message);
    expect(Object.entries(rejected)).toEqual(Object.entries(rejectedThrown));
    expect(isTransitionRefusal(rejected)).toBe(true);
    expect(isSignalyardError(rejected, 'FSM_GUARD_REJECTED')).toBe(true);
  });

  it('refusal errors carry no stack frames, and leave Error.stackTraceLimit as it was', () => {
    const fsm = machine();
    const before = Error.stackTraceLimit;
    const thrown = catchError(() => fsm.execute('stop'));
    expect(thrown.stack).toBe(`InvalidTransitionError: ${thrown.message}`);
    expect(Error.stackTraceLimit).toBe(before);
    expect(new Error('x').stack).toMatch(/\n\s+at /); // ordinary errors keep theirs
  });

  it('still throws what is not a refusal: a non-string action, a failing guard', () => {
    const fsm = FsmStrategy.builder()
      .initial('a')
      .transition('a', 'go', 'b', {
        guard: () => {
          throw new Error('boom');
        },
      })
      .build();
    expect(catchError(() => fsm.tryExecute(42 as unknown as string))).toMatchObject({ code: 'ACTION_INVALID' });
    expect(catchError(() => fsm.tryExecute('go'))).toMatchObject({ code: 'FSM_GUARD_FAILED', guard: 'guard#0' });
    expect(fsm.currentState).toBe('a');
  });

  it('called from inside a guard of the same FSM fails the outer call, like execute', () => {
    let inner: unknown;
    const builder = FsmStrategy.builder().initial('a').transition('a', 'back', 'a');
    const fsm = builder
      .transition('a', 'go', 'b', {
        guard: () => {
          try {
            fsm.tryExecute('back');
          } catch (error) {
            inner = error;
          }
          return true;
        },
      })
      .build();
    expect(catchError(() => fsm.tryExecute('go'))).toMatchObject({ code: 'FSM_GUARD_FAILED' });
    expect(inner).toMatchObject({ code: 'FSM_GUARD_FAILED' });
    expect(fsm.currentState).toBe('a');
  });

  it('FsmStrategy offers it as the optional ExecutionStrategy.tryExecute', () => {
    const fsm = machine();
    const strategy: ExecutionStrategy = fsm;
    expect(strategy.tryExecute?.('start')).toEqual({
      ok: true,
      result: { from: 'idle', action: 'start', to: 'running' },
    });
    expect(fsm.currentState).toBe('running');
    expectTypeOf<FsmAttempt>().toExtend<TransitionAttempt>();
    expectTypeOf<ReturnType<FsmStrategy['tryExecute']>>().toEqualTypeOf<FsmAttempt>();
    // decisions-wave3 §7: { ok: true, result: TransitionResult } or { ok: false, refusal: TransitionRefusal }
    expectTypeOf<Extract<FsmAttempt, { ok: true }>['result']>().toEqualTypeOf<TransitionResult>();
    expectTypeOf<Extract<FsmAttempt, { ok: false }>['refusal']>().toEqualTypeOf<TransitionRefusal>();
  });
});
