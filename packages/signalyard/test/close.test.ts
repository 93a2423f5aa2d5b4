import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryCheckpointStore, MemoryInbox, SignalKind, signal, isSignalyardError } from '@signalyard/core';
import { RunnerError, createRunner } from 'signalyard';
import { MAIN, assistant, deferred, heldEngine, rejectionOf, stored, track, user } from './support.js';

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

const say = (text: string) => signal(SignalKind.UserMessage, text);

describe('close()', () => {
  it('waits for an in-flight turn that finishes within closeTimeoutMs: completed and saved', async () => {
    const held = heldEngine();
    const store = new MemoryCheckpointStore();
    const runner = createRunner({ store, agents: [{ id: 'main', engine: held.engine }] });
    const a = runner.dispatch(MAIN, say('a'));
    const turnA = await held.turn(0);
    const closed = track(runner.close());
    turnA.finish({ messages: [assistant('done')] });
    expect((await a).status).toBe('completed');
    await closed.promise;
    expect(turnA.ctx.abortSignal.aborted).toBe(false);
    expect((await stored(store, MAIN)).data.history).toEqual([user('a'), assistant('done')]);
  });

  it('aborts in-flight turns after closeTimeoutMs: they resolve stopped', async () => {
    vi.useFakeTimers();
    const held = heldEngine();
    const runner = createRunner({ closeTimeoutMs: 500, agents: [{ id: 'main', engine: held.engine }] });
    const a = track(runner.dispatch(MAIN, say('a')));
    const turnA = await held.turn(0);
    const closed = track(runner.close());
    await vi.advanceTimersByTimeAsync(499);
    expect(turnA.ctx.abortSignal.aborted).toBe(false);
    expect(a.settled).toBe(false);
    expect(closed.settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(turnA.ctx.abortSignal.aborted).toBe(true);
    expect((await a.promise).status).toBe('stopped');
    await closed.promise;
  });

  it('waits 10000 ms by default', async () => {
    vi.useFakeTimers();
    const held = heldEngine();
    const runner = createRunner({ agents: [{ id: 'main', engine: held.engine }] });
    const a = runner.dispatch(MAIN, say('a'));
    const turnA = await held.turn(0);
    const closed = runner.close();
    await vi.advanceTimersByTimeAsync(9999);
    expect(turnA.ctx.abortSignal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(turnA.ctx.abortSignal.aborted).toBe(true);
    expect((await a).status).toBe('stopped');
    await closed;
  });

  it('resolves queued signals stopped at once, without running them', async () => {
    const held = heldEngine();
    const runner = createRunner({ agents: [{ id: 'main', engine: held.engine }] });
    const a = runner.dispatch(MAIN, say('a'));
    const turnA = await held.turn(0);
    const b = track(runner.dispatch(MAIN, say('b')));
    const closed = runner.close();
    expect((await b.promise).status).toBe('stopped');
    turnA.finish();
    expect((await a).status).toBe('completed');
    await closed;
    expect(held.turns.map((t) => t.text)).toEqual(['a']);
  });

  it('with a durable inbox: finishes the turn in flight, leaves the queued entries unsettled (no outcome event) and releases the lease', async () => {
    const held = heldEngine();
    const store = new MemoryCheckpointStore();
    const inbox = new MemoryInbox();
    const runner = createRunner({
      store,
      inbox,
      worker: { pollMs: 10 },
      agents: [{ id: 'main', engine: held.engine }],
    });
    const events: string[] = [];
    runner.on((event) => {
      if (event.type === 'outcome') events.push(event.outcome.status);
    });
    await runner.start();
    const a = await runner.accept(MAIN, say('a'));
    const turnA = await held.turn(0);
    const b = await runner.accept(MAIN, say('b'));
    await vi.waitFor(async () => expect((await inbox.pending()).length).toBe(2));
    const closed = track(runner.close());
    turnA.finish({ messages: [assistant('done a')] });
    await closed.promise;
    expect(events).toEqual(['completed']); // a settled; b not: no outcome event for it
    expect((await inbox.outcome(a.receiptId)).status).toBe('completed');
    expect((await inbox.pending()).map((e) => e.receiptId)).toEqual([b.receiptId]);
    expect(await inbox.leases()).toEqual([]);
    const next = createRunner({ store, inbox, worker: { pollMs: 10 }, agents: [{ id: 'main', engine: held.engine }] });
    await next.start();
    (await held.turn(1)).finish({ messages: [assistant('done b')] });
    expect((await inbox.outcome(b.receiptId)).status).toBe('completed');
    await next.close();
    expect(held.turns.map((t) => t.text)).toEqual(['a', 'b']);
  });

  it('resolves a signal waiting for a concurrency slot stopped, without running it', async () => {
    // Fails until close() also stops a signal that left its session queue but still waits for a
    // slot (runner.ts #process: `await wait` then `#run`; #shutdown only drains session queues).
    const slot = deferred();
    const holding = deferred();
    const ran: string[] = [];
    const runner = createRunner({
      maxConcurrentSessions: 1,
      agents: [
        {
          id: 'main',
          engine: async (ctx) => {
            const text = String(ctx.history.at(-1)?.content);
            ran.push(text);
            if (text === 'hold') {
              holding.resolve();
              await slot.promise;
            }
            return {};
          },
        },
      ],
    });
    const a = runner.dispatch('agent:main:a', say('hold'));
    await holding.promise;
    const b = runner.dispatch('agent:main:b', say('waits for a slot'));
    const closed = runner.close();
    slot.resolve();
    expect((await a).status).toBe('completed');
    expect((await b).status).toBe('stopped');
    expect(ran).toEqual(['hold']);
    await closed;
  });

  it('disposes plugins after the in-flight turns have ended', async () => {
    const log: string[] = [];
    const held = heldEngine();
    const runner = createRunner({
      agents: [{ id: 'main', engine: held.engine }],
      plugins: [
        {
          name: 'p',
          dispose: () => {
            log.push('dispose');
          },
        },
      ],
    });
    const a = runner.dispatch(MAIN, say('a')).then((o) => log.push(`outcome ${o.status}`));
    const turnA = await held.turn(0);
    const closed = runner.close();
    turnA.finish();
    await Promise.all([a, closed]);
    expect(log).toEqual(['outcome completed', 'dispose']);
  });

  it('rejects handle(), dispatch() and start() with RUNNER_CLOSED while closing and after', async () => {
    const held = heldEngine();
    const runner = createRunner({ agents: [{ id: 'main', engine: held.engine }] });
    const a = runner.dispatch(MAIN, say('a'));
    const turnA = await held.turn(0);
    const closed = runner.close();
    for (const call of [
      () => runner.handle({ channel: 'cli', text: 'late' }),
      () => runner.dispatch(MAIN, say('late')),
      () => runner.start(),
    ]) {
      const error = await rejectionOf(call());
      expect(RunnerError.isInstance(error)).toBe(true);
      expect(isSignalyardError(error, 'RUNNER_CLOSED')).toBe(true);
    }
    turnA.finish();
    await Promise.all([a, closed]);
    expect(
      isSignalyardError(await rejectionOf(runner.handle({ channel: 'cli', text: 'later' })), 'RUNNER_CLOSED'),
    ).toBe(true);
    expect(isSignalyardError(await rejectionOf(runner.dispatch(MAIN, say('later'))), 'RUNNER_CLOSED')).toBe(true);
    expect(held.turns).toHaveLength(1);
  });

  it('does not close a store it was given', async () => {
    const store = new MemoryCheckpointStore();
    const closeSpy = vi.spyOn(store, 'close');
    const runner = createRunner({ store, agents: [{ id: 'main', engine: async () => ({}) }] });
    await runner.handle({ channel: 'cli', text: 'hi' });
    await runner.close();
    expect(closeSpy).not.toHaveBeenCalled();
    expect((await store.load(MAIN))?.version).toBe(1);
  });

  it('closes the store it created', async () => {
    const closeSpy = vi.spyOn(MemoryCheckpointStore.prototype, 'close');
    const runner = createRunner({ agents: [{ id: 'main', engine: async () => ({}) }] });
    await runner.handle({ channel: 'cli', text: 'hi' });
    await runner.close();
    expect(closeSpy).toHaveBeenCalledTimes(1);
  });
});
