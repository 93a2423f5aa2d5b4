/* eslint-disable @typescript-eslint/no-deprecated -- these tests check that the deprecated names keep working */
import { describe, expect, expectTypeOf, it } from 'vitest';
import { isSignalyardError, type ExecutionStrategy, type TransitionResult } from '@signalyard/core';
import { FsmStrategy, FsmStrategyWithRoutes, type FsmRefusal, type TransitionRefusal } from '@signalyard/fsm';
import { catchError } from './support.js';

/** idle --start--> running --finish--> done */
const definition = () =>
  FsmStrategy.builder().initial('idle').transition('idle', 'start', 'running').transition('running', 'finish', 'done');

// Before FsmStrategyWithRoutes was folded into FsmStrategy, build() returned a wrapper whose
// `strategy` was the machine. Code written then keeps working.
describe('FsmStrategyWithRoutes and .strategy (deprecated)', () => {
  it('build() returns an instance of FsmStrategyWithRoutes whose strategy is the instance itself', () => {
    const fsm = definition().build();
    expect(fsm).toBeInstanceOf(FsmStrategyWithRoutes);
    expect(fsm.strategy).toBe(fsm);
    expect(fsm.strategy).toBeInstanceOf(FsmStrategy);
    expect(fsm.strategy.currentState).toBe('idle');
  });

  it('new FsmStrategyWithRoutes(definition) makes a fresh FsmStrategy of the definition', () => {
    const d = definition().define();
    const a = new FsmStrategyWithRoutes(d);
    const b = new FsmStrategyWithRoutes(d);
    expect(a).toBeInstanceOf(FsmStrategy);
    a.execute('start');
    expect(a.currentState).toBe('running');
    expect(b.currentState).toBe('idle');
    const error = catchError(
      () => new FsmStrategyWithRoutes(null as never),
      (e) => isSignalyardError(e),
    );
    expect(error.code).toBe('FSM_DEFINITION_INVALID');
  });

  it('the machine reached through .strategy shares the one state', () => {
    const fsm = definition().build();
    fsm.strategy.execute('start');
    expect(fsm.currentState).toBe('running');
    expect(fsm.strategy.snapshot()).toBe(fsm.snapshot());
    fsm.execute('finish');
    expect(fsm.strategy.currentState).toBe('done');
  });

  it('FsmStrategyWithRoutes is the FsmStrategy type', () => {
    expectTypeOf<FsmStrategyWithRoutes>().toEqualTypeOf<FsmStrategy>();
    expectTypeOf<FsmStrategyWithRoutes>().toExtend<ExecutionStrategy>();
    expectTypeOf<FsmStrategyWithRoutes['execute']>().toEqualTypeOf<
      (action: string, input?: unknown) => TransitionResult
    >();
    expectTypeOf(definition().build().strategy).toEqualTypeOf<FsmStrategy>();
    expectTypeOf<FsmRefusal>().toEqualTypeOf<TransitionRefusal>();
  });
});
