import { describe, expectTypeOf, it } from 'vitest';
import type { ExecutionStrategy, SignalRoute, StrategySnapshot, TransitionResult } from '@signalyard/core';
import {
  ClosureGuard,
  FsmDefinitionError,
  FsmSnapshotError,
  FsmStrategy,
  FsmStrategyBuilder,
  GuardFailedError,
  GuardRejectedError,
  InvalidTransitionError,
  type FsmDefinition,
  type GuardCondition,
  type RouteOptions,
  type StateOptions,
  type TransitionOptions,
} from '@signalyard/fsm';

describe('public types', () => {
  it('FsmStrategy is an ExecutionStrategy, and a definition is a strategy factory', () => {
    const definition = FsmStrategy.builder().initial('a').define();
    const factory: () => ExecutionStrategy = () => definition.create();
    expectTypeOf(factory).returns.toEqualTypeOf<ExecutionStrategy>();
    expectTypeOf<FsmStrategy>().toExtend<ExecutionStrategy>();
  });

  it('snapshot() is typed as { type: "fsm"; current_state: string } and is a StrategySnapshot', () => {
    const fsm = FsmStrategy.builder().initial('a').build();
    const snapshot = fsm.snapshot();
    expectTypeOf(snapshot.type).toEqualTypeOf<'fsm'>();
    expectTypeOf(snapshot.current_state).toEqualTypeOf<string>();
    expectTypeOf(snapshot).toExtend<StrategySnapshot>();
    expectTypeOf(snapshot).toExtend<{ type: 'fsm'; current_state: string }>();
    expectTypeOf<Parameters<FsmStrategy['restore']>>().toEqualTypeOf<[snapshot: StrategySnapshot]>();
    expectTypeOf<FsmDefinition['create']>().parameters.toEqualTypeOf<[snapshot?: StrategySnapshot]>();
  });

  it('every builder method but build() and define() returns the builder, so calls chain', () => {
    const builder = FsmStrategy.builder();
    expectTypeOf(builder).toEqualTypeOf<FsmStrategyBuilder>();
    expectTypeOf(builder.initial('a')).toEqualTypeOf<FsmStrategyBuilder>();
    expectTypeOf(builder.state('a', { final: true, description: 'd' })).toEqualTypeOf<FsmStrategyBuilder>();
    expectTypeOf(
      builder.transition('a', 'go', 'b', { guard: () => true, priority: 1 }),
    ).toEqualTypeOf<FsmStrategyBuilder>();
    expectTypeOf(
      builder.route({ kind: 'stop', action: { type: 'continue' } }, { inStates: ['a'] }),
    ).toEqualTypeOf<FsmStrategyBuilder>();
    expectTypeOf<ReturnType<FsmStrategyBuilder['build']>>().toEqualTypeOf<FsmStrategy>();
    expectTypeOf<ReturnType<FsmStrategyBuilder['define']>>().toEqualTypeOf<FsmDefinition>();

    // A subclass keeps its own type through the chain (the methods return `this`).
    class MyBuilder extends FsmStrategyBuilder {
      extra(): this {
        return this;
      }
    }
    expectTypeOf(new MyBuilder().initial('a').extra().state('a')).toEqualTypeOf<MyBuilder>();
  });

  it('the strategy API has the documented signatures', () => {
    const fsm = FsmStrategy.builder().initial('a').build();
    expectTypeOf<FsmStrategy['execute']>().toEqualTypeOf<(action: string, input?: unknown) => TransitionResult>();
    expectTypeOf<FsmStrategy['canExecute']>().toEqualTypeOf<(action: string, input?: unknown) => boolean>();
    expectTypeOf(fsm.currentState).toEqualTypeOf<string>();
    expectTypeOf(fsm.validActions()).toEqualTypeOf<readonly string[]>();
    expectTypeOf(fsm.signalRoutes()).toEqualTypeOf<readonly SignalRoute[]>();
    expectTypeOf(fsm.toMermaid()).toEqualTypeOf<string>();
    expectTypeOf<ReturnType<typeof FsmStrategy.builder>>().toEqualTypeOf<FsmStrategyBuilder>();
  });

  it('a definition exposes its states and initial state read-only', () => {
    const definition = FsmStrategy.builder().initial('a').define();
    expectTypeOf(definition.states).toEqualTypeOf<readonly string[]>();
    expectTypeOf(definition.initial).toEqualTypeOf<string>();
    expectTypeOf(definition.create()).toEqualTypeOf<FsmStrategy>();
    expectTypeOf(definition.toMermaid()).toEqualTypeOf<string>();
  });

  it('guards: a GuardCondition, a ClosureGuard or a boolean function; nothing else', () => {
    expectTypeOf<ClosureGuard>().toExtend<GuardCondition>();
    expectTypeOf<GuardCondition>().toHaveProperty('name').toEqualTypeOf<string>();
    expectTypeOf<TransitionOptions['guard']>().toEqualTypeOf<
      GuardCondition | ((input: unknown) => boolean) | undefined
    >();
    expectTypeOf<TransitionOptions['priority']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<StateOptions>().toEqualTypeOf<{ readonly final?: boolean; readonly description?: string }>();
    expectTypeOf<RouteOptions>().toEqualTypeOf<{ readonly inStates?: readonly string[] }>();

    const builder = FsmStrategy.builder();
    builder.transition('a', 'go', 'b', { guard: new ClosureGuard('g', () => true) });
    builder.transition('a', 'go', 'b', { guard: { name: 'g', evaluate: (input) => input === 1 } });
    // @ts-expect-error a guard must return a boolean
    builder.transition('a', 'go', 'b', { guard: () => 'yes' });
    // @ts-expect-error a guard must be synchronous
    builder.transition('a', 'go', 'b', { guard: async () => true });
    // @ts-expect-error a priority is a number
    builder.transition('a', 'go', 'b', { priority: '1' });
    // @ts-expect-error inStates is an array of names
    builder.route({ kind: 'stop', action: { type: 'continue' } }, { inStates: 'a' });
  });

  it('error classes narrow with isInstance and expose their fields read-only', () => {
    const error: unknown = new Error('x');
    if (InvalidTransitionError.isInstance(error)) {
      expectTypeOf(error).toEqualTypeOf<InvalidTransitionError>();
      expectTypeOf(error.validActions).toEqualTypeOf<readonly string[]>();
      expectTypeOf(error.currentState).toEqualTypeOf<string>();
      expectTypeOf(error.action).toEqualTypeOf<string>();
    }
    if (GuardRejectedError.isInstance(error)) expectTypeOf(error.guards).toEqualTypeOf<readonly string[]>();
    if (GuardFailedError.isInstance(error)) expectTypeOf(error.guard).toEqualTypeOf<string>();
    if (FsmDefinitionError.isInstance(error)) expectTypeOf(error.problems).toEqualTypeOf<readonly string[]>();
    if (FsmSnapshotError.isInstance(error)) expectTypeOf(error.code).toEqualTypeOf<'FSM_SNAPSHOT_INVALID'>();
  });
});
