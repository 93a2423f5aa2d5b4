// Every public function of @signalyard/fsm that takes a string parameter (or a string field of
// an object it takes), given each kind of non-string: a typed SignalyardError with its code,
// never a TypeError. Builder methods record what they are given; `define()` reports it.
// Predicates answer `false` instead.
import { describe, expect, it } from 'vitest';
import { isSignalyardError } from '@signalyard/core';
import { ClosureGuard, FsmStrategy } from '@signalyard/fsm';
import { NON_STRINGS, expectCode, failure } from '@signalyard/test-utils';

type Call = (bad: never) => unknown;

const definition = FsmStrategy.builder().initial('a').transition('a', 'go', 'b').define();
const builder = () => FsmStrategy.builder().initial('a').transition('a', 'go', 'b');

/** [function, call with the bad value, expected code, the parameter is optional (undefined is valid)]. */
const THROWING: readonly (readonly [string, Call, string, boolean?])[] = [
  ['FsmStrategy#execute(action)', (bad) => definition.create().execute(bad), 'ACTION_INVALID'],
  [
    'FsmStrategy#restore({ current_state })',
    (bad) => definition.create().restore({ type: 'fsm', current_state: bad }),
    'FSM_SNAPSHOT_INVALID',
  ],
  ['FsmStrategy#restore({ type })', (bad) => definition.create().restore({ type: bad }), 'FSM_SNAPSHOT_INVALID'],
  [
    'FsmDefinition#create({ current_state })',
    (bad) => definition.create({ type: 'fsm', current_state: bad }),
    'FSM_SNAPSHOT_INVALID',
  ],
  ['FsmStrategyBuilder#initial(state)', (bad) => builder().initial(bad).define(), 'FSM_DEFINITION_INVALID'],
  ['FsmStrategyBuilder#state(name)', (bad) => builder().state(bad).define(), 'FSM_DEFINITION_INVALID'],
  [
    'FsmStrategyBuilder#state(name, { description })',
    (bad) => builder().state('a').state('b', { description: bad }).define(),
    'FSM_DEFINITION_INVALID',
    true,
  ],
  [
    'FsmStrategyBuilder#transition(from)',
    (bad) => builder().transition(bad, 'x', 'a').define(),
    'FSM_DEFINITION_INVALID',
  ],
  [
    'FsmStrategyBuilder#transition(action)',
    (bad) => builder().transition('a', bad, 'a').define(),
    'FSM_DEFINITION_INVALID',
  ],
  ['FsmStrategyBuilder#transition(to)', (bad) => builder().transition('a', 'x', bad).build(), 'FSM_DEFINITION_INVALID'],
  [
    'FsmStrategyBuilder#transition({ guard: { name } })',
    (bad) =>
      builder()
        .transition('a', 'x', 'b', { guard: { name: bad, evaluate: () => true } })
        .define(),
    'FSM_DEFINITION_INVALID',
  ],
  [
    'FsmStrategyBuilder#route({ inStates })',
    (bad) =>
      builder()
        .route({ kind: 'stop', action: { type: 'continue' } }, { inStates: [bad] })
        .define(),
    'FSM_DEFINITION_INVALID',
  ],
  [
    'FsmStrategyBuilder#route({ kind })',
    (bad) =>
      builder()
        .route({ kind: bad, action: { type: 'continue' } })
        .define(),
    'FSM_DEFINITION_INVALID',
  ],
  [
    'FsmStrategyBuilder#route({ name })',
    (bad) =>
      builder()
        .route({ kind: 'stop', action: { type: 'continue' }, name: bad })
        .define(),
    'FSM_DEFINITION_INVALID',
    true,
  ],
  ['new ClosureGuard(name)', (bad) => new ClosureGuard(bad, () => true), 'FSM_DEFINITION_INVALID'],
];

/** Predicates: they answer `false` for a non-string, without throwing. */
const PREDICATES: readonly (readonly [string, (bad: never) => boolean])[] = [
  ['FsmStrategy#canExecute(action)', (bad) => definition.create().canExecute(bad)],
];

describe.each(NON_STRINGS)('fsm, given %s where a string is expected', (_label, bad: unknown) => {
  const rows = THROWING.filter(([, , , optional]) => !(optional === true && bad === undefined)).map(
    ([name, call, code]) => ({ name, call, code }),
  );
  it.each(rows)('$name fails with a SignalyardError and its code', async ({ call, code }) => {
    const error = await failure(() => call(bad as never));
    expect(isSignalyardError(error)).toBe(true);
    expectCode(error, code);
  });

  it.each(PREDICATES.map(([name, call]) => ({ name, call })))('$name answers false', ({ call }) => {
    expect(call(bad as never)).toBe(false);
  });

  it('an FSM refusing a bad action keeps its state', () => {
    const fsm = definition.create();
    expect(() => fsm.execute(bad as never)).toThrow();
    expect(fsm.currentState).toBe('a');
  });
});
