import { describe, expect, it } from 'vitest';
import {
  Action,
  CheckpointConflictError,
  MemoryCheckpointStore,
  SignalKind,
  signal,
  type ChatMessage,
  type CheckpointStore,
  type SessionLock,
} from '@signalyard/core';
import { createRunner, type AgentDefinition, type SessionCheckpointV1, type TurnContext } from 'signalyard';
import {
  FINISH,
  MAIN,
  START,
  assistant,
  deferred,
  heldEngine,
  phaseFsm,
  phaseRoutes,
  recordingLock,
  stored,
  user,
  wrapStore,
} from './support.js';

/** An FSM agent whose engine echoes and counts its turns in its state. */
function countingAgent(seen: TurnContext[] = []): AgentDefinition {
  const definition = phaseFsm();
  return {
    id: 'main',
    strategy: () => definition.create(),
    routes: [...phaseRoutes],
    engine: async (ctx) => {
      seen.push(ctx);
      const turns = ((ctx.state as { turns?: number } | undefined)?.turns ?? 0) + 1;
      return { messages: [assistant(`echo ${String(ctx.history.at(-1)?.content)}`)], state: { turns } };
    },
  };
}

describe('a checkpoint after every applied signal', () => {
  it('stores { v: 1, agentId, strategy, history, engine, cause } and bumps the version once per signal', async () => {
    const store = new MemoryCheckpointStore();
    const runner = createRunner({ store, agents: [countingAgent()] });

    await runner.handle({ channel: 'cli', text: 'hi' });
    expect(await stored(store, MAIN)).toEqual({
      version: 1,
      data: {
        v: 1,
        agentId: 'main',
        strategy: { type: 'fsm', current_state: 'idle' },
        history: [user('hi'), assistant('echo hi')],
        engine: { turns: 1 },
        cause: {
          at: expect.any(String),
          signal: { kind: 'user_message', text: 'hi', payload: { channel: 'cli', text: 'hi' } },
          status: 'completed',
          summary: {
            status: 'completed',
            action: 'continue',
            handoffs: [],
            toolCalls: [],
            approvals: [],
            reply: 'echo hi',
            fsmState: 'idle',
          },
        },
      },
    });

    await runner.dispatch(MAIN, signal(START));
    expect(await stored(store, MAIN)).toMatchObject({ version: 2, data: { strategy: { current_state: 'busy' } } });

    expect((await runner.handle({ channel: 'cli', text: 'gated' })).status).toBe('rejected');
    expect(await stored(store, MAIN)).toMatchObject({
      version: 3,
      data: { history: [user('hi'), assistant('echo hi'), user('gated')], engine: { turns: 1 } },
    });

    await runner.dispatch(MAIN, signal(FINISH));
    await runner.handle({ channel: 'cli', text: 'again' });
    expect(await stored(store, MAIN)).toEqual({
      version: 5,
      data: {
        v: 1,
        agentId: 'main',
        strategy: { type: 'fsm', current_state: 'idle' },
        history: [user('hi'), assistant('echo hi'), user('gated'), user('again'), assistant('echo again')],
        engine: { turns: 2 },
        cause: {
          at: expect.any(String),
          signal: { kind: 'user_message', text: 'again', payload: { channel: 'cli', text: 'again' } },
          status: 'completed',
          summary: expect.objectContaining({ status: 'completed', reply: 'echo again', fsmState: 'idle' }),
        },
      },
    });
    await runner.close();
  });

  it('a new runner over the same store continues every session: FSM state, history and engine state', async () => {
    const store = new MemoryCheckpointStore();
    const first = createRunner({ store, agents: [countingAgent()] });
    await first.dispatch('agent:main:a', signal(SignalKind.UserMessage, 'a1'));
    await first.dispatch('agent:main:a', signal(START));
    await first.dispatch('agent:main:b', signal(SignalKind.UserMessage, 'b1'));
    await first.close();

    const seen: TurnContext[] = [];
    const second = createRunner({ store, agents: [countingAgent(seen)] });
    expect(await second.session('agent:main:a')).toMatchObject({
      version: 2,
      strategy: { current_state: 'busy' },
      busy: false,
      queued: 0,
    });
    expect((await second.dispatch('agent:main:a', signal(SignalKind.UserMessage, 'a2'))).status).toBe('rejected');
    expect((await second.dispatch('agent:main:b', signal(SignalKind.UserMessage, 'b2'))).status).toBe('completed');
    expect(seen[0]?.history).toEqual([user('b1'), assistant('echo b1'), user('b2')]);
    expect(seen[0]?.state).toEqual({ turns: 1 });
    expect((await stored(store, 'agent:main:b')).data.engine).toEqual({ turns: 2 });
    await second.dispatch('agent:main:a', signal(FINISH));
    expect((await second.dispatch('agent:main:a', signal(SignalKind.UserMessage, 'a3'))).status).toBe('completed');
    expect((await stored(store, 'agent:main:a')).data.history).toEqual([
      user('a1'),
      assistant('echo a1'),
      user('a2'),
      user('a3'),
      assistant('echo a3'),
    ]);
    await second.close();
  });
});

describe('compare-and-set conflicts: reload, re-route, re-apply — never overwrite', () => {
  it('a write by another process between two signals survives, and the new signal is applied on top of it', async () => {
    const store = new MemoryCheckpointStore();
    const seen: TurnContext[] = [];
    const runner = createRunner({ store, agents: [countingAgent(seen)] });
    await runner.handle({ channel: 'cli', text: 'one' });

    // Another process writes behind the runner's back.
    const current = await stored(store, MAIN);
    await store.save(
      MAIN,
      { ...current.data, history: [...current.data.history, assistant('written elsewhere')], engine: { turns: 10 } },
      current.version,
    );

    expect((await runner.handle({ channel: 'cli', text: 'two' })).status).toBe('completed');
    const after = await stored(store, MAIN);
    expect(after.version).toBe(3);
    expect(after.data.history).toEqual([
      user('one'),
      assistant('echo one'),
      assistant('written elsewhere'),
      user('two'),
      assistant('echo two'),
    ]);
    expect(after.data.engine).toEqual({ turns: 11 });
    // The signal was re-applied over the reloaded state.
    expect(seen.at(-1)?.history).toEqual([
      user('one'),
      assistant('echo one'),
      assistant('written elsewhere'),
      user('two'),
    ]);
    await runner.close();
  });

  it('re-routes after reloading: another process moved the FSM, so the re-applied message is gated', async () => {
    const store = new MemoryCheckpointStore();
    const runner = createRunner({ store, agents: [countingAgent()] });
    await runner.handle({ channel: 'cli', text: 'one' });
    const current = await stored(store, MAIN);
    await store.save(MAIN, { ...current.data, strategy: { type: 'fsm', current_state: 'busy' } }, current.version);

    const outcome = await runner.handle({ channel: 'cli', text: 'two' });
    expect(outcome).toMatchObject({
      status: 'rejected',
      action: Action.reject('busy'),
      decidedBy: { tier: 'strategy' },
    });
    const after = await stored(store, MAIN);
    expect(after.data.strategy).toEqual({ type: 'fsm', current_state: 'busy' });
    expect(after.data.history).toEqual([user('one'), assistant('echo one'), user('two')]);
    expect(after.data.engine).toEqual({ turns: 1 });
    await runner.close();
  });

  it('a save that loses to a competing write is retried on top of that write', async () => {
    const inner = new MemoryCheckpointStore();
    let injected = false;
    const store = wrapStore(inner, {
      save: async (key, data, expected, next) => {
        if (!injected && expected === 1) {
          injected = true;
          const current = await stored(inner, key);
          await inner.save(
            key,
            { ...current.data, history: [...current.data.history, assistant('competing')] },
            current.version,
          );
          throw new CheckpointConflictError({ key, expected, actual: current.version + 1 });
        }
        return next();
      },
    });
    const runner = createRunner({ store, agents: [countingAgent()] });
    await runner.handle({ channel: 'cli', text: 'one' });
    expect((await runner.handle({ channel: 'cli', text: 'two' })).status).toBe('completed');
    const after = await stored(inner, MAIN);
    expect(after.version).toBe(3);
    expect(after.data.history).toEqual([
      user('one'),
      assistant('echo one'),
      assistant('competing'),
      user('two'),
      assistant('echo two'),
    ]);
    await runner.close();
  });

  it('persistent conflicts fail with CHECKPOINT_CONFLICT after 3 retries, and the competing writes are kept', async () => {
    const inner = new MemoryCheckpointStore();
    let attempts = 0;
    let hostile = false;
    const store = wrapStore(inner, {
      save: async (key, data, expected, next) => {
        if (!hostile) return next();
        attempts++;
        const current = await stored(inner, key);
        await inner.save(
          key,
          { ...current.data, history: [...current.data.history, assistant(`rival ${attempts}`)] },
          current.version,
        );
        throw new CheckpointConflictError({ key, expected, actual: current.version + 1 });
      },
    });
    const seen: TurnContext[] = [];
    const runner = createRunner({ store, agents: [countingAgent(seen)] });
    await runner.handle({ channel: 'cli', text: 'one' });
    hostile = true;
    const outcome = await runner.handle({ channel: 'cli', text: 'two' });
    expect(outcome.status).toBe('failed');
    expect(outcome.error?.code).toBe('CHECKPOINT_CONFLICT');
    expect(CheckpointConflictError.isInstance(outcome.error)).toBe(true);
    expect(attempts).toBe(4);
    expect(seen).toHaveLength(5);
    const after = await stored(inner, MAIN);
    expect(after.data.history).toEqual([
      user('one'),
      assistant('echo one'),
      assistant('rival 1'),
      assistant('rival 2'),
      assistant('rival 3'),
      assistant('rival 4'),
    ]);
    // The runner goes on once the rival stops.
    hostile = false;
    expect((await runner.handle({ channel: 'cli', text: 'three' })).status).toBe('completed');
    expect(userTexts(await stored(inner, MAIN))).toEqual(['one', 'three']);
    await runner.close();
  });
});

const userTexts = (c: { data: SessionCheckpointV1 }): string[] =>
  c.data.history.filter((m) => m.role === 'user').map((m) => m.content);

describe('checkpoints the runner cannot read or write', () => {
  it('an unknown format version fails with CHECKPOINT_FORMAT_UNSUPPORTED and leaves the checkpoint untouched', async () => {
    const store = new MemoryCheckpointStore();
    await store.save(
      MAIN,
      { v: 2, agentId: 'main', strategy: { type: 'direct' }, history: [], engine: null, more: 'from the future' },
      0,
    );
    const before = await store.load(MAIN);
    const ran: string[] = [];
    const runner = createRunner({
      store,
      agents: [
        {
          id: 'main',
          engine: async (ctx) => {
            ran.push(ctx.sessionKey);
            return {};
          },
        },
      ],
    });
    const outcome = await runner.handle({ channel: 'cli', text: 'hi' });
    expect(outcome.status).toBe('failed');
    expect(outcome.error?.code).toBe('CHECKPOINT_FORMAT_UNSUPPORTED');
    expect(outcome.error?.message).toContain('v=2');
    expect(ran).toEqual([]);
    expect(await store.load(MAIN)).toEqual(before);
    // Asking again is reported again, still without touching it; other sessions are served.
    expect((await runner.handle({ channel: 'cli', text: 'again' })).error?.code).toBe('CHECKPOINT_FORMAT_UNSUPPORTED');
    expect(await store.load(MAIN)).toEqual(before);
    expect((await runner.dispatch('agent:main:other', signal(SignalKind.UserMessage, 'x'))).status).toBe('completed');
    expect(ran).toEqual(['agent:main:other']);
    await runner.close();
  });

  it.each([
    { what: 'a checkpoint that is not an object', data: 'v1' },
    { what: 'a checkpoint that is an array', data: [1] },
    { what: 'a checkpoint without v', data: { agentId: 'main', strategy: { type: 'direct' }, history: [] } },
    { what: 'an empty agentId', data: { v: 1, agentId: '', strategy: { type: 'direct' }, history: [] } },
    { what: 'a strategy that is not a snapshot', data: { v: 1, agentId: 'main', strategy: 'direct', history: [] } },
    {
      what: 'a history that is not a list',
      data: { v: 1, agentId: 'main', strategy: { type: 'direct' }, history: {} },
    },
  ])('$what is reported as CHECKPOINT_FORMAT_UNSUPPORTED, not guessed', async ({ data }) => {
    const store = new MemoryCheckpointStore();
    await store.save(MAIN, data, 0);
    const runner = createRunner({ store, agents: [{ id: 'main', engine: async () => ({}) }] });
    const outcome = await runner.handle({ channel: 'cli', text: 'hi' });
    expect(outcome.error?.code).toBe('CHECKPOINT_FORMAT_UNSUPPORTED');
    expect((await store.load(MAIN))?.version).toBe(1);
    await runner.close();
  });

  it('engine state that is not JSON fails with CHECKPOINT_DATA_INVALID; the user message is still saved, the turn is not', async () => {
    const store = new MemoryCheckpointStore();
    let bad = false;
    const runner = createRunner({
      store,
      agents: [
        {
          id: 'main',
          strategy: () => phaseFsm().create(),
          engine: async () =>
            bad
              ? { messages: [assistant('big')], state: { n: 10n }, actions: [Action.transition('start')] }
              : { messages: [assistant('ok')], state: { n: 1 } },
        },
      ],
    });
    await runner.handle({ channel: 'cli', text: 'one' });
    bad = true;
    const outcome = await runner.handle({ channel: 'cli', text: 'two' });
    expect(outcome.status).toBe('failed');
    expect(outcome.error?.code).toBe('CHECKPOINT_DATA_INVALID');
    const { data } = await stored(store, MAIN);
    expect(data.history).toEqual([user('one'), assistant('ok'), user('two')]);
    expect(data.engine).toEqual({ n: 1 });
    expect(data.strategy).toEqual({ type: 'fsm', current_state: 'idle' });
    bad = false;
    expect((await runner.handle({ channel: 'cli', text: 'three' })).status).toBe('completed');
    expect((await runner.session(MAIN))?.strategy).toEqual({ type: 'fsm', current_state: 'idle' });
    await runner.close();
  });

  it('a store whose save throws fails the signal and keeps the last good checkpoint', async () => {
    const inner = new MemoryCheckpointStore();
    const diskFull = new Error('disk full');
    let broken = false;
    const store = wrapStore(inner, {
      save: async (_key, _data, _expected, next) => {
        if (broken) throw diskFull;
        return next();
      },
    });
    const runner = createRunner({ store, agents: [countingAgent()] });
    await runner.handle({ channel: 'cli', text: 'one' });
    const good = await stored(inner, MAIN);
    broken = true;
    const outcome = await runner.handle({ channel: 'cli', text: 'two' });
    expect(outcome.status).toBe('failed');
    expect(outcome.error?.cause).toBe(diskFull);
    expect(await stored(inner, MAIN)).toEqual(good);
    broken = false;
    expect((await runner.handle({ channel: 'cli', text: 'three' })).status).toBe('completed');
    expect((await stored(inner, MAIN)).data.engine).toEqual({ turns: 2 });
    await runner.close();
  });

  it('a store whose load throws fails the signal, and the runner goes on', async () => {
    const inner = new MemoryCheckpointStore();
    const unreachable = new Error('connection refused');
    let broken = true;
    const store = wrapStore(inner, {
      load: async (_key, next) => {
        if (broken) throw unreachable;
        return next();
      },
    });
    const runner = createRunner({ store, agents: [countingAgent()] });
    const outcome = await runner.handle({ channel: 'cli', text: 'one' });
    expect(outcome.status).toBe('failed');
    expect(outcome.error?.cause).toBe(unreachable);
    broken = false;
    expect((await runner.handle({ channel: 'cli', text: 'two' })).status).toBe('completed');
    await runner.close();
  });
});

describe('with a SessionLock', () => {
  it("runs each signal's load, apply and save inside lock.withLock(sessionKey)", async () => {
    const inner = new MemoryCheckpointStore();
    const recording = recordingLock();
    const ops: { op: string; key: string; holding: string | undefined }[] = [];
    const store: CheckpointStore = wrapStore(inner, {
      load: (key, next) => {
        ops.push({ op: 'load', key, holding: recording.holding });
        return next();
      },
      save: (key, _data, _expected, next) => {
        ops.push({ op: 'save', key, holding: recording.holding });
        return next();
      },
    });
    const runner = createRunner({ store, lock: recording.lock, agents: [countingAgent()] });
    await runner.dispatch('agent:main:a', signal(SignalKind.UserMessage, 'a1'));
    await runner.dispatch('agent:main:b', signal(SignalKind.UserMessage, 'b1'));
    await runner.dispatch('agent:main:a', signal(START));
    expect(recording.calls.map((c) => c.key)).toEqual(['agent:main:a', 'agent:main:b', 'agent:main:a']);
    for (const call of recording.calls) expect(call.abortSignal).toBeInstanceOf(AbortSignal);
    expect(ops.filter((o) => o.op === 'save').map((o) => o.key)).toEqual([
      'agent:main:a',
      'agent:main:b',
      'agent:main:a',
    ]);
    for (const op of ops) expect(op.holding).toBe(op.key);
    await runner.close();
  });

  it('loads inside the lock, so a write by another process between signals is seen without a conflict', async () => {
    const inner = new MemoryCheckpointStore();
    let saves = 0;
    const store = wrapStore(inner, {
      save: (_key, _data, _expected, next) => {
        saves++;
        return next();
      },
    });
    const seen: TurnContext[] = [];
    const runner = createRunner({ store, lock: recordingLock().lock, agents: [countingAgent(seen)] });
    await runner.handle({ channel: 'cli', text: 'one' });
    const current = await stored(inner, MAIN);
    await inner.save(
      MAIN,
      { ...current.data, history: [...current.data.history, assistant('elsewhere')] },
      current.version,
    );
    await runner.handle({ channel: 'cli', text: 'two' });
    expect(seen).toHaveLength(2);
    expect(saves).toBe(2);
    expect(seen[1]?.history).toEqual([user('one'), assistant('echo one'), assistant('elsewhere'), user('two')]);
    await runner.close();
  });

  it('a lock that cannot be taken fails the signal with its error', async () => {
    const timeout = new Error('lock timeout');
    const runner = createRunner({
      lock: {
        withLock: async () => {
          throw timeout;
        },
      },
      agents: [countingAgent()],
    });
    const outcome = await runner.handle({ channel: 'cli', text: 'one' });
    expect(outcome.status).toBe('failed');
    expect(outcome.error?.cause).toBe(timeout);
    await runner.close();
  });
});

describe('more checkpoint edge cases', () => {
  it("a signal waiting for the lock is stopped by the caller's abortSignal without running", async () => {
    const released = deferred();
    const ran: string[] = [];
    const lock: SessionLock = {
      withLock: async (_key, fn, opts) => {
        await new Promise<void>((resolve, reject) => {
          opts?.abortSignal?.addEventListener('abort', () => {
            reject(new Error('gave up waiting for the lock'));
          });
          void released.promise.then(resolve);
        });
        return fn();
      },
    };
    const runner = createRunner({
      lock,
      agents: [
        {
          id: 'main',
          engine: async (ctx) => {
            ran.push(ctx.sessionKey);
            return {};
          },
        },
      ],
    });
    const controller = new AbortController();
    const pending = runner.handle({ channel: 'cli', text: 'hi' }, { abortSignal: controller.signal });
    controller.abort();
    expect((await pending).status).toBe('stopped');
    expect(ran).toEqual([]);
    released.resolve();
    await runner.close();
  });

  it('non-JSON engine state from a signal without a user message fails with CHECKPOINT_DATA_INVALID and writes nothing', async () => {
    const store = new MemoryCheckpointStore();
    const runner = createRunner({
      store,
      agents: [
        {
          id: 'main',
          routes: [{ kind: SignalKind.custom('tick'), action: Action.Continue }],
          engine: async (ctx) => ({
            state: ctx.signal.kind === SignalKind.UserMessage ? { ok: 1 } : { bad: Number.NaN },
          }),
        },
      ],
    });
    await runner.handle({ channel: 'cli', text: 'hi' });
    const before = await store.load(MAIN);
    const outcome = await runner.dispatch(MAIN, signal(SignalKind.custom('tick')));
    expect(outcome.status).toBe('failed');
    expect(outcome.error?.code).toBe('CHECKPOINT_DATA_INVALID');
    expect(await store.load(MAIN)).toEqual(before);
    await runner.close();
  });

  it('when even the user message cannot be saved after CHECKPOINT_DATA_INVALID, the outcome still reports CHECKPOINT_DATA_INVALID', async () => {
    const inner = new MemoryCheckpointStore();
    let saves = 0;
    const store = wrapStore(inner, {
      save: (_key, _data, _expected, next) => {
        saves++;
        if (saves === 3) return Promise.reject(new Error('store went away'));
        return next();
      },
    });
    let turn = 0;
    const runner = createRunner({
      store,
      agents: [{ id: 'main', engine: async () => (++turn === 2 ? { state: 1n } : { state: turn }) }],
    });
    await runner.handle({ channel: 'cli', text: 'one' });
    const outcome = await runner.handle({ channel: 'cli', text: 'two' });
    expect(outcome.status).toBe('failed');
    expect(outcome.error?.code).toBe('CHECKPOINT_DATA_INVALID');
    expect((await stored(inner, MAIN)).data.history).toEqual([user('one')]);
    expect((await runner.handle({ channel: 'cli', text: 'three' })).status).toBe('completed');
    expect((await stored(inner, MAIN)).data.history).toEqual([user('one'), user('three')]);
    await runner.close();
  });

  it('with more than 10,000 live sessions, idle ones are dropped from memory and continue from their checkpoints', async () => {
    const store = new MemoryCheckpointStore();
    const seen: TurnContext[] = [];
    const runner = createRunner({
      store,
      agents: [
        {
          id: 'main',
          engine: async (ctx) => {
            if (ctx.sessionKey === 'agent:main:s0') seen.push(ctx);
            return {};
          },
        },
      ],
    });
    await runner.dispatch('agent:main:s0', signal(SignalKind.UserMessage, 'first'));
    await Promise.all(
      Array.from({ length: 10_050 }, (_, i) => runner.dispatch(`agent:main:s${i + 1}`, signal(SignalKind.Timer))),
    );
    await runner.dispatch('agent:main:s0', signal(SignalKind.UserMessage, 'second'));
    expect(seen[1]?.history).toEqual([user('first'), user('second')]);
    expect((await stored(store, 'agent:main:s0')).version).toBe(2);
    await runner.close();
  });

  it('session() of a session that could not be loaded shows version 0 and a fresh strategy snapshot', async () => {
    const runner = createRunner({
      agents: [{ id: 'main', strategy: () => phaseFsm().create(), engine: async () => ({}) }],
      plugins: [
        {
          name: 'broken',
          setup: () => {
            throw new Error('no');
          },
        },
      ],
    });
    expect((await runner.handle({ channel: 'cli', text: 'hi' })).status).toBe('failed');
    expect(await runner.session(MAIN)).toMatchObject({
      version: 0,
      strategy: { type: 'fsm', current_state: 'idle' },
      history: [],
      busy: false,
      queued: 0,
    });
    await runner.close();
  });
});

describe('session(key)', () => {
  it('is undefined for a session never seen', async () => {
    const runner = createRunner({ agents: [countingAgent()] });
    expect(await runner.session('agent:main:nobody')).toBeUndefined();
    await runner.close();
  });

  it('shows version 0, the initial strategy and an empty history for a session seen but never saved', async () => {
    const runner = createRunner({ agents: [countingAgent()] });
    expect((await runner.dispatch(MAIN, signal(SignalKind.Timer))).status).toBe('unrouted');
    expect(await runner.session(MAIN)).toEqual({
      sessionKey: MAIN,
      agentId: 'main',
      version: 0,
      strategy: { type: 'fsm', current_state: 'idle' },
      history: [],
      engineState: undefined,
      pendingApprovals: [],
      busy: false,
      queued: 0,
    });
    await runner.close();
  });

  it('shows busy and the number of queued signals while a turn is in flight', async () => {
    const held = heldEngine();
    const runner = createRunner({ agents: [{ id: 'main', engine: held.engine }] });
    const a = runner.dispatch(MAIN, signal(SignalKind.UserMessage, 'a'));
    const turnA = await held.turn(0);
    const b = runner.dispatch(MAIN, signal(SignalKind.UserMessage, 'b'));
    const c = runner.dispatch(MAIN, signal(SignalKind.UserMessage, 'c'));
    expect(await runner.session(MAIN)).toMatchObject({ version: 0, busy: true, queued: 2 });
    turnA.finish({ state: { a: true } });
    await a;
    const turnB = await held.turn(1);
    expect(await runner.session(MAIN)).toMatchObject({
      version: 1,
      busy: true,
      queued: 1,
      history: [user('a')],
      engineState: { a: true },
      pendingApprovals: [],
    });
    turnB.finish();
    (await held.turn(2)).finish();
    await Promise.all([b, c]);
    expect(await runner.session(MAIN)).toMatchObject({ version: 3, busy: false, queued: 0 });
    await runner.close();
  });

  it('reads a session this runner never served from the store', async () => {
    const store = new MemoryCheckpointStore();
    const history: ChatMessage[] = [user('hello'), assistant('hi')];
    await store.save(
      'agent:main:old',
      { v: 1, agentId: 'main', strategy: { type: 'fsm', current_state: 'busy' }, history, engine: { x: 1 } },
      0,
    );
    const runner = createRunner({ store, agents: [countingAgent()] });
    expect(await runner.session('agent:main:old')).toEqual({
      sessionKey: 'agent:main:old',
      agentId: 'main',
      version: 1,
      strategy: { type: 'fsm', current_state: 'busy' },
      history,
      engineState: { x: 1 },
      pendingApprovals: [],
      busy: false,
      queued: 0,
    });
    await runner.close();
  });
});
