// ctx.commit: a mid-turn compare-and-set save that a later failure does not undo, whose version
// the turn's final save builds on, and whose lost compare-and-set makes the runner apply the
// signal again.
import { describe, expect, it } from 'vitest';
import {
  AbortedError,
  Action,
  CheckpointConflictError,
  MemoryCheckpointStore,
  SignalKind,
  createRunner,
  signal,
  type TurnContext,
} from 'signalyard';
import { collect, deferred, rejectsCode } from '@signalyard/test-utils';
import { MAIN, stored, userTexts } from './support.js';

const hello = { channel: 'cli', text: 'hello' } as const;

describe('ctx.commit', () => {
  it('saves a version mid-turn; the final save builds on it (no conflict with itself)', async () => {
    const store = new MemoryCheckpointStore();
    const seen: number[] = [];
    const runner = createRunner({
      store,
      agents: [
        {
          id: 'main',
          engine: async (ctx) => {
            await ctx.commit({ step: 'claimed' });
            seen.push((await stored(store, MAIN)).version);
            return { state: { step: 'done' }, messages: [{ role: 'assistant', content: 'ok' }] };
          },
        },
      ],
    });
    const outcome = await runner.handle(hello);
    expect(outcome.status).toBe('completed');
    expect(seen).toEqual([1]);
    const versions = await collect(runner.history(MAIN));
    expect(versions.map((v) => v.version)).toEqual([2, 1]);
    const [, first] = versions;
    expect(first?.historyLength).toBe(1);
    expect(first?.cause).toMatchObject({ signal: { kind: 'user_message', text: 'hello' } });
    const { data } = await stored(store, MAIN);
    expect(data.engine).toEqual({ step: 'done' });
    expect(userTexts(data.history)).toEqual(['hello']);
    await runner.close();
  });

  it('a later failure discards only what came after the commit: the committed state and the user message stay, once', async () => {
    const store = new MemoryCheckpointStore();
    const runner = createRunner({
      store,
      agents: [
        {
          id: 'main',
          engine: async (ctx) => {
            await ctx.commit({ step: 'claimed' });
            throw new Error('the tool blew up');
          },
        },
      ],
    });
    const outcome = await runner.handle(hello);
    expect(outcome.status).toBe('failed');
    const { version, data } = await stored(store, MAIN);
    expect(version).toBe(1);
    expect(data.engine).toEqual({ step: 'claimed' });
    expect(userTexts(data.history)).toEqual(['hello']);
    await runner.close();
  });

  it('a force_stop after a commit keeps the commit; a commit after the stop rejects with AbortedError', async () => {
    const store = new MemoryCheckpointStore();
    const committed = deferred();
    const late = deferred<unknown>();
    const runner = createRunner({
      store,
      agents: [
        {
          id: 'main',
          routes: [{ kind: SignalKind.Stop, action: Action.ForceStop }],
          engine: async (ctx) => {
            await ctx.commit({ step: 1 });
            committed.resolve();
            await new Promise((resolve) => ctx.abortSignal.addEventListener('abort', resolve, { once: true }));
            late.resolve(await ctx.commit({ step: 2 }).catch((error: unknown) => error));
            return { state: { step: 3 } };
          },
        },
      ],
    });
    const turn = runner.handle(hello);
    await committed.promise;
    expect((await runner.dispatch(MAIN, signal(SignalKind.Stop))).status).toBe('completed');
    expect((await turn).status).toBe('stopped');
    expect(AbortedError.isInstance(await late.promise)).toBe(true);
    const { version, data } = await stored(store, MAIN);
    expect([version, data.engine]).toEqual([1, { step: 1 }]);
    await runner.close();
  });

  it('commit after the turn ended rejects with COMMIT_REFUSED and saves nothing', async () => {
    let kept: TurnContext | undefined;
    const store = new MemoryCheckpointStore();
    const runner = createRunner({
      store,
      agents: [
        {
          id: 'main',
          engine: async (ctx) => {
            kept = ctx;
            return {};
          },
        },
      ],
    });
    await runner.handle(hello);
    await rejectsCode((kept as TurnContext).commit({ late: true }), 'COMMIT_REFUSED');
    expect((await stored(store, MAIN)).version).toBe(1);
    await runner.close();
  });

  it('commits of one turn run one after another', async () => {
    const store = new MemoryCheckpointStore();
    const runner = createRunner({
      store,
      agents: [
        {
          id: 'main',
          engine: async (ctx) => {
            await Promise.all([ctx.commit({ n: 1 }), ctx.commit({ n: 2 })]);
            return {};
          },
        },
      ],
    });
    expect((await runner.handle(hello)).status).toBe('completed');
    const versions = await collect(runner.history(MAIN));
    expect(versions.map((v) => v.version)).toEqual([3, 2, 1]);
    expect((await stored(store, MAIN)).data.engine).toEqual({ n: 2 });
    await runner.close();
  });

  it('a state that cannot be stored rejects the commit with the store error; the turn may go on', async () => {
    const store = new MemoryCheckpointStore();
    const errors: unknown[] = [];
    const runner = createRunner({
      store,
      agents: [
        {
          id: 'main',
          engine: async (ctx) => {
            errors.push(await ctx.commit({ n: Number.NaN }).catch((error: unknown) => error));
            return { state: { n: 1 } };
          },
        },
      ],
    });
    expect((await runner.handle(hello)).status).toBe('completed');
    expect(errors).toEqual([expect.objectContaining({ code: 'CHECKPOINT_DATA_INVALID' })]);
    expect((await stored(store, MAIN)).data.engine).toEqual({ n: 1 });
    await runner.close();
  });
});

/** Saves the session's current checkpoint again with `engine` replaced: another writer got there first. */
async function writeBehind(store: MemoryCheckpointStore, engine: unknown): Promise<void> {
  const { version, data } = await stored(store, MAIN);
  await store.save(MAIN, { ...data, engine }, version);
}

describe('ctx.commit losing to another writer', () => {
  it('rejects with CheckpointConflictError; the runner reloads and applies the signal again (the user message once)', async () => {
    const store = new MemoryCheckpointStore();
    const seen: { state: unknown; commit: unknown }[] = [];
    const runner = createRunner({
      store,
      agents: [
        {
          id: 'main',
          engine: async (ctx) => {
            if (seen.length === 1) await writeBehind(store, { by: 'other' });
            const commit = await ctx.commit({ claimed: seen.length }).catch((error: unknown) => error);
            seen.push({ state: ctx.state, commit });
            if (commit !== undefined) throw commit;
            return { messages: [{ role: 'assistant', content: 'ok' }] };
          },
        },
      ],
    });
    await runner.handle({ channel: 'cli', text: 'first' });
    const outcome = await runner.handle(hello);
    expect(outcome.status).toBe('completed');
    expect(seen).toHaveLength(3);
    expect(CheckpointConflictError.isInstance(seen[1]?.commit)).toBe(true);
    expect(seen[2]).toEqual({ state: { by: 'other' }, commit: undefined });
    const { data } = await stored(store, MAIN);
    expect(userTexts(data.history)).toEqual(['first', 'hello']);
    expect(data.engine).toEqual({ claimed: 2 });
    await runner.close();
  });

  it('an engine that ignores the conflict and returns anyway is still applied again; its result is not saved', async () => {
    const store = new MemoryCheckpointStore();
    let turns = 0;
    const runner = createRunner({
      store,
      agents: [
        {
          id: 'main',
          engine: async (ctx) => {
            turns++;
            if (turns === 2) await writeBehind(store, { by: 'other' });
            await ctx.commit({ turn: turns }).catch(() => undefined);
            return { messages: [{ role: 'assistant', content: `turn ${turns}` }] };
          },
        },
      ],
    });
    await runner.handle({ channel: 'cli', text: 'first' });
    expect((await runner.handle(hello)).status).toBe('completed');
    expect(turns).toBe(3);
    const { data } = await stored(store, MAIN);
    expect(data.history.map((m) => m.content)).toEqual(['first', 'turn 1', 'hello', 'turn 3']);
    await runner.close();
  });

  it('a conflict on every attempt fails with CHECKPOINT_CONFLICT after the retries', async () => {
    const store = new MemoryCheckpointStore();
    let turns = 0;
    const runner = createRunner({
      store,
      agents: [
        {
          id: 'main',
          engine: async (ctx) => {
            if (++turns > 1) await writeBehind(store, { turn: turns });
            await ctx.commit({});
            return {};
          },
        },
      ],
    });
    await runner.handle({ channel: 'cli', text: 'first' });
    const outcome = await runner.handle(hello);
    expect(outcome.status).toBe('failed');
    expect(outcome.error?.code).toBe('CHECKPOINT_CONFLICT');
    expect(turns).toBe(1 + 4);
    await runner.close();
  });

  it('a conflict on the final save after a commit applies the signal again without a second copy of the user message', async () => {
    const store = new MemoryCheckpointStore();
    const histories: string[][] = [];
    const runner = createRunner({
      store,
      agents: [
        {
          id: 'main',
          engine: async (ctx) => {
            histories.push(ctx.history.map((m) => m.content));
            if (histories.length === 1) {
              await ctx.commit({ claimed: true });
              await writeBehind(store, { claimed: true, by: 'other' });
            }
            return { messages: [{ role: 'assistant', content: 'ok' }] };
          },
        },
      ],
    });
    expect((await runner.handle(hello)).status).toBe('completed');
    expect(histories).toEqual([['hello'], ['hello']]);
    const { data } = await stored(store, MAIN);
    expect(data.history.map((m) => m.content)).toEqual(['hello', 'ok']);
    await runner.close();
  });
});
