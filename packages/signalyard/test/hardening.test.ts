import { describe, expect, it } from 'vitest';
import {
  Action,
  DirectStrategy,
  MemoryCheckpointStore,
  SignalKind,
  signal,
  type ExecutionStrategy,
} from '@signalyard/core';
import { rejectsCode } from '@signalyard/test-utils';
import { createRunner, type EngineFn } from 'signalyard';
import { MAIN, stored, userTexts } from './support.js';

const engineRunner = (engine: EngineFn, store = new MemoryCheckpointStore()) =>
  createRunner({ store, agents: [{ id: 'main', engine }] });

describe('malformed options of handle and dispatch', () => {
  it.each([
    ['an object that is not an AbortSignal', { abortSignal: {} }],
    ['a string abortSignal', { abortSignal: 'x' }],
    ['null options', null],
    ['string options', 'fast'],
  ])('reject with RUNNER_INPUT_INVALID for %s (never a raw TypeError)', async (_, opts) => {
    const runner = engineRunner(async () => ({}));
    const bad = opts as never;
    const d = await rejectsCode(
      runner.dispatch(MAIN, signal(SignalKind.UserMessage, 'hi'), bad),
      'RUNNER_INPUT_INVALID',
    );
    expect(d.message).toContain('dispatch()');
    const h = await rejectsCode(runner.handle({ channel: 'cli', text: 'hi' }, bad), 'RUNNER_INPUT_INVALID');
    expect(h.message).toContain('handle()');
    await runner.close();
  });

  it('rejects an agentId that is not a string', async () => {
    const runner = engineRunner(async () => ({}));
    const error = await rejectsCode(
      runner.dispatch(MAIN, signal(SignalKind.UserMessage, 'hi'), { agentId: 7 as never }),
      'RUNNER_INPUT_INVALID',
    );
    expect(error.message).toContain('agentId');
    await runner.close();
  });
});

describe('exceptions that escape a turn', () => {
  it('an engine result with a throwing getter fails the turn with TURN_RESULT_INVALID and keeps the user message', async () => {
    const store = new MemoryCheckpointStore();
    const hostile = {
      get messages(): never {
        throw new Error('getter exploded');
      },
    };
    const runner = engineRunner(async () => hostile, store);
    const outcome = await runner.dispatch(MAIN, signal(SignalKind.UserMessage, 'keep me'));
    expect(outcome.status).toBe('failed');
    expect(outcome.error).toMatchObject({ code: 'TURN_RESULT_INVALID' });
    expect(outcome.error?.message).toContain('getter exploded');
    expect(userTexts((await stored(store, MAIN)).data.history)).toEqual(['keep me']);
    await runner.close();
  });

  it('an engine throwing a revoked Proxy fails with ENGINE_FAILED (not a lock error) and keeps the user message', async () => {
    const store = new MemoryCheckpointStore();
    const { proxy, revoke } = Proxy.revocable({}, {});
    revoke();
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the hostile value is the point
    const runner = engineRunner(() => Promise.reject(proxy), store);
    const outcome = await runner.dispatch(MAIN, signal(SignalKind.UserMessage, 'still here'));
    expect(outcome.status).toBe('failed');
    expect(outcome.error).toMatchObject({ code: 'ENGINE_FAILED' });
    expect(userTexts((await stored(store, MAIN)).data.history)).toEqual(['still here']);
    await runner.close();
  });

  it('a strategy whose snapshot() throws fails with ENGINE_FAILED, and the runner keeps serving', async () => {
    let broken = true;
    const strategy = (): ExecutionStrategy => {
      const direct = new DirectStrategy();
      return Object.assign(Object.create(direct) as ExecutionStrategy, {
        snapshot: () => {
          if (broken) throw new Error('snapshot exploded');
          return direct.snapshot();
        },
      });
    };
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          strategy,
          routes: [{ kind: SignalKind.Timer, action: Action.transition('x') }],
          engine: async () => ({}),
        },
      ],
    });
    const outcome = await runner.dispatch(MAIN, signal(SignalKind.Timer, {}));
    expect(outcome.status).toBe('failed');
    expect(outcome.error).toMatchObject({ code: 'ENGINE_FAILED' });
    expect(outcome.error?.message).toContain('snapshot exploded');
    broken = false;
    expect((await runner.dispatch(MAIN, signal(SignalKind.Timer, {}))).status).toBe('completed');
    await runner.close();
  });

  it('a strategy whose snapshot() throws during a turn fails it with ENGINE_FAILED, and the arriving user message is still saved (with the snapshot stored before)', async () => {
    const store = new MemoryCheckpointStore();
    let broken = false;
    const strategy = (): ExecutionStrategy => {
      const direct = new DirectStrategy();
      return Object.assign(Object.create(direct) as ExecutionStrategy, {
        snapshot: () => {
          if (broken) throw new Error('snapshot exploded');
          return direct.snapshot();
        },
      });
    };
    const runner = createRunner({ store, agents: [{ id: 'main', strategy, engine: async () => ({}) }] });
    expect((await runner.dispatch(MAIN, signal(SignalKind.UserMessage, 'first'))).status).toBe('completed');
    const before = await stored(store, MAIN);
    broken = true;
    const outcome = await runner.dispatch(MAIN, signal(SignalKind.UserMessage, 'second'));
    expect(outcome.status).toBe('failed');
    expect(outcome.error).toMatchObject({ code: 'ENGINE_FAILED' });
    expect(outcome.error?.message).toContain('snapshot exploded');
    const after = await stored(store, MAIN);
    expect(userTexts(after.data.history)).toEqual(['first', 'second']);
    expect(after.data.strategy).toEqual(before.data.strategy);
    expect(after.version).toBe(before.version + 1);
    await runner.close();
  });

  it('a strategy whose snapshot() starts throwing in the first turn of a session: the arrival is saved with the snapshot taken when it was loaded', async () => {
    const store = new MemoryCheckpointStore();
    let broken = false;
    const strategy = (): ExecutionStrategy => {
      const direct = new DirectStrategy();
      return Object.assign(Object.create(direct) as ExecutionStrategy, {
        snapshot: () => {
          if (broken) throw new Error('snapshot exploded');
          return direct.snapshot();
        },
      });
    };
    const engine: EngineFn = async () => {
      broken = true; // from now on every snapshot() throws, a fresh instance's too
      return { messages: [{ role: 'assistant', content: 'never saved' }] };
    };
    const runner = createRunner({ store, agents: [{ id: 'main', strategy, engine }] });
    const outcome = await runner.dispatch(MAIN, signal(SignalKind.UserMessage, 'hello'));
    expect(outcome).toMatchObject({ status: 'failed', error: { code: 'ENGINE_FAILED' } });
    const { data, version } = await stored(store, MAIN);
    expect(version).toBe(1);
    expect(data.history).toEqual([{ role: 'user', content: 'hello' }]);
    expect(data.strategy).toEqual(new DirectStrategy().snapshot());
    await runner.close();
  });

  it.each(['collect', 'interrupt'] as const)(
    "whenBusy: '%s' (the batch path): a snapshot() that starts throwing in a never-saved session's first turn still saves the arrivals, with the snapshot taken when it was loaded",
    async (whenBusy) => {
      const store = new MemoryCheckpointStore();
      let broken = false;
      const strategy = (): ExecutionStrategy => {
        const direct = new DirectStrategy();
        return Object.assign(Object.create(direct) as ExecutionStrategy, {
          snapshot: () => {
            if (broken) throw new Error('snapshot exploded');
            return direct.snapshot();
          },
        });
      };
      const engine: EngineFn = async () => {
        broken = true; // from now on every snapshot() throws, a fresh instance's too
        return { messages: [{ role: 'assistant', content: 'never saved' }] };
      };
      const runner = createRunner({ store, agents: [{ id: 'main', strategy, engine, whenBusy }] });
      const outcome = await runner.dispatch(MAIN, signal(SignalKind.UserMessage, 'hello'));
      expect(outcome).toMatchObject({ status: 'failed', error: { code: 'ENGINE_FAILED' } });
      expect(outcome.error?.message).toContain('snapshot exploded');
      const { data, version } = await stored(store, MAIN);
      expect(version).toBe(1);
      expect(data.history).toEqual([{ role: 'user', content: 'hello' }]);
      expect(data.strategy).toEqual(new DirectStrategy().snapshot());
      await runner.close();
    },
  );

  it('an engine returning a plain TurnResult (not a promise) is accepted', async () => {
    const runner = engineRunner((() => ({
      output: 'sync',
      messages: [{ role: 'assistant', content: 'ok' }],
    })) as never);
    const outcome = await runner.dispatch(MAIN, signal(SignalKind.UserMessage, 'hi'));
    expect(outcome).toMatchObject({ status: 'completed', output: 'sync' });
    await runner.close();
  });
});

describe('checkpoints with a malformed history', () => {
  it.each([
    ['null', [null]],
    ['numbers', [1, 2]],
    ['a message without content', [{ role: 'user' }]],
    ['an unknown role', [{ role: 'robot', content: 'x' }]],
  ])(
    'a history holding %s fails with CHECKPOINT_LOAD_FAILED naming the entry, and is left untouched',
    async (_, history) => {
      const store = new MemoryCheckpointStore();
      const data = { v: 1, agentId: 'main', strategy: { type: 'direct' }, history, engine: undefined };
      await store.save(MAIN, data, 0);
      const runner = engineRunner(async () => ({}), store);
      const outcome = await runner.dispatch(MAIN, signal(SignalKind.UserMessage, 'hi'));
      expect(outcome.status).toBe('failed');
      expect(outcome.error).toMatchObject({ code: 'CHECKPOINT_LOAD_FAILED' });
      expect(outcome.error?.message).toContain('history[0]');
      expect((await store.load(MAIN))?.version).toBe(1);
      await runner.close();
    },
  );
});
