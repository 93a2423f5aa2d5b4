import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { MemoryCheckpointStore, SignalKind, signal } from '@signalyard/core';
import { createRunner } from 'signalyard';
import { MAIN, START, heldEngine, phaseFsm, phaseRoutes, stored, track, userTexts } from './support.js';

describe('per-session order', () => {
  it('1,000 concurrent handle() calls for one session leave all 1,000 messages in the history, in call order', async () => {
    const store = new MemoryCheckpointStore();
    const seen: number[] = [];
    const runner = createRunner({
      store,
      maxHistoryMessages: 5000,
      agents: [
        {
          id: 'main',
          engine: async (ctx) => {
            seen.push(ctx.history.length);
            return {};
          },
        },
      ],
    });
    const texts = Array.from({ length: 1000 }, (_, i) => `m${i}`);
    const outcomes = await Promise.all(texts.map((text) => runner.handle({ channel: 'cli', text })));
    expect(outcomes.every((o) => o.status === 'completed')).toBe(true);
    const { version, data } = await stored(store, MAIN);
    expect(userTexts(data.history)).toEqual(texts);
    expect(data.history).toHaveLength(1000);
    expect(version).toBe(1000);
    // One at a time: each turn saw exactly the messages before it plus its own.
    expect(seen).toEqual(Array.from({ length: 1000 }, (_, i) => i + 1));
    await runner.close();
  });

  it('a queue longer than a thousand signals keeps its order', async () => {
    const held = heldEngine();
    const store = new MemoryCheckpointStore();
    const runner = createRunner({ store, maxHistoryMessages: 5000, agents: [{ id: 'main', engine: held.engine }] });
    const first = runner.dispatch(MAIN, signal(SignalKind.UserMessage, 'first'));
    const turn0 = await held.turn(0);
    const texts = Array.from({ length: 1500 }, (_, i) => `q${i}`);
    const rest = texts.map((text) => runner.dispatch(MAIN, signal(SignalKind.UserMessage, text)));
    turn0.finish();
    for (let i = 1; i <= texts.length; i++) (await held.turn(i)).finish();
    await Promise.all([first, ...rest]);
    expect(held.turns.map((t) => t.text)).toEqual(['first', ...texts]);
    expect(userTexts((await stored(store, MAIN)).data.history)).toEqual(['first', ...texts]);
    await runner.close();
  });

  it('applies one signal at a time: the next turn of a session starts only after the previous one finished', async () => {
    const held = heldEngine();
    const runner = createRunner({ agents: [{ id: 'main', engine: held.engine }] });
    const first = track(runner.handle({ channel: 'cli', text: 'first' }));
    const second = track(runner.handle({ channel: 'cli', text: 'second' }));
    const turn0 = await held.turn(0);
    expect(held.turns).toHaveLength(1);
    expect(second.settled).toBe(false);
    turn0.finish();
    const turn1 = await held.turn(1);
    expect(first.settled).toBe(true);
    expect(turn1.ctx.history.map((m) => m.content)).toEqual(['first', 'second']);
    turn1.finish();
    await second.promise;
    expect(held.maxInFlight).toBe(1);
    await runner.close();
  });

  it('enqueues synchronously: a transition dispatched just before a message gates that message', async () => {
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          strategy: () => phaseFsm().create(),
          routes: [...phaseRoutes],
          engine: async () => ({ output: 'ran' }),
        },
      ],
    });
    const start = runner.dispatch(MAIN, signal(START));
    const message = runner.handle({ channel: 'cli', text: 'hello' });
    expect((await start).status).toBe('completed');
    expect(await message).toMatchObject({ status: 'rejected', action: { type: 'reject', reason: 'busy' } });
    await runner.close();
  });

  it('property: interleaved calls over several sessions keep each session in its own call order', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.integer({ min: 0, max: 3 }), { minLength: 1, maxLength: 80 }), async (picks) => {
        const store = new MemoryCheckpointStore();
        const runner = createRunner({
          store,
          maxConcurrentSessions: 2,
          agents: [{ id: 'main', engine: async () => ({}) }],
        });
        const expected = new Map<string, string[]>();
        const calls = picks.map((s, i) => {
          const key = `agent:main:s${s}`;
          expected.set(key, [...(expected.get(key) ?? []), `m${i}`]);
          return runner.dispatch(key, signal(SignalKind.UserMessage, `m${i}`));
        });
        await Promise.all(calls);
        for (const [key, texts] of expected) expect(userTexts((await stored(store, key)).data.history)).toEqual(texts);
        await runner.close();
      }),
      { numRuns: 40 },
    );
  });
});

describe('sessions run concurrently', () => {
  it("a session whose engine is waiting does not block another session's signal", async () => {
    const held = heldEngine();
    const runner = createRunner({
      agents: [
        { id: 'slow', engine: held.engine },
        { id: 'fast', engine: async () => ({ output: 'done' }) },
      ],
    });
    const a = track(runner.dispatch('agent:slow:a', signal(SignalKind.UserMessage, 'wait')));
    const turnA = await held.turn(0);
    const b = await runner.dispatch('agent:fast:b', signal(SignalKind.UserMessage, 'go'));
    expect(b).toMatchObject({ status: 'completed', output: 'done' });
    expect(a.settled).toBe(false);
    turnA.finish({ output: 'finally' });
    expect(await a.promise).toMatchObject({ status: 'completed', output: 'finally' });
    await runner.close();
  });

  it('two sessions of one agent interleave: B completes while A waits', async () => {
    const held = heldEngine();
    const runner = createRunner({ agents: [{ id: 'main', engine: held.engine }] });
    const a = track(runner.dispatch('agent:main:a', signal(SignalKind.UserMessage, 'a')));
    const turnA = await held.turn(0);
    const b = track(runner.dispatch('agent:main:b', signal(SignalKind.UserMessage, 'b')));
    const turnB = await held.turn(1);
    expect(turnB.ctx.sessionKey).toBe('agent:main:b');
    turnB.finish();
    expect((await b.promise).status).toBe('completed');
    expect(a.settled).toBe(false);
    turnA.finish();
    await a.promise;
    await runner.close();
  });

  it('maxConcurrentSessions 2: with three waiting sessions only two turns are in flight, the third starts when one ends', async () => {
    const held = heldEngine();
    const runner = createRunner({ maxConcurrentSessions: 2, agents: [{ id: 'main', engine: held.engine }] });
    const outcomes = ['a', 'b', 'c'].map((s) => runner.dispatch(`agent:main:${s}`, signal(SignalKind.UserMessage, s)));
    const [t0, t1] = await Promise.all([held.turn(0), held.turn(1)]);
    expect(held.turns).toHaveLength(2);
    expect(held.inFlight).toBe(2);
    t0.finish();
    const t2 = await held.turn(2);
    expect(held.inFlight).toBe(2);
    expect(new Set([t0, t1, t2].map((t) => t.ctx.sessionKey)).size).toBe(3);
    t1.finish();
    t2.finish();
    expect((await Promise.all(outcomes)).map((o) => o.status)).toEqual(['completed', 'completed', 'completed']);
    expect(held.maxInFlight).toBe(2);
    await runner.close();
  });

  it('maxConcurrentSessions 3 over 12 sessions: never more turns in flight than the limit', async () => {
    const held = heldEngine();
    const runner = createRunner({ maxConcurrentSessions: 3, agents: [{ id: 'main', engine: held.engine }] });
    const outcomes = Array.from({ length: 12 }, (_, i) =>
      runner.dispatch(`agent:main:s${i}`, signal(SignalKind.UserMessage, `m${i}`)),
    );
    for (let i = 0; i < 12; i++) {
      await held.turn(i);
      expect(held.inFlight).toBeLessThanOrEqual(3);
      // Keep the limit saturated: finish the oldest turn once three are in flight.
      if (i >= 2) held.turns[i - 2]?.finish();
    }
    for (const turn of held.turns) turn.finish();
    expect((await Promise.all(outcomes)).every((o) => o.status === 'completed')).toBe(true);
    expect(held.maxInFlight).toBe(3);
    await runner.close();
  });
});
