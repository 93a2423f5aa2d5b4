import { describe, expect, it } from 'vitest';
import { SignalKind, signal, type PluginContext, type RunnerEvent } from '@signalyard/core';
import { collectionCounter, heapAfterGc } from '@signalyard/test-utils';
import { createRunner, rateLimitPlugin } from 'signalyard';

// Reachability, not timing: a settled signal must not stay reachable from the runner — except
// through its bounded log of recent events (runner.timeline), which keeps them on purpose: these
// tests turn it off, and the last one checks that the log lets go of what it has moved past.

describe('what the runner keeps after a signal settles', () => {
  it('a settled signal and its payload are unreachable once the outcome is delivered', async () => {
    const runner = createRunner({ agents: [{ id: 'main', engine: async () => ({}) }], timeline: false });
    const counter = collectionCounter();
    const n = 50;
    // The payload is made inside a call, so no local of the test itself keeps the last one alive.
    const send = (i: number) => {
      const payload = { text: `message ${i}`, blob: new Array(100).fill(i) };
      counter.track(payload);
      return runner.dispatch('agent:main:one', signal(SignalKind.UserMessage, payload));
    };
    for (let i = 0; i < n; i++) await send(i);
    expect(await counter.collected()).toBe(n);
    await runner.close();
  });

  it('signals settled while waiting (stopped by their caller) are released too', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const runner = createRunner({ agents: [{ id: 'main', engine: () => gate.then(() => ({})) }], timeline: false });
    const counter = collectionCounter();
    const first = runner.dispatch('agent:main:one', signal(SignalKind.UserMessage, 'first'));
    const waiting: Promise<unknown>[] = [];
    const send = (i: number) => {
      const payload = { text: `queued ${i}` };
      counter.track(payload);
      const stop = new AbortController();
      const outcome = runner.dispatch('agent:main:one', signal(SignalKind.UserMessage, payload), {
        abortSignal: stop.signal,
      });
      stop.abort(); // stopped while it waits behind the first
      return outcome;
    };
    for (let i = 0; i < 20; i++) waiting.push(send(i));
    await Promise.all(waiting);
    release();
    await first;
    expect(await counter.collected()).toBe(20);
    await runner.close();
  });
});

describe('what the timeline keeps', () => {
  it('keeps the last `limit` events of a session: older signals and their payloads are released', async () => {
    // Three entries per signal here (signal_received, route_decided, outcome): a limit of 3 keeps the last signal only.
    const runner = createRunner({ agents: [{ id: 'main', engine: async () => ({}) }], timeline: { limit: 3 } });
    const counter = collectionCounter();
    const n = 30;
    const send = (i: number) => {
      const payload = { text: `message ${i}`, blob: new Array(100).fill(i) };
      counter.track(payload);
      return runner.dispatch('agent:main:one', signal(SignalKind.UserMessage, payload));
    };
    for (let i = 0; i < n; i++) await send(i);
    expect(runner.timeline('agent:main:one').map((e) => e.event.type)).toEqual([
      'outcome',
      'route_decided',
      'signal_received',
    ]);
    expect(await counter.collected()).toBe(n - 1);
    await runner.close();
  });

  it('keeps the most recently active `sessions`: a session beyond the bound is forgotten whole', async () => {
    const runner = createRunner({
      agents: [{ id: 'main', engine: async () => ({}) }],
      timeline: { sessions: 2 },
    });
    const counter = collectionCounter();
    const send = (i: number) => {
      const payload = { text: `session ${i}` };
      counter.track(payload);
      return runner.dispatch(`agent:main:s${i}`, signal(SignalKind.UserMessage, payload));
    };
    for (let i = 0; i < 10; i++) await send(i);
    expect(runner.timeline('agent:main:s0')).toEqual([]);
    expect(runner.timeline('agent:main:s9')).toHaveLength(3);
    expect(await counter.collected()).toBe(8);
    await runner.close();
  });
});

describe('rateLimitPlugin memory', () => {
  it('drops the counts of sessions whose arrivals have all left the window', async () => {
    let clock = 0;
    const plugin = rateLimitPlugin({ perSession: 5, windowMs: 1000, now: () => clock });
    let listener!: (event: RunnerEvent) => void;
    const ctx: PluginContext = {
      on: (l) => {
        listener = l;
        return () => undefined;
      },
      handleCustomAction: () => undefined,
    };
    await plugin.setup?.(ctx);
    const arrive = (sessionKey: string) => {
      listener({ type: 'signal_received', sessionKey, agentId: 'main', signal: signal(SignalKind.UserMessage, 'x') });
    };
    const base = heapAfterGc();
    for (let i = 0; i < 100_000; i++) arrive(`agent:main:peer-${i}`);
    const full = heapAfterGc();
    clock = 5000; // every window is over; the next arrival sweeps
    arrive('agent:main:late');
    const swept = heapAfterGc();
    expect(full - base).toBeGreaterThan(4_000_000); // 100k sessions' counts: several MB
    expect(swept - base).toBeLessThan((full - base) / 4);
  });
});
