// A TurnStream stops buffering once no reader can read (streaming.md): when its last reader broke
// out, or when the stream itself is dropped unread. Checked by counting what its buffer holds
// (the buffer sits under an internal symbol key), never by timing or memory figures.
import { describe, expect, it } from 'vitest';
import { collect, collectionCounter, collectGarbage } from '@signalyard/test-utils';
import { createRunner, type EngineFn, type TurnEvent, type TurnStream } from 'signalyard';
import { deferred } from './support.js';

const BUFFER = Symbol.for('signalyard.turnStream.buffer');
/** How many events the stream holds unread. */
const buffered = (turn: TurnStream): number => (turn as unknown as Record<symbol, { size: number }>)[BUFFER]!.size;

/** An engine that emits `first`, waits for `gate`, then emits `many` more deltas. */
function chatty(gate: Promise<unknown>, many: number): EngineFn {
  return async (ctx) => {
    ctx.emitText('first');
    await gate;
    for (let i = 0; i < many; i++) ctx.emitText(`delta ${i} `);
    return { output: 'done', messages: [{ role: 'assistant', content: 'long reply' }] };
  };
}

describe('TurnStream buffering', () => {
  it('its only reader breaks out: nothing more is buffered, the turn still completes, a later loop ends at once', async () => {
    const gate = deferred();
    const runner = createRunner({ agents: [{ id: 'main', engine: chatty(gate.promise, 10_000) }] });
    const turn = runner.stream({ channel: 'cli', text: 'hi' });
    for await (const event of turn) if (event.type === 'text_delta') break;
    expect(buffered(turn)).toBe(0);
    gate.resolve();
    const outcome = await turn.outcome;
    expect(outcome).toMatchObject({ status: 'completed', output: 'done' });
    expect(buffered(turn)).toBe(0); // before: 10,001 events (the deltas and the outcome) kept until the stream went away
    expect(await collect(turn)).toEqual([]);
    expect((await runner.session(outcome.sessionKey))?.history.map((m) => m.content)).toEqual(['hi', 'long reply']);
    await runner.close();
  });

  it('one of two loops breaks out: the other still gets every later event', async () => {
    const gate = deferred();
    const runner = createRunner({ agents: [{ id: 'main', engine: chatty(gate.promise, 3) }] });
    const turn = runner.stream({ channel: 'cli', text: 'hi' });
    const quitter = (async () => {
      for await (const event of turn) return event; // breaks out at its first event
      return undefined;
    })();
    const stayer = collect(turn);
    expect(await quitter).toBeDefined();
    gate.resolve();
    const rest: TurnEvent[] = await stayer;
    expect(rest.at(-1)?.type).toBe('outcome');
    expect(rest.filter((e) => e.type === 'text_delta').map((e) => (e as { delta: string }).delta)).toContain(
      'delta 2 ',
    );
    expect(buffered(turn)).toBe(0);
    await runner.close();
  });

  it('a stream not iterated yet keeps every event (it may be read late), and releases each as it is read', async () => {
    const gate = deferred();
    const runner = createRunner({ agents: [{ id: 'main', engine: chatty(gate.promise, 5) }] });
    const turn = runner.stream({ channel: 'cli', text: 'hi' });
    gate.resolve();
    await turn.outcome;
    expect(buffered(turn)).toBe(8); // routed, 6 deltas, outcome
    const iterator = turn[Symbol.asyncIterator]();
    await iterator.next();
    expect(buffered(turn)).toBe(7);
    expect(await collect({ [Symbol.asyncIterator]: () => iterator })).toHaveLength(7);
    expect(buffered(turn)).toBe(0);
    await runner.close();
  });

  it('a stream dropped unread is not kept alive by its running turn: its buffer is collected while the turn goes on', async () => {
    const gate = deferred();
    const runner = createRunner({ agents: [{ id: 'main', engine: chatty(gate.promise, 1_000) }] });
    const counter = collectionCounter();
    const outcome = ((): Promise<unknown> => {
      const turn = runner.stream({ channel: 'cli', text: 'hi' });
      counter.track((turn as unknown as Record<symbol, object>)[BUFFER]!);
      return turn.outcome;
    })();
    expect(await counter.collected()).toBe(1); // the turn is still waiting at its gate
    gate.resolve();
    expect(await outcome).toMatchObject({ status: 'completed', output: 'done' });
    await runner.close();
  });

  it('a loop waiting for the next event is never collected with its stream', async () => {
    const gate = deferred();
    const runner = createRunner({ agents: [{ id: 'main', engine: chatty(gate.promise, 2) }] });
    const reading = (async () => {
      const events: TurnEvent[] = [];
      for await (const event of runner.stream({ channel: 'cli', text: 'hi' })) events.push(event);
      return events;
    })();
    for (let round = 0; round < 5; round++) {
      collectGarbage();
      await new Promise<void>((resolve) => setImmediate(resolve));
    }
    gate.resolve();
    const events = await reading;
    expect(events.map((e) => e.type)).toEqual(['routed', 'text_delta', 'text_delta', 'text_delta', 'outcome']);
    await runner.close();
  });
});
