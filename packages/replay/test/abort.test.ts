// `{ abortSignal }` on replay, evaluate and exportCassettes (README conventions): an aborted
// signal stops them promptly with an error whose code is ABORTED.
import { MemoryCheckpointStore, type CheckpointStore } from '@signalyard/core';
import { describe, expect, it } from 'vitest';
import { evaluate, exportCassettes, replay, sameRoute, type Cassette, type ReplayRunnerParts } from '../src/index.js';
import { desk, deskTools, liveModel, liveWeek, steppingClock, throwingTools } from './desk.js';

const today = (parts: ReplayRunnerParts) => desk({ ...parts, tools: parts.tools(throwingTools().tools) });

async function week(): Promise<{ store: MemoryCheckpointStore; cassettes: Cassette[] }> {
  const store = new MemoryCheckpointStore();
  const runner = desk({ store, clock: steppingClock(), model: liveModel(), tools: deskTools().tools });
  await liveWeek(runner);
  await runner.close();
  return { store, cassettes: await exportCassettes(store) };
}

const aborted = (): AbortSignal => {
  const c = new AbortController();
  c.abort(new Error('stop'));
  return c.signal;
};

describe('abortSignal', () => {
  it('already aborted: replay, evaluate and exportCassettes reject with ABORTED and build no runner', async () => {
    const { store, cassettes } = await week();
    let built = 0;
    const runner = (p: ReplayRunnerParts) => {
      built++;
      return today(p);
    };
    await expect(replay(cassettes, { runner, abortSignal: aborted() })).rejects.toMatchObject({ code: 'ABORTED' });
    await expect(evaluate(cassettes, { runner, scorers: [sameRoute()], abortSignal: aborted() })).rejects.toMatchObject(
      { code: 'ABORTED' },
    );
    await expect(exportCassettes(store, { abortSignal: aborted() })).rejects.toMatchObject({ code: 'ABORTED' });
    expect(built).toBe(0);
  });

  it('aborted mid-turn: replay stops at once (a turn that never ends is left), its runner is closed', async () => {
    const { cassettes } = await week();
    const controller = new AbortController();
    const seen: (AbortSignal | undefined)[] = [];
    let calls = 0;
    let closed = 0;
    let built = 0;
    const runner = (parts: ReplayRunnerParts) => {
      built++;
      const inner = today(parts);
      return {
        dispatch: inner.dispatch.bind(inner),
        handle: (message: never, opts?: { abortSignal?: AbortSignal }) => {
          seen.push(opts?.abortSignal);
          if (++calls === 2) {
            controller.abort();
            return new Promise<never>(() => undefined); // a turn that hangs
          }
          return inner.handle(message, opts);
        },
        close: async () => {
          closed++;
          await inner.close();
        },
      };
    };
    await expect(replay(cassettes, { runner, abortSignal: controller.signal })).rejects.toMatchObject({
      code: 'ABORTED',
    });
    expect(calls).toBe(2);
    expect(seen.every((s) => s === controller.signal)).toBe(true);
    // Every runner built was closed, the one whose turn hung included.
    expect(closed).toBe(built);
  });

  it('aborted while scoring: evaluate rejects with ABORTED; the scorer is given the signal', async () => {
    const { cassettes } = await week();
    const controller = new AbortController();
    const given: (AbortSignal | undefined)[] = [];
    const hanging = (run: { abortSignal?: AbortSignal }) => {
      given.push(run.abortSignal);
      controller.abort();
      return new Promise<never>(() => undefined);
    };
    await expect(
      evaluate(cassettes, { runner: today, scorers: [hanging], abortSignal: controller.signal }),
    ).rejects.toMatchObject({ code: 'ABORTED' });
    expect(given).toEqual([controller.signal]);
  });

  it('aborted while exporting: exportCassettes stops between versions with ABORTED', async () => {
    const { store } = await week();
    const controller = new AbortController();
    let read = 0;
    const watched: CheckpointStore = {
      load: (k) => store.load(k),
      save: (k, d, e) => store.save(k, d, e),
      delete: (k) => store.delete(k),
      list: (p) => store.list(p),
      history: async function* (k) {
        for await (const v of store.history(k)) {
          if (++read === 2) controller.abort();
          yield v;
        }
      },
    };
    await expect(exportCassettes(watched, { abortSignal: controller.signal })).rejects.toMatchObject({
      code: 'ABORTED',
    });
    expect(read).toBe(2);
  });

  it('an abortSignal that is not one: REPLAY_INPUT_INVALID naming it', async () => {
    const { store, cassettes } = await week();
    await expect(replay(cassettes, { runner: today, abortSignal: 'stop' as never })).rejects.toThrow(
      /abortSignal must be an AbortSignal, got "stop"/,
    );
    await expect(exportCassettes(store, { abortSignal: {} as never })).rejects.toMatchObject({
      code: 'REPLAY_INPUT_INVALID',
    });
  });
});
