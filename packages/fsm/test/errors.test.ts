import { describe, expect, it } from 'vitest';
import { SignalyardError, isSignalyardError, isTransitionRefusal } from '@signalyard/core';
import {
  ClosureGuard,
  FsmDefinitionError,
  FsmSnapshotError,
  FsmStrategy,
  GuardFailedError,
  GuardRejectedError,
  InvalidTransitionError,
} from '@signalyard/fsm';
import { catchError } from './support.js';

// A user-defined subclass of every exported error class: each class's isInstance must match these too.
class AppInvalidTransitionError extends InvalidTransitionError {}
class AppGuardRejectedError extends GuardRejectedError {}
class AppGuardFailedError extends GuardFailedError {}
class AppFsmDefinitionError extends FsmDefinitionError {}
class AppFsmSnapshotError extends FsmSnapshotError {}

const invalid = { currentState: 'idle', action: 'finish', validActions: ['start'] } as const;
const rejected = { currentState: 'idle', action: 'go', guards: ['g1', 'guard#2'] } as const;
const failed = { currentState: 'idle', action: 'go', guard: 'g1', reason: 'it threw: boom', cause: new Error('boom') };
const definition = { problems: ['no initial state', 'ambiguous'] } as const;
const snapshot = { message: 'bad snapshot' } as const;

interface Row {
  readonly name: string;
  readonly code: string;
  readonly isInstance: (e: unknown) => boolean;
  readonly make: () => SignalyardError;
  readonly makeSub: () => SignalyardError;
  readonly fields: Readonly<Record<string, unknown>>;
}

const rows: readonly Row[] = [
  {
    name: 'InvalidTransitionError',
    code: 'FSM_INVALID_TRANSITION',
    isInstance: (e) => InvalidTransitionError.isInstance(e),
    make: () => new InvalidTransitionError(invalid),
    makeSub: () => new AppInvalidTransitionError(invalid),
    fields: { currentState: 'idle', action: 'finish', validActions: ['start'] },
  },
  {
    name: 'GuardRejectedError',
    code: 'FSM_GUARD_REJECTED',
    isInstance: (e) => GuardRejectedError.isInstance(e),
    make: () => new GuardRejectedError(rejected),
    makeSub: () => new AppGuardRejectedError(rejected),
    fields: { currentState: 'idle', action: 'go', guards: ['g1', 'guard#2'] },
  },
  {
    name: 'GuardFailedError',
    code: 'FSM_GUARD_FAILED',
    isInstance: (e) => GuardFailedError.isInstance(e),
    make: () => new GuardFailedError(failed),
    makeSub: () => new AppGuardFailedError(failed),
    fields: { currentState: 'idle', action: 'go', guard: 'g1', cause: failed.cause },
  },
  {
    name: 'FsmDefinitionError',
    code: 'FSM_DEFINITION_INVALID',
    isInstance: (e) => FsmDefinitionError.isInstance(e),
    make: () => new FsmDefinitionError(definition),
    makeSub: () => new AppFsmDefinitionError(definition),
    fields: { problems: ['no initial state', 'ambiguous'] },
  },
  {
    name: 'FsmSnapshotError',
    code: 'FSM_SNAPSHOT_INVALID',
    isInstance: (e) => FsmSnapshotError.isInstance(e),
    make: () => new FsmSnapshotError(snapshot),
    makeSub: () => new AppFsmSnapshotError(snapshot),
    fields: { message: 'bad snapshot' },
  },
];

const notErrors: readonly (readonly [string, unknown])[] = [
  ['a plain Error', new Error('x')],
  ['a base SignalyardError with an FSM code', new SignalyardError({ code: 'FSM_INVALID_TRANSITION', message: 'x' })],
  [
    'an Error posing as an FSM error',
    Object.assign(new Error('x'), { code: 'FSM_GUARD_FAILED', name: 'GuardFailedError' }),
  ],
  ['a plain object', { code: 'FSM_SNAPSHOT_INVALID', message: 'x' }],
  ['null', null],
  ['undefined', undefined],
  ['a string', 'FsmDefinitionError'],
];

describe.each(rows)('$name', (row) => {
  it('is a SignalyardError and an Error, with its code and its class name', () => {
    const error = row.make();
    expect(error).toBeInstanceOf(Error);
    expect(SignalyardError.isInstance(error)).toBe(true);
    expect(isSignalyardError(error, row.code)).toBe(true);
    expect(error.code).toBe(row.code);
    expect(error.name).toBe(row.name);
    expect(error.message).not.toBe('');
  });

  it('carries its structured fields', () => {
    expect(row.make()).toMatchObject(row.fields);
  });

  it('isInstance matches its own instances and those of subclasses', () => {
    expect(row.isInstance(row.make())).toBe(true);
    expect(row.isInstance(row.makeSub())).toBe(true);
  });

  it('isInstance matches no instance of another error class', () => {
    for (const other of rows) {
      if (other === row) continue;
      expect(row.isInstance(other.make())).toBe(false);
      expect(row.isInstance(other.makeSub())).toBe(false);
    }
  });

  it.each(notErrors)('isInstance does not match %s', (_label, value) => {
    expect(row.isInstance(value)).toBe(false);
  });
});

describe('errors thrown by the FSM', () => {
  const fsm = () =>
    FsmStrategy.builder()
      .initial('idle')
      .transition('idle', 'start', 'running')
      .transition('idle', 'go', 'x', { guard: new ClosureGuard('nope', () => false) })
      .transition('idle', 'boom', 'x', {
        guard: new ClosureGuard('bomb', () => {
          throw new RangeError('kaput');
        }),
      })
      .build();

  it('refusals (no transition, every guard said no) carry the refusal marker; a guard that throws does not', () => {
    const refused = (action: string) => {
      try {
        fsm().execute(action);
      } catch (error) {
        return isTransitionRefusal(error);
      }
      throw new Error(`execute(${action}) did not throw`);
    };
    expect(refused('finish')).toBe(true);
    expect(refused('go')).toBe(true);
    expect(refused('boom')).toBe(false);
  });

  it('InvalidTransitionError says the state, the action and the valid actions', () => {
    const error = catchError(
      () => fsm().execute('finish'),
      (e) => InvalidTransitionError.isInstance(e),
    );
    expect(error).toMatchObject({ currentState: 'idle', action: 'finish', validActions: ['boom', 'go', 'start'] });
    expect(error.message).toContain('"idle"');
    expect(error.message).toContain('"finish"');
    expect(error.message).toContain('["boom","go","start"]');
  });

  it('GuardRejectedError says the state, the action and the guards tried', () => {
    const error = catchError(
      () => fsm().execute('go'),
      (e) => GuardRejectedError.isInstance(e),
    );
    expect(error).toMatchObject({ currentState: 'idle', action: 'go', guards: ['nope'] });
    expect(error.message).toContain('"go"');
    expect(error.message).toContain('nope');
  });

  it('GuardFailedError says the state, the action and the guard, and keeps the thrown error as cause', () => {
    const error = catchError(
      () => fsm().execute('boom'),
      (e) => GuardFailedError.isInstance(e),
    );
    expect(error).toMatchObject({ currentState: 'idle', action: 'boom', guard: 'bomb' });
    expect(error.cause).toBeInstanceOf(RangeError);
    expect(error.message).toContain('bomb');
    expect(error.message).toContain('kaput');
  });

  it('FsmDefinitionError lists every problem in its message', () => {
    const error = new FsmDefinitionError({ problems: ['first problem', 'second problem'] });
    expect(error.message).toContain('first problem');
    expect(error.message).toContain('second problem');
  });

  it('FsmDefinitionError keeps its own frozen copy of the problems', () => {
    const problems = ['one'];
    const error = new FsmDefinitionError({ problems });
    problems.push('two');
    expect(error.problems).toEqual(['one']);
    expect(Object.isFrozen(error.problems)).toBe(true);
  });
});

describe('ClosureGuard', () => {
  it('has the given name and evaluates its function with the input', () => {
    const guard = new ClosureGuard('positive', (input) => typeof input === 'number' && input > 0);
    expect(guard.name).toBe('positive');
    expect(guard.evaluate(3)).toBe(true);
    expect(guard.evaluate(-3)).toBe(false);
  });

  it('an empty name is an FsmDefinitionError', () => {
    const error = catchError(
      () => new ClosureGuard('', () => true),
      (e) => FsmDefinitionError.isInstance(e),
    );
    expect(error.code).toBe('FSM_DEFINITION_INVALID');
    expect(error.problems).toHaveLength(1);
  });

  it('a non-string name is an FsmDefinitionError', () => {
    const error = catchError(
      () => new ClosureGuard(7 as never, () => true),
      (e) => FsmDefinitionError.isInstance(e),
    );
    expect(error.problems).toHaveLength(1);
  });

  it('a non-function is an FsmDefinitionError naming the guard', () => {
    const error = catchError(
      () => new ClosureGuard('g', true as never),
      (e) => FsmDefinitionError.isInstance(e),
    );
    expect(error.problems).toHaveLength(1);
    expect(error.problems[0]).toContain('"g"');
  });

  it('an empty name and a non-function are reported together', () => {
    const error = catchError(
      () => new ClosureGuard('', undefined as never),
      (e) => FsmDefinitionError.isInstance(e),
    );
    expect(error.problems).toHaveLength(2);
  });

  it('a thrown error passes through evaluate unchanged', () => {
    const boom = new Error('boom');
    const guard = new ClosureGuard('g', () => {
      throw boom;
    });
    expect(() => guard.evaluate(null)).toThrow(boom);
  });
});
