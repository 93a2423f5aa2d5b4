// What the Runner does with a SessionLock's `lockSignal`: a lock lost mid-turn aborts the turn
// and fails the signal with SESSION_LOCK_FAILED; a lock that cannot be taken fails it the same way.
import { describe, expect, it } from 'vitest';
import {
  AbortedError,
  MemoryCheckpointStore,
  SignalKind,
  SignalyardError,
  signal,
  type SessionLock,
} from '@signalyard/core';
import { RunnerError, createRunner, type Outcome } from 'signalyard';
import { MAIN, assistant, heldEngine, echoEngine, stored, user } from './support.js';

/** A SessionLock whose hold the test can take away while `fn` runs, as a lost database connection would. */
function losableLock(options: { rejectWhenLost?: boolean } = {}): {
  readonly lock: SessionLock;
  readonly signals: AbortSignal[];
  lose(reason: unknown): void;
} {
  const signals: AbortSignal[] = [];
  let current: AbortController | undefined;
  const lock: SessionLock = {
    async withLock<T>(_key: string, fn: (lockSignal?: AbortSignal) => Promise<T>): Promise<T> {
      const controller = new AbortController();
      current = controller;
      signals.push(controller.signal);
      try {
        const value = await fn(controller.signal);
        if (controller.signal.aborted && options.rejectWhenLost !== false) throw controller.signal.reason;
        return value;
      } finally {
        current = undefined;
      }
    },
  };
  return {
    lock,
    signals,
    lose: (reason) => {
      current?.abort(reason);
    },
  };
}

const lostError = (): SignalyardError =>
  new SignalyardError({ code: 'TEST_LOCK_LOST', message: 'the lock connection closed' });

function expectLockFailed(outcome: Outcome, cause: unknown): void {
  expect(outcome.status).toBe('failed');
  expect(RunnerError.isInstance(outcome.error)).toBe(true);
  expect(outcome.error?.code).toBe('SESSION_LOCK_FAILED');
  expect(outcome.error?.cause).toBe(cause);
  expect(outcome.error?.message).toContain(JSON.stringify(MAIN));
}

describe('a SessionLock lost while a turn runs', () => {
  it("aborts the turn: the engine's abortSignal fires, its result is discarded, and the outcome is failed with SESSION_LOCK_FAILED", async () => {
    const store = new MemoryCheckpointStore();
    const held = heldEngine();
    const losable = losableLock();
    const runner = createRunner({ store, lock: losable.lock, agents: [{ id: 'main', engine: held.engine }] });
    const first = runner.handle({ channel: 'cli', text: 'one' });
    (await held.turn(0)).finish({ messages: [assistant('reply one')] });
    expect((await first).status).toBe('completed');
    const pending = runner.handle({ channel: 'cli', text: 'two' });
    const turn = await held.turn(1);
    const reason = lostError();
    losable.lose(reason);
    expect(turn.ctx.abortSignal.aborted).toBe(true);
    expect(AbortedError.isInstance(turn.ctx.abortSignal.reason)).toBe(true);
    expect((turn.ctx.abortSignal.reason as Error).cause).toBe(reason);
    // The engine answers anyway: too late, nothing of it is kept.
    turn.finish({ messages: [assistant('reply two')], state: { changed: true } });
    expectLockFailed(await pending, reason);
    const { data } = await stored(store, MAIN);
    expect(data.history).not.toContainEqual(assistant('reply two'));
    expect(data.engine).toBeUndefined();
    // The runner goes on serving the session.
    const next = runner.handle({ channel: 'cli', text: 'three' });
    (await held.turn(2)).finish({ messages: [assistant('reply three')] });
    expect((await next).status).toBe('completed');
    expect((await stored(store, MAIN)).data.history).toContainEqual(user('three'));
    await runner.close();
  });

  it('is a failure even when the lock resolves after its lockSignal fired (the cause is the signal reason)', async () => {
    const held = heldEngine();
    const losable = losableLock({ rejectWhenLost: false });
    const runner = createRunner({ lock: losable.lock, agents: [{ id: 'main', engine: held.engine }] });
    const pending = runner.handle({ channel: 'cli', text: 'one' });
    await held.turn(0);
    const reason = new Error('connection reset');
    losable.lose(reason);
    expectLockFailed(await pending, reason);
    await runner.close();
  });

  it('a lock already lost when fn starts: the signal is not applied', async () => {
    const reason = lostError();
    const lock: SessionLock = {
      async withLock<T>(_key: string, fn: (lockSignal?: AbortSignal) => Promise<T>): Promise<T> {
        const controller = new AbortController();
        controller.abort(reason);
        await fn(controller.signal);
        throw reason;
      },
    };
    const { engine, seen } = echoEngine();
    const runner = createRunner({ lock, agents: [{ id: 'main', engine }] });
    expectLockFailed(await runner.handle({ channel: 'cli', text: 'one' }), reason);
    expect(seen).toEqual([]);
    await runner.close();
  });

  it('a lock that keeps its hold changes nothing: its lockSignal never fires', async () => {
    const held = heldEngine();
    const losable = losableLock();
    const runner = createRunner({ lock: losable.lock, agents: [{ id: 'main', engine: held.engine }] });
    const pending = runner.handle({ channel: 'cli', text: 'one' });
    (await held.turn(0)).finish({ messages: [assistant('kept')] });
    expect((await pending).status).toBe('completed');
    expect(losable.signals[0]?.aborted).toBe(false);
    await runner.close();
  });
});

describe('locks and the lockSignal parameter', () => {
  it('a lock written before lockSignal existed (it calls fn() with no argument) still works', async () => {
    const keys: string[] = [];
    const lock: SessionLock = {
      async withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
        keys.push(key);
        return fn();
      },
    };
    const { engine } = echoEngine();
    const runner = createRunner({ lock, agents: [{ id: 'main', engine }] });
    const outcome = await runner.handle({ channel: 'cli', text: 'one' });
    expect(outcome.status).toBe('completed');
    expect(keys).toEqual([MAIN]);
    await runner.close();
  });

  it('a lock that cannot be taken fails the signal with SESSION_LOCK_FAILED, its error (a Signalyard one too) as the cause', async () => {
    const timeout = new SignalyardError({ code: 'TEST_LOCK_TIMEOUT', message: 'still held elsewhere' });
    const runner = createRunner({
      lock: {
        withLock: async () => {
          throw timeout;
        },
      },
      agents: [{ id: 'main', engine: echoEngine().engine }],
    });
    expectLockFailed(await runner.dispatch(MAIN, signal(SignalKind.UserMessage, 'one')), timeout);
    await runner.close();
  });

  it('a SESSION_LOCK_FAILED error from the lock itself is kept as it is', async () => {
    const failure = new RunnerError({ code: 'SESSION_LOCK_FAILED', message: 'no lock today' });
    const runner = createRunner({
      lock: {
        withLock: async () => {
          throw failure;
        },
      },
      agents: [{ id: 'main', engine: echoEngine().engine }],
    });
    const outcome = await runner.dispatch(MAIN, signal(SignalKind.UserMessage, 'one'));
    expect(outcome.status).toBe('failed');
    expect(outcome.error).toBe(failure);
    await runner.close();
  });
});
