import { describe, expect, it, vi } from 'vitest';
import {
  AbortedError,
  CheckpointConflictError,
  CheckpointDataError,
  ToolArgumentsError,
  ConfigError,
  InvalidArgumentError,
  CheckpointStoreError,
  SignalyardError,
  hasErrorMarker,
  isSignalyardError,
  ModelStreamError,
  InboxError,
} from '@signalyard/core';
import type { ConfigProblem } from '@signalyard/core';
import { ScriptedModelError } from '@signalyard/core/testing';

const problem: ConfigProblem = { path: 'agents[0].name', message: 'required' };

// A user-defined subclass of every exported error class: each class's isInstance must match these too.
class AppError extends SignalyardError {}
class AppAbortedError extends AbortedError {}
class AppConfigError extends ConfigError {}
class AppConflictError extends CheckpointConflictError {}
class AppDataError extends CheckpointDataError {}
class AppToolArgumentsError extends ToolArgumentsError {}
class AppInvalidArgumentError extends InvalidArgumentError {}
class AppCheckpointStoreError extends CheckpointStoreError {}
class AppScriptedModelError extends ScriptedModelError {}
class AppModelStreamError extends ModelStreamError {}
class AppInboxError extends InboxError {}

interface Row {
  readonly name: string;
  readonly code: string;
  readonly isInstance: (e: unknown) => boolean;
  readonly make: () => SignalyardError;
  readonly makeSub: () => SignalyardError;
}

const rows: readonly Row[] = [
  {
    name: 'SignalyardError',
    code: 'SOME_CODE',
    isInstance: (e) => SignalyardError.isInstance(e),
    make: () => new SignalyardError({ code: 'SOME_CODE', message: 'm' }),
    makeSub: () => new AppError({ code: 'SOME_CODE', message: 'm' }),
  },
  {
    name: 'AbortedError',
    code: 'ABORTED',
    isInstance: (e) => AbortedError.isInstance(e),
    make: () => new AbortedError(),
    makeSub: () => new AppAbortedError(),
  },
  {
    name: 'ConfigError',
    code: 'CONFIG_INVALID',
    isInstance: (e) => ConfigError.isInstance(e),
    make: () => new ConfigError({ problems: [problem] }),
    makeSub: () => new AppConfigError({ problems: [problem] }),
  },
  {
    name: 'CheckpointConflictError',
    code: 'CHECKPOINT_CONFLICT',
    isInstance: (e) => CheckpointConflictError.isInstance(e),
    make: () => new CheckpointConflictError({ key: 'k', expected: 1, actual: 2 }),
    makeSub: () => new AppConflictError({ key: 'k', expected: 1, actual: 2 }),
  },
  {
    name: 'CheckpointDataError',
    code: 'CHECKPOINT_DATA_INVALID',
    isInstance: (e) => CheckpointDataError.isInstance(e),
    make: () => new CheckpointDataError({ path: '$.a', problem: 'NaN is not a JSON number' }),
    makeSub: () => new AppDataError({ path: '$.a', problem: 'NaN is not a JSON number' }),
  },
  {
    name: 'ToolArgumentsError',
    code: 'TOOL_ARGUMENTS_INVALID',
    isInstance: (e) => ToolArgumentsError.isInstance(e),
    make: () => new ToolArgumentsError({ toolName: 't', issues: [{ path: 'q', message: 'Required' }] }),
    makeSub: () => new AppToolArgumentsError({ toolName: 't', issues: [{ path: 'q', message: 'Required' }] }),
  },
  {
    name: 'InvalidArgumentError',
    code: 'ACTION_INVALID',
    isInstance: (e) => InvalidArgumentError.isInstance(e),
    make: () => new InvalidArgumentError({ code: 'ACTION_INVALID', message: 'm' }),
    makeSub: () => new AppInvalidArgumentError({ code: 'ACTION_INVALID', message: 'm' }),
  },
  {
    name: 'CheckpointStoreError',
    code: 'CHECKPOINT_KEY_INVALID',
    isInstance: (e) => CheckpointStoreError.isInstance(e),
    make: () => new CheckpointStoreError({ code: 'CHECKPOINT_KEY_INVALID', message: 'm' }),
    makeSub: () => new AppCheckpointStoreError({ code: 'CHECKPOINT_KEY_INVALID', message: 'm' }),
  },
  {
    name: 'ScriptedModelError',
    code: 'SCRIPT_EXHAUSTED',
    isInstance: (e) => ScriptedModelError.isInstance(e),
    make: () => new ScriptedModelError({ code: 'SCRIPT_EXHAUSTED', message: 'm' }),
    makeSub: () => new AppScriptedModelError({ code: 'SCRIPT_EXHAUSTED', message: 'm' }),
  },
  {
    name: 'ModelStreamError',
    code: 'MODEL_STREAM_INVALID',
    isInstance: (e) => ModelStreamError.isInstance(e),
    make: () => new ModelStreamError({ message: 'm' }),
    makeSub: () => new AppModelStreamError({ message: 'm', agentId: 'a' }),
  },
  {
    name: 'InboxError',
    code: 'INBOX_FULL',
    isInstance: (e) => InboxError.isInstance(e),
    make: () => new InboxError({ code: 'INBOX_FULL', message: 'm', retryAfterMs: 1000 }),
    makeSub: () => new AppInboxError({ code: 'LEASE_LOST', message: 'm' }),
  },
];

const base = rows[0]!;
const notErrors: readonly [string, unknown][] = [
  ['a plain Error', new Error('x')],
  ['a TypeError', new TypeError('x')],
  [
    'an Error with a matching code field',
    Object.assign(new Error('x'), { code: 'CONFIG_INVALID', name: 'ConfigError' }),
  ],
  ['a plain object', { code: 'ABORTED', message: 'x' }],
  ['null', null],
  ['undefined', undefined],
  ['a string', 'ConfigError'],
  ['a number', 42],
  ['a symbol', Symbol.for('signalyard.error')],
];

describe('static isInstance of every exported error class', () => {
  for (const row of rows) {
    describe(`${row.name}.isInstance`, () => {
      it(`matches ${row.name} instances`, () => {
        expect(row.isInstance(row.make())).toBe(true);
      });

      it(`matches instances of a user-defined subclass of ${row.name}`, () => {
        expect(row.isInstance(row.makeSub())).toBe(true);
      });

      if (row !== base) {
        for (const other of rows.filter((r) => r !== row)) {
          it(`does not match ${other.name} instances or their subclasses`, () => {
            expect(row.isInstance(other.make())).toBe(false);
            expect(row.isInstance(other.makeSub())).toBe(false);
          });
        }
      }

      it.each(notErrors)('does not match %s', (_title, value) => {
        expect(row.isInstance(value)).toBe(false);
      });
    });
  }

  it('SignalyardError.isInstance matches every exported error class and its subclasses', () => {
    for (const row of rows) {
      expect(SignalyardError.isInstance(row.make())).toBe(true);
      expect(SignalyardError.isInstance(row.makeSub())).toBe(true);
    }
  });

  it('every exported error is also a real Error', () => {
    for (const row of rows) expect(row.make()).toBeInstanceOf(Error);
  });
});

describe('errors across duplicate installs', () => {
  for (const row of rows.filter((r) => r !== base)) {
    it(`${row.name}.isInstance recognises an object carrying Symbol.for('signalyard.error.${row.name}') = true`, () => {
      const foreign = Object.assign(new Error('from another copy'), {
        [Symbol.for(`signalyard.error.${row.name}`)]: true,
      });
      expect(row.isInstance(foreign)).toBe(true);
      for (const other of rows.filter((r) => r !== row && r !== base)) expect(other.isInstance(foreign)).toBe(false);
    });
  }

  // STYLE.md ("Errors"): each class's isInstance checks Symbol.for('signalyard.error.<Name>').
  it("SignalyardError.isInstance recognises an object carrying Symbol.for('signalyard.error.SignalyardError') = true", () => {
    const foreign = Object.assign(new Error('from another copy'), {
      [Symbol.for('signalyard.error.SignalyardError')]: true,
      code: 'X',
    });
    expect(SignalyardError.isInstance(foreign)).toBe(true);
    expect(isSignalyardError(foreign, 'X')).toBe(true);
  });

  it('a marker that is present but not exactly true is not recognised', () => {
    for (const row of rows.filter((r) => r !== base)) {
      for (const value of ['true', 1, {}, false]) {
        expect(row.isInstance({ [Symbol.for(`signalyard.error.${row.name}`)]: value })).toBe(false);
      }
    }
  });

  it('errors made by a second, freshly loaded copy of core are recognised both ways, though instanceof fails', async () => {
    vi.resetModules();
    const copy = await import('@signalyard/core');
    expect(copy.ConfigError).not.toBe(ConfigError);

    const theirs = new copy.ConfigError({ problems: [problem] });
    expect(theirs).not.toBeInstanceOf(ConfigError);
    expect(ConfigError.isInstance(theirs)).toBe(true);
    expect(SignalyardError.isInstance(theirs)).toBe(true);
    expect(isSignalyardError(theirs, 'CONFIG_INVALID')).toBe(true);
    expect(AbortedError.isInstance(theirs)).toBe(false);

    const ours = new AbortedError();
    expect(copy.AbortedError.isInstance(ours)).toBe(true);
    expect(copy.isSignalyardError(ours, 'ABORTED')).toBe(true);
    expect(copy.ConfigError.isInstance(ours)).toBe(false);
  });
});

describe('isSignalyardError', () => {
  it('is true for every Signalyard error without a code filter', () => {
    for (const row of rows) expect(isSignalyardError(row.make())).toBe(true);
  });

  it('with a code, is true only when the code matches', () => {
    for (const row of rows) {
      expect(isSignalyardError(row.make(), row.code)).toBe(true);
      expect(isSignalyardError(row.make(), 'NOT_THIS_CODE')).toBe(false);
    }
  });

  it.each(notErrors)('is false for %s, with or without a code', (_title, value) => {
    expect(isSignalyardError(value)).toBe(false);
    expect(isSignalyardError(value, 'ABORTED')).toBe(false);
    expect(isSignalyardError(value, 'CONFIG_INVALID')).toBe(false);
  });
});

describe('hasErrorMarker', () => {
  const marker = Symbol.for('signalyard.error.MyError');

  it('is true for an object whose marker property is exactly true', () => {
    expect(hasErrorMarker({ [marker]: true }, marker)).toBe(true);
  });

  it('is false for another marker, a non-true marker value, or a non-object', () => {
    expect(hasErrorMarker({ [marker]: true }, Symbol.for('signalyard.error.OtherError'))).toBe(false);
    expect(hasErrorMarker({ [marker]: 'true' }, marker)).toBe(false);
    expect(hasErrorMarker({ [marker]: 1 }, marker)).toBe(false);
    expect(hasErrorMarker({}, marker)).toBe(false);
    for (const value of [null, undefined, 'x', 1, true, marker]) expect(hasErrorMarker(value, marker)).toBe(false);
  });

  it('lets a third-party subclass with its own marker tell its instances apart', () => {
    const myMarker = Symbol.for('signalyard.error.test.MyConfigError');
    class MyConfigError extends ConfigError {
      private readonly [myMarker] = true;
      static override isInstance(e: unknown): e is MyConfigError {
        return hasErrorMarker(e, myMarker);
      }
    }
    const mine = new MyConfigError({ problems: [problem] });
    expect(MyConfigError.isInstance(mine)).toBe(true);
    expect(MyConfigError.isInstance(new ConfigError({ problems: [problem] }))).toBe(false);
    expect(ConfigError.isInstance(mine)).toBe(true);
    expect(mine.code).toBe('CONFIG_INVALID');
  });
});

describe('code, name and cause', () => {
  it.each(rows.map((r) => [r.name, r] as const))('%s has its stable code and its class name as name', (name, row) => {
    const error = row.make();
    expect(error.code).toBe(row.code);
    expect(error.name).toBe(name);
  });

  it('a user-defined subclass is named after itself and keeps its parent code', () => {
    const error = new AppAbortedError();
    expect(error.name).toBe('AppAbortedError');
    expect(error.code).toBe('ABORTED');
  });

  it('SignalyardError keeps the code and message it is given', () => {
    const error = new SignalyardError({
      code: 'FSM_INVALID_TRANSITION',
      message: 'Invalid transition from "idle" via "finish"',
    });
    expect(error.code).toBe('FSM_INVALID_TRANSITION');
    expect(error.message).toBe('Invalid transition from "idle" via "finish"');
  });

  it('passes cause through to Error.cause', () => {
    const cause = new Error('root');
    expect(new SignalyardError({ code: 'X', message: 'm', cause }).cause).toBe(cause);
    expect(new AbortedError({ cause }).cause).toBe(cause);
    expect(new ConfigError({ problems: [problem], cause }).cause).toBe(cause);
  });

  it('keeps a non-Error cause, such as an abort reason string', () => {
    expect(new AbortedError({ cause: 'user pressed stop' }).cause).toBe('user pressed stop');
  });

  it('has no cause property when no cause is given', () => {
    expect('cause' in new SignalyardError({ code: 'X', message: 'm' })).toBe(false);
    expect('cause' in new AbortedError()).toBe(false);
  });
});

describe('AbortedError', () => {
  it('has code ABORTED and a default message', () => {
    const error = new AbortedError();
    expect(error.code).toBe('ABORTED');
    expect(error.message).toBe('The operation was aborted');
  });

  it('takes a custom message', () => {
    expect(new AbortedError({ message: 'run stopped by the caller' }).message).toBe('run stopped by the caller');
  });
});

describe('ConfigError', () => {
  const problems: ConfigProblem[] = [
    { path: 'agents[0].name', message: 'required', line: 3, column: 5 },
    { path: 'routing.bindings[2].match.peer.id', message: 'expected a string', line: 17 },
  ];

  it('has code CONFIG_INVALID and keeps every problem in order', () => {
    const error = new ConfigError({ problems });
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.problems).toEqual(problems);
  });

  it('problems are frozen, each problem too', () => {
    const error = new ConfigError({ problems });
    expect(Object.isFrozen(error.problems)).toBe(true);
    for (const p of error.problems) expect(Object.isFrozen(p)).toBe(true);
  });

  it('later changes to the caller’s problem list do not reach the error', () => {
    const mine: { path: string; message: string }[] = [{ path: 'a', message: 'bad' }];
    const error = new ConfigError({ problems: mine });
    mine.push({ path: 'b', message: 'worse' });
    mine[0]!.message = 'changed';
    expect(error.problems).toEqual([{ path: 'a', message: 'bad' }]);
  });

  it('message lists every problem as file:line: path: message', () => {
    const error = new ConfigError({ problems, file: 'crew.yaml' });
    expect(error.file).toBe('crew.yaml');
    expect(error.message).toContain('2 problems');
    expect(error.message).toContain('crew.yaml:3: agents[0].name: required');
    expect(error.message).toContain('crew.yaml:17: routing.bindings[2].match.peer.id: expected a string');
  });

  it('message says "1 problem" for a single problem', () => {
    expect(new ConfigError({ problems: [problem] }).message).toContain('(1 problem)');
  });

  it('message leaves out the file or the line when it is not known', () => {
    const error = new ConfigError({
      problems: [
        { path: 'a', message: 'no line' },
        { path: 'b', message: 'has a line', line: 4 },
      ],
      file: 'routing.toml',
    });
    expect(error.message).toContain('routing.toml: a: no line');
    expect(error.message).toContain('routing.toml:4: b: has a line');

    const noFile = new ConfigError({
      problems: [
        { path: 'a', message: 'no line' },
        { path: 'b', message: 'has a line', line: 4 },
      ],
    });
    expect(noFile.file).toBeUndefined();
    expect(noFile.message).toMatch(/^\s*a: no line$/m);
    expect(noFile.message).toMatch(/^\s*4: b: has a line$/m);
  });

  it('message names the root for a problem with an empty path', () => {
    expect(new ConfigError({ problems: [{ path: '', message: 'expected a mapping' }] }).message).toContain(
      '(root): expected a mapping',
    );
  });

  it('an explicit message replaces the generated one, the problems stay', () => {
    const error = new ConfigError({ problems, message: 'crew.yaml is invalid' });
    expect(error.message).toBe('crew.yaml is invalid');
    expect(error.problems).toHaveLength(2);
  });

  it('a user-defined subclass keeps CONFIG_INVALID and is matched by ConfigError.isInstance', () => {
    const error = new AppConfigError({ problems, file: 'pipeline.ts' });
    expect(error.code).toBe('CONFIG_INVALID');
    expect(ConfigError.isInstance(error)).toBe(true);
    expect(isSignalyardError(error, 'CONFIG_INVALID')).toBe(true);
    expect(error.problems).toEqual(problems);
    expect(error.file).toBe('pipeline.ts');
  });
});

describe('CheckpointConflictError', () => {
  it('carries key, expected and actual, and names them in the message', () => {
    const error = new CheckpointConflictError({ key: 'agent:main:main', expected: 3, actual: 4 });
    expect(error.code).toBe('CHECKPOINT_CONFLICT');
    expect(error.key).toBe('agent:main:main');
    expect(error.expected).toBe(3);
    expect(error.actual).toBe(4);
    expect(error.message).toContain('"agent:main:main"');
    expect(error.message).toContain('version 4');
    expect(error.message).toContain('expected version 3');
    expect(error.cause).toBeUndefined();
  });

  it('takes a message of its own and a cause, keeping key, versions and code', () => {
    const lost = new CheckpointConflictError({ key: 'k', expected: 1, actual: 2 });
    const error = new CheckpointConflictError({
      key: 'k',
      expected: 1,
      actual: 2,
      message: 'the tool ran',
      cause: lost,
    });
    expect(error.message).toBe('the tool ran');
    expect(error.cause).toBe(lost);
    expect(error).toMatchObject({ code: 'CHECKPOINT_CONFLICT', key: 'k', expected: 1, actual: 2 });
    expect(CheckpointConflictError.isInstance(error)).toBe(true);
  });
});

describe('CheckpointDataError', () => {
  it('carries the path and names the path and problem in the message', () => {
    const error = new CheckpointDataError({ path: '$.history[3].meta', problem: 'NaN is not a JSON number' });
    expect(error.code).toBe('CHECKPOINT_DATA_INVALID');
    expect(error.path).toBe('$.history[3].meta');
    expect(error.message).toContain('$.history[3].meta');
    expect(error.message).toContain('NaN is not a JSON number');
  });

  it('names the checkpoint key in the message when given', () => {
    expect(new CheckpointDataError({ path: '$', problem: 'p', key: 'sess:1' }).message).toContain('"sess:1"');
  });
});

describe('each core code is thrown by its owner class', () => {
  it('a bad signal kind, an empty action name and a foreign snapshot throw InvalidArgumentError', async () => {
    const core = await import('@signalyard/core');
    const bad: [() => unknown, string][] = [
      [() => core.signal('usr_message' as never), 'SIGNAL_KIND_INVALID'],
      [() => core.SignalKind.custom(''), 'SIGNAL_KIND_INVALID'],
      [() => core.Action.reject(''), 'ACTION_INVALID'],
      [() => new core.DirectStrategy().execute(''), 'ACTION_INVALID'],
      [() => new core.DirectStrategy().restore({ type: 'fsm' }), 'STRATEGY_SNAPSHOT_INVALID'],
      [
        () => core.defineTool({ name: '', input: undefined as never, execute: async () => null }),
        'TOOL_DEFINITION_INVALID',
      ],
    ];
    for (const [call, code] of bad) {
      let caught: unknown;
      try {
        call();
      } catch (error) {
        caught = error;
      }
      expect(InvalidArgumentError.isInstance(caught), code).toBe(true);
      expect((caught as InvalidArgumentError).code).toBe(code);
    }
  });

  it('a bad key, a bad version and a closed store throw CheckpointStoreError', async () => {
    const store = new (await import('@signalyard/core')).MemoryCheckpointStore();
    await expect(store.save('', {}, 0)).rejects.toSatisfy(
      (e) => CheckpointStoreError.isInstance(e) && e.code === 'CHECKPOINT_KEY_INVALID',
    );
    await expect(store.save('k', {}, -1)).rejects.toSatisfy(
      (e) => CheckpointStoreError.isInstance(e) && e.code === 'CHECKPOINT_VERSION_INVALID',
    );
    await store.close();
    await expect(store.load('k')).rejects.toSatisfy(
      (e) => CheckpointStoreError.isInstance(e) && e.code === 'CHECKPOINT_STORE_CLOSED',
    );
  });

  it('a code union narrows in a switch (type level)', () => {
    const describe = (e: InvalidArgumentError): string => {
      switch (e.code) {
        case 'SIGNAL_KIND_INVALID':
        case 'ACTION_INVALID':
        case 'STRATEGY_SNAPSHOT_INVALID':
        case 'TOOL_DEFINITION_INVALID':
        case 'CHAT_MODEL_INVALID':
        case 'CHAT_REQUEST_INVALID':
        case 'APPROVAL_ARGUMENT_INVALID':
        case 'CLOCK_INVALID':
          return e.code;
      }
    };
    expect(describe(new InvalidArgumentError({ code: 'ACTION_INVALID', message: 'm' }))).toBe('ACTION_INVALID');
    // @ts-expect-error a code the class does not own is a compile error
    new InvalidArgumentError({ code: 'NOT_A_CODE', message: 'm' });
  });
});

describe('error checks on hostile values', () => {
  it('hasErrorMarker, isInstance and isSignalyardError are false (never throw) for a revoked Proxy or throwing traps', () => {
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    const throwing = new Proxy(
      {},
      {
        has() {
          throw new Error('trap');
        },
        get() {
          throw new Error('trap');
        },
      },
    );
    for (const hostile of [proxy, throwing]) {
      expect(hasErrorMarker(hostile, Symbol.for('signalyard.error.SignalyardError'))).toBe(false);
      expect(SignalyardError.isInstance(hostile)).toBe(false);
      expect(isSignalyardError(hostile)).toBe(false);
    }
  });
});
