import { Action, SignalKind, signal } from '@signalyard/core';
import { deferred } from '@signalyard/test-utils';
import { createRunner, type Runner, type TurnResult } from 'signalyard';
import { describe, expect, it } from 'vitest';

const reply = (content: string): TurnResult => ({ messages: [{ role: 'assistant', content }] });

/**
 * A started runner whose session is loaded (the lane runs signals once the runner has started,
 * on a loaded session): its engine answers `warm` at once and the n-th other signal with
 * `turn(n)`; `calls()` counts those.
 */
async function warmRunner(turn: (n: number) => Promise<TurnResult>): Promise<{ runner: Runner; calls: () => number }> {
  let calls = 0;
  const runner = createRunner({
    agents: [
      {
        id: 'main',
        routes: [{ kind: SignalKind.Stop, action: Action.ForceStop }],
        engine: (ctx) => (ctx.signal.payload === 'warm' ? Promise.resolve(reply('warm reply')) : turn(calls++)),
      },
    ],
  });
  await runner.start();
  await runner.dispatch('agent:main:main', signal(SignalKind.UserMessage, 'warm'));
  return { runner, calls: () => calls };
}

// The session queue's fast lane (no lock, no durable inbox) waits on an engine turn with callbacks
// shared by the session's signals; a stopped turn's wait is abandoned while the engine's promise
// still holds them. Its late end must not be taken for the next signal's.
describe('the fast lane', () => {
  it("ignores a stopped turn's late end: the next signal ends with its own engine's", async () => {
    const turns = [deferred<TurnResult>(), deferred<TurnResult>()];
    const { runner, calls } = await warmRunner((n) => (turns[n] as { promise: Promise<TurnResult> }).promise);
    const first = runner.dispatch('agent:main:main', signal(SignalKind.UserMessage, 'first'));
    while (calls() < 1) await Promise.resolve();
    const stop = runner.dispatch('agent:main:main', signal(SignalKind.Stop));
    expect((await first).status).toBe('stopped');
    expect((await stop).status).toBe('completed');
    const second = runner.dispatch('agent:main:main', signal(SignalKind.UserMessage, 'second'));
    let secondDone = false;
    void second.then(() => {
      secondDone = true;
    });
    while (calls() < 2) await Promise.resolve();
    turns[0]?.resolve(reply('late reply of the stopped turn'));
    for (let i = 0; i < 20; i++) await Promise.resolve();
    expect(secondDone).toBe(false);
    turns[1]?.resolve(reply('second reply'));
    expect((await second).status).toBe('completed');
    const history = (await runner.session('agent:main:main'))?.history.map((m) => m.content);
    expect(history).toEqual(['warm', 'warm reply', 'first', 'second', 'second reply']);
    // A third signal after the late end: the lane's shared callbacks serve it again.
    const third = deferred<TurnResult>();
    turns.push(third);
    const next = runner.dispatch('agent:main:main', signal(SignalKind.UserMessage, 'third'));
    while (calls() < 3) await Promise.resolve();
    third.resolve(reply('third reply'));
    expect((await next).status).toBe('completed');
    expect((await runner.session('agent:main:main'))?.history.map((m) => m.content)).toEqual([
      'warm',
      'warm reply',
      'first',
      'second',
      'second reply',
      'third',
      'third reply',
    ]);
    await runner.close();
  });

  it("serves the next signal while a stopped turn's engine has not ended yet, and ignores that end later", async () => {
    const turns = [deferred<TurnResult>(), deferred<TurnResult>(), deferred<TurnResult>()];
    const { runner, calls } = await warmRunner((n) => (turns[n] as { promise: Promise<TurnResult> }).promise);
    const first = runner.dispatch('agent:main:main', signal(SignalKind.UserMessage, 'first'));
    while (calls() < 1) await Promise.resolve();
    await runner.dispatch('agent:main:main', signal(SignalKind.Stop));
    expect((await first).status).toBe('stopped');
    const second = runner.dispatch('agent:main:main', signal(SignalKind.UserMessage, 'second'));
    while (calls() < 2) await Promise.resolve();
    turns[1]?.resolve(reply('second reply'));
    expect((await second).status).toBe('completed');
    const third = runner.dispatch('agent:main:main', signal(SignalKind.UserMessage, 'third'));
    while (calls() < 3) await Promise.resolve();
    turns[0]?.resolve(reply('late reply of the stopped turn'));
    turns[2]?.resolve(reply('third reply'));
    expect((await third).status).toBe('completed');
    expect((await runner.session('agent:main:main'))?.history.map((m) => m.content)).toEqual([
      'warm',
      'warm reply',
      'first',
      'second',
      'second reply',
      'third',
      'third reply',
    ]);
    await runner.close();
  });

  it('a stopped turn whose engine never ends does not hold its session, and close() does not wait for it', async () => {
    const hung = deferred<TurnResult>();
    const { runner, calls } = await warmRunner((n) => (n === 0 ? hung.promise : Promise.resolve(reply('ok'))));
    const first = runner.dispatch('agent:main:main', signal(SignalKind.UserMessage, 'first'));
    while (calls() < 1) await Promise.resolve();
    await runner.dispatch('agent:main:main', signal(SignalKind.Stop));
    expect((await first).status).toBe('stopped');
    expect((await runner.dispatch('agent:main:main', signal(SignalKind.UserMessage, 'again'))).status).toBe(
      'completed',
    );
    await runner.close();
  });
});
