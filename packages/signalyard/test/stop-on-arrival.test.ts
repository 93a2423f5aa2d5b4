import { Action, SignalKind, signal, type RunnerEvent } from '@signalyard/core';
import { createRunner } from 'signalyard';
import { describe, expect, it } from 'vitest';

const engine = async () => ({ messages: [{ role: 'assistant' as const, content: 'ok' }] });

describe('a stop routed on arrival', () => {
  it('to an idle session stops nothing, and a message sent right after it is served', async () => {
    const runner = createRunner({ agents: [{ id: 'main', engine }] });
    const stop = runner.dispatch('agent:main:main', signal(SignalKind.Stop));
    const after = runner.handle({ channel: 'cli', text: 'after the stop' });
    expect(await stop).toMatchObject({ status: 'completed', action: Action.GracefulStop });
    expect((await after).status).toBe('completed');
    expect((await runner.session('agent:main:main'))?.history.map((m) => m.content)).toEqual(['after the stop', 'ok']);
    await runner.close();
  });

  it('to a loaded idle session stops nothing either', async () => {
    const runner = createRunner({
      agents: [{ id: 'main', engine, routes: [{ kind: SignalKind.Stop, action: Action.ForceStop }] }],
    });
    await runner.handle({ channel: 'cli', text: 'warm up' });
    const stop = runner.dispatch('agent:main:main', signal(SignalKind.Stop));
    const after = runner.handle({ channel: 'cli', text: 'next' });
    expect((await stop).status).toBe('completed');
    expect((await after).status).toBe('completed');
    await runner.close();
  });
});

describe('outcome events', () => {
  it('have exactly the contract shape { type, outcome }, with the signal readable but not enumerable', async () => {
    const runner = createRunner({ agents: [{ id: 'main', engine }] });
    const events: RunnerEvent[] = [];
    runner.on((e) => events.push(e));
    const outcome = await runner.handle({ channel: 'cli', text: 'hi' });
    const event = events.find((e) => e.type === 'outcome');
    expect(event).toEqual({ type: 'outcome', outcome });
    expect(Object.keys(event ?? {})).toEqual(['type', 'outcome']);
    expect(event?.type === 'outcome' ? event.signal?.kind : undefined).toBe('user_message');
    await runner.close();
  });
});
