import { Action, SignalKind, signal } from '@signalyard/core';
import { createRunner, type TurnResult } from 'signalyard';
import { describe, expect, it } from 'vitest';

/** A promise with its resolve, settled by the test. */
function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

const reply = (content: string): TurnResult => ({ messages: [{ role: 'assistant', content }] });

// The session queue's fast lane (no lock, no durable inbox) waits on an engine turn with callbacks
// shared by the session's signals; a stopped turn's wait is abandoned while the engine's promise
// still holds them. Its late end must not be taken for the next signal's.
describe('the fast lane', () => {
  it("ignores a stopped turn's late end: the next signal ends with its own engine's", async () => {
    const turns = [deferred<TurnResult>(), deferred<TurnResult>()];
    let calls = 0;
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          routes: [{ kind: SignalKind.Stop, action: Action.ForceStop }],
          engine: (ctx) =>
            ctx.signal.payload === 'warm'
              ? Promise.resolve(reply('warm reply'))
              : (turns[calls++] as { promise: Promise<TurnResult> }).promise,
        },
      ],
    });
    await runner.start(); // the lane runs signals once the runner has started
    await runner.dispatch('agent:main:main', signal(SignalKind.UserMessage, 'warm')); // and the session is loaded
    const first = runner.dispatch('agent:main:main', signal(SignalKind.UserMessage, 'first'));
    while (calls < 1) await Promise.resolve();
    const stop = runner.dispatch('agent:main:main', signal(SignalKind.Stop));
    expect((await first).status).toBe('stopped');
    expect((await stop).status).toBe('completed');
    const second = runner.dispatch('agent:main:main', signal(SignalKind.UserMessage, 'second'));
    let secondDone = false;
    void second.then(() => {
      secondDone = true;
    });
    while (calls < 2) await Promise.resolve();
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
    while (calls < 3) await Promise.resolve();
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
    let calls = 0;
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          routes: [{ kind: SignalKind.Stop, action: Action.ForceStop }],
          engine: (ctx) =>
            ctx.signal.payload === 'warm'
              ? Promise.resolve(reply('warm reply'))
              : (turns[calls++] as { promise: Promise<TurnResult> }).promise,
        },
      ],
    });
    await runner.start(); // the lane runs signals once the runner has started
    await runner.dispatch('agent:main:main', signal(SignalKind.UserMessage, 'warm')); // and the session is loaded
    const first = runner.dispatch('agent:main:main', signal(SignalKind.UserMessage, 'first'));
    while (calls < 1) await Promise.resolve();
    await runner.dispatch('agent:main:main', signal(SignalKind.Stop));
    expect((await first).status).toBe('stopped');
    const second = runner.dispatch('agent:main:main', signal(SignalKind.UserMessage, 'second'));
    while (calls < 2) await Promise.resolve();
    turns[1]?.resolve(reply('second reply'));
    expect((await second).status).toBe('completed');
    const third = runner.dispatch('agent:main:main', signal(SignalKind.UserMessage, 'third'));
    while (calls < 3) await Promise.resolve();
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
    let calls = 0;
    const runner = createRunner({
      agents: [
        {
          id: 'main',
          routes: [{ kind: SignalKind.Stop, action: Action.ForceStop }],
          engine: (ctx) =>
            ctx.signal.payload === 'warm'
              ? Promise.resolve(reply('warm reply'))
              : calls++ === 0
                ? hung.promise
                : Promise.resolve(reply('ok')),
        },
      ],
    });
    await runner.start(); // the lane runs signals once the runner has started
    await runner.dispatch('agent:main:main', signal(SignalKind.UserMessage, 'warm')); // and the session is loaded
    const first = runner.dispatch('agent:main:main', signal(SignalKind.UserMessage, 'first'));
    while (calls < 1) await Promise.resolve();
    await runner.dispatch('agent:main:main', signal(SignalKind.Stop));
    expect((await first).status).toBe('stopped');
    expect((await runner.dispatch('agent:main:main', signal(SignalKind.UserMessage, 'again'))).status).toBe(
      'completed',
    );
    await runner.close();
  });
});
