import { describe, expect, it } from 'vitest';
import {
  MemoryCheckpointStore,
  SignalKind,
  signal,
  type CheckpointStore,
  type RunnerEvent,
  type SessionVersion,
} from '@signalyard/core';
import { collect, deferred, rejectsCode } from '@signalyard/test-utils';
import { createRunner, type EngineFn } from 'signalyard';
import { FINISH, MAIN, START, phaseFsm, phaseRoutes, stored, userTexts } from './support.js';

const echo: EngineFn = async (ctx) => ({
  messages: [{ role: 'assistant', content: `echo ${ctx.history.at(-1)?.content ?? ''}` }],
});

function fsmRunner(store: CheckpointStore = new MemoryCheckpointStore(), engine: EngineFn = echo) {
  const definition = phaseFsm();
  return createRunner({
    store,
    agents: [
      { id: 'main', strategy: () => definition.create(), routes: [...phaseRoutes], engine },
      { id: 'other', engine },
    ],
  });
}

const say = (text: string) => signal(SignalKind.UserMessage, text);

/** A store without `history` / `loadVersion`: only the current version. */
function currentOnly(inner = new MemoryCheckpointStore()): CheckpointStore {
  return {
    load: (k) => inner.load(k),
    save: (k, d, v) => inner.save(k, d, v),
    delete: (k) => inner.delete(k),
    list: (p) => inner.list(p),
  };
}

describe('Runner.history: why each version exists', () => {
  it('lists every version newest first, each with its cause: signal, status, tier and route', async () => {
    const runner = fsmRunner();
    await runner.dispatch(MAIN, say('hello'));
    await runner.dispatch(MAIN, signal(START));
    await runner.dispatch(MAIN, say('while busy')); // rejected by the strategy tier, saved (history rule)
    const versions: SessionVersion[] = await collect(runner.history(MAIN));
    expect(versions.map((v) => v.version)).toEqual([3, 2, 1]);
    expect(versions[0]).toMatchObject({
      agentId: 'main',
      cause: {
        signal: { kind: 'user_message', text: 'while busy' },
        status: 'rejected',
        tier: 'strategy',
        routeName: 'busy-gate',
      },
      strategy: { current_state: 'busy' },
      historyLength: 3,
      pendingApprovals: 0,
    });
    expect(versions[1]?.cause).toMatchObject({
      signal: { kind: START },
      status: 'completed',
      tier: 'agent',
      routeName: 'start',
    });
    expect(versions[1]?.cause?.signal).not.toHaveProperty('text'); // only user messages' text is copied
    expect(versions[2]?.cause).toMatchObject({ signal: { kind: 'user_message', text: 'hello' }, status: 'completed' });
    expect(Date.parse(versions[2]?.cause?.at ?? '')).not.toBeNaN();
    expect((await collect(runner.history(MAIN, { before: 3, limit: 1 }))).map((v) => v.version)).toEqual([2]);
    await runner.close();
  });

  it("keeps the first 200 code units of a message's text, never half a surrogate pair", async () => {
    const runner = fsmRunner();
    const text = 'a'.repeat(199) + '😀' + 'tail';
    await runner.dispatch(MAIN, say(text));
    const [version] = await collect(runner.history(MAIN));
    expect(version?.cause?.signal?.text).toBe('a'.repeat(199));
    await runner.dispatch(MAIN, say('b'.repeat(300)));
    const [next] = await collect(runner.history(MAIN, { limit: 1 }));
    expect(next?.cause?.signal?.text).toBe('b'.repeat(200));
    await runner.close();
  });

  it('on a store without history lists the current version only; a session never saved lists nothing', async () => {
    const runner = fsmRunner(currentOnly());
    await runner.dispatch(MAIN, say('one'));
    await runner.dispatch(MAIN, say('two'));
    expect((await collect(runner.history(MAIN))).map((v) => v.version)).toEqual([2]);
    expect(await collect(runner.history(MAIN, { before: 2 }))).toEqual([]);
    expect(await collect(runner.history('agent:main:nobody'))).toEqual([]);
    await runner.close();
  });

  it('rejects bad keys and options with typed errors', async () => {
    const runner = fsmRunner();
    expect(() => runner.history('not a key')).toThrow(expect.objectContaining({ code: 'RUNNER_INPUT_INVALID' }));
    await rejectsCode(collect(runner.history(MAIN, { limit: -1 })), 'CHECKPOINT_HISTORY_OPTIONS_INVALID');
    await runner.close();
  });

  it('keeps top-level checkpoint fields it does not know (a newer release’s) across saves', async () => {
    const store = new MemoryCheckpointStore();
    await store.save(
      MAIN,
      { v: 1, agentId: 'main', strategy: { type: 'direct' }, history: [], engine: undefined, futureField: { x: 1 } },
      0,
    );
    const runner = createRunner({ store, agents: [{ id: 'main', engine: echo }] });
    await runner.dispatch(MAIN, say('hi'));
    expect((await store.load(MAIN))?.data).toMatchObject({ futureField: { x: 1 }, cause: { status: 'completed' } });
    await runner.close();
  });
});

describe('Runner.sessionAt', () => {
  it('shows a past version read-only, and the current one', async () => {
    const runner = fsmRunner();
    await runner.dispatch(MAIN, say('one'));
    await runner.dispatch(MAIN, signal(START));
    const past = await runner.sessionAt(MAIN, 1);
    expect(past).toMatchObject({ version: 1, strategy: { current_state: 'idle' }, pendingApprovals: [] });
    expect(userTexts(past?.history ?? [])).toEqual(['one']);
    expect(await runner.sessionAt(MAIN, 2)).toMatchObject({ version: 2, strategy: { current_state: 'busy' } });
    expect(await runner.sessionAt('agent:main:nobody', 1)).toBeUndefined();
    await runner.close();
  });

  it('a pruned version, a future one or a store without history: VERSION_UNAVAILABLE naming what is kept', async () => {
    const runner = fsmRunner(new MemoryCheckpointStore({ keepVersions: 1 }));
    for (const text of ['a', 'b', 'c']) await runner.dispatch(MAIN, say(text));
    const pruned = await rejectsCode(runner.sessionAt(MAIN, 1), 'VERSION_UNAVAILABLE');
    expect(pruned.message).toContain('oldest version kept is 2');
    const future = await rejectsCode(runner.sessionAt(MAIN, 9), 'VERSION_UNAVAILABLE');
    expect(future.message).toContain('current version is 3');
    await rejectsCode(runner.sessionAt(MAIN, 0), 'RUNNER_INPUT_INVALID');
    await runner.close();

    const plain = fsmRunner(currentOnly());
    await plain.dispatch(MAIN, say('a'));
    await plain.dispatch(MAIN, say('b'));
    expect(await plain.sessionAt(MAIN, 2)).toMatchObject({ version: 2 });
    await rejectsCode(plain.sessionAt(MAIN, 1), 'VERSION_UNAVAILABLE');
    await plain.close();
  });
});

describe('Runner.fork', () => {
  it('copies a version into a new session (version 1, forkedFrom) and leaves the original untouched', async () => {
    const store = new MemoryCheckpointStore();
    const runner = fsmRunner(store);
    await runner.dispatch(MAIN, say('one'));
    await runner.dispatch(MAIN, signal(START));
    const before = await store.load(MAIN);
    const fork = await runner.fork(MAIN, 'agent:main:copy', { version: 1 });
    expect(fork).toMatchObject({ sessionKey: 'agent:main:copy', version: 1, strategy: { current_state: 'idle' } });
    expect((await stored(store, 'agent:main:copy')).data.cause).toMatchObject({
      forkedFrom: { sessionKey: MAIN, version: 1 },
    });
    expect(await store.load(MAIN)).toEqual(before);
    // The fork is an ordinary session: its own strategy instance and history.
    expect((await runner.dispatch('agent:main:copy', signal(START))).status).toBe('completed');
    await runner.dispatch('agent:main:copy', signal(FINISH));
    expect((await runner.session(MAIN))?.strategy).toMatchObject({ current_state: 'busy' });
    await runner.close();
  });

  it('continues independently in both directions: the fork starts from the source version, then neither sees the other', async () => {
    const counting: EngineFn = async (ctx) => {
      const count = ((ctx.state as number | undefined) ?? 0) + 1;
      return { state: count, messages: [{ role: 'assistant', content: `turn ${count}` }] };
    };
    const store = new MemoryCheckpointStore();
    const runner = fsmRunner(store, counting);
    const COPY = 'agent:main:copy';
    await runner.dispatch(MAIN, say('one'));
    await runner.dispatch(MAIN, signal(START));
    const source = await runner.session(MAIN);
    await runner.fork(MAIN, COPY);
    const forked = await runner.session(COPY);
    expect(forked).toMatchObject({
      strategy: source?.strategy,
      history: source?.history,
      engineState: source?.engineState,
    });

    await runner.dispatch(MAIN, signal(FINISH));
    await runner.dispatch(MAIN, say('original only'));
    expect(await runner.session(COPY)).toEqual(forked);

    const original = await runner.session(MAIN);
    await runner.dispatch(COPY, signal(FINISH));
    await runner.dispatch(COPY, say('fork only'));
    expect(await runner.session(MAIN)).toEqual(original);
    const copy = await runner.session(COPY);
    expect(userTexts(copy!.history)).toEqual(['one', 'fork only']);
    expect(userTexts(original!.history)).toEqual(['one', 'original only']);
    // The same path from the same version: the same state, reached separately.
    const turns = (source?.engineState as number) + 1; // a transition runs no engine turn
    expect(copy).toMatchObject({ strategy: { current_state: 'idle' }, engineState: turns });
    expect(original).toMatchObject({ strategy: { current_state: 'idle' }, engineState: turns });
    await runner.close();
  });

  it('refuses an existing target, another agent’s session, a missing source; nothing is written', async () => {
    const store = new MemoryCheckpointStore();
    const runner = fsmRunner(store);
    await runner.dispatch(MAIN, say('one'));
    await runner.dispatch('agent:main:taken', say('mine'));
    await rejectsCode(runner.fork(MAIN, 'agent:main:taken'), 'SESSION_EXISTS');
    expect((await stored(store, 'agent:main:taken')).version).toBe(1);
    await rejectsCode(runner.fork(MAIN, 'agent:other:main'), 'SESSION_AGENT_MISMATCH');
    expect(await store.load('agent:other:main')).toBeUndefined();
    await rejectsCode(runner.fork('agent:main:nobody', 'agent:main:new'), 'SESSION_NOT_FOUND');
    await rejectsCode(
      runner.fork(MAIN, 'agent:main:new', { reissueApprovals: 'yes' as never }),
      'RUNNER_INPUT_INVALID',
    );
    await runner.close();
  });
});

describe('Runner.rewind', () => {
  it('saves a new version equal to the old one; the versions between stay, so a rewind can be undone', async () => {
    const store = new MemoryCheckpointStore();
    const runner = fsmRunner(store);
    const events: RunnerEvent[] = [];
    runner.on((e) => events.push(e));
    await runner.dispatch(MAIN, say('one'));
    await runner.dispatch(MAIN, signal(START));
    await runner.dispatch(MAIN, say('rejected while busy'));
    const view = await runner.rewind(MAIN, 1);
    expect(view).toMatchObject({ version: 4, strategy: { current_state: 'idle' } });
    const data = (await stored(store, MAIN)).data;
    expect(data.cause).toMatchObject({ rewoundTo: 1 });
    expect(userTexts(data.history)).toEqual(['one']);
    expect(events).toContainEqual({
      type: 'session_rewound',
      sessionKey: MAIN,
      agentId: 'main',
      version: 4,
      rewoundTo: 1,
    });
    // The live session follows the rewind: a user message is no longer gated by `busy`.
    expect((await runner.dispatch(MAIN, say('after rewind'))).status).toBe('completed');
    // Undo: rewind to the version before the rewind.
    await runner.rewind(MAIN, 3);
    expect((await runner.session(MAIN))?.strategy).toMatchObject({ current_state: 'busy' });
    expect((await collect(runner.history(MAIN))).map((v) => v.version)).toEqual([6, 5, 4, 3, 2, 1]);
    await runner.close();
  });

  it('waits for the turn in flight; a stop does not cancel it; close() rejects one still queued', async () => {
    const gate = deferred();
    const entered = deferred();
    const runner = fsmRunner(new MemoryCheckpointStore(), async (ctx) => {
      if (ctx.history.at(-1)?.content === 'slow') {
        entered.resolve();
        await gate.promise;
      }
      return {};
    });
    await runner.dispatch(MAIN, say('first'));
    const slow = runner.dispatch(MAIN, say('slow'));
    await entered.promise; // the turn is in flight
    const rewound = runner.rewind(MAIN, 1);
    const stop = runner.dispatch(MAIN, signal(SignalKind.Stop));
    expect((await stop).status).toBe('completed');
    gate.resolve();
    expect((await slow).status).toBe('completed'); // a graceful stop lets the turn finish
    expect(await rewound).toMatchObject({ version: 3 });

    const held = deferred();
    const other = fsmRunner(new MemoryCheckpointStore(), async () => {
      await held.promise;
      return {};
    });
    await other.dispatch(MAIN, signal(START)); // version 1 (a transition: no engine turn)
    await other.dispatch(MAIN, signal(FINISH)); // version 2, idle again
    const busy = other.dispatch(MAIN, say('x')); // the engine holds this turn
    const queued = other.rewind(MAIN, 1);
    const closing = other.close();
    held.resolve();
    await busy;
    await rejectsCode(queued, 'RUNNER_CLOSED');
    await closing;
    await runner.close();
  });

  it('refuses a missing session, a bad version, and a closed runner', async () => {
    const runner = fsmRunner();
    await rejectsCode(runner.rewind('agent:main:nobody', 1), 'SESSION_NOT_FOUND');
    await runner.dispatch(MAIN, say('one'));
    await rejectsCode(runner.rewind(MAIN, 1.5), 'RUNNER_INPUT_INVALID');
    await rejectsCode(runner.rewind(MAIN, 7), 'VERSION_UNAVAILABLE');
    await runner.close();
    await rejectsCode(runner.rewind(MAIN, 1), 'RUNNER_CLOSED');
  });
});

describe('Runner.deleteSession and listSessions', () => {
  it('deletes a session and its history; the next signal starts it afresh', async () => {
    const store = new MemoryCheckpointStore();
    const runner = fsmRunner(store);
    await runner.dispatch(MAIN, signal(START));
    await runner.deleteSession(MAIN);
    expect(await store.load(MAIN)).toBeUndefined();
    expect(await collect(runner.history(MAIN))).toEqual([]);
    expect(await runner.dispatch(MAIN, say('again'))).toMatchObject({ status: 'completed' });
    expect((await stored(store, MAIN)).version).toBe(1);
    await runner.deleteSession('agent:main:nobody'); // missing: not an error
    await runner.close();
  });

  it('lists stored sessions in key order, with a cursor, a prefix and a limit', async () => {
    const runner = fsmRunner();
    for (const key of ['agent:main:c', 'agent:main:a', 'agent:other:b', 'agent:main:b'])
      await runner.dispatch(key, say('hi'));
    const all = await collect(runner.listSessions());
    expect(all.map((s) => s.sessionKey)).toEqual(['agent:main:a', 'agent:main:b', 'agent:main:c', 'agent:other:b']);
    expect(all[3]).toMatchObject({ agentId: 'other', version: 1, updatedAt: expect.any(String) });
    expect((await collect(runner.listSessions({ after: 'agent:main:a', limit: 2 }))).map((s) => s.sessionKey)).toEqual([
      'agent:main:b',
      'agent:main:c',
    ]);
    expect((await collect(runner.listSessions({ prefix: 'agent:other:' }))).map((s) => s.sessionKey)).toEqual([
      'agent:other:b',
    ]);
    expect(() => runner.listSessions({ limit: 0 })).toThrow(expect.objectContaining({ code: 'RUNNER_INPUT_INVALID' }));
    expect(() => runner.listSessions({ prefix: 3 as never })).toThrow(
      expect.objectContaining({ code: 'RUNNER_INPUT_INVALID' }),
    );
    await runner.close();
  });
});
