// Regression: stages that never yield (synchronous ones, or async ones whose promises settle at
// once) used to block the event loop for the whole run, so `abortSignal`, `timeoutMs` and a
// kernel's `timeoutMs` quota could not stop it, and `run()` did not even return its promise
// before the loop ended. The runtime now yields to the event loop every few milliseconds.
//
// These tests measure how long a run takes to stop after its abort, with a monotonic clock, and
// assert a generous bound: it is a bound on a hang (the code before the fix took seconds, or
// forever), not a speed figure.
import { describe, expect, it } from 'vitest';
import { Kernel, type StageConfig } from '@signalyard/pipeline';
import { runtimeOf } from './support.js';

/** A -> B -> A ... of stages that return at once (synchronously, or from an async function). */
function loop(maxAgentHops: number, async = false) {
  const run = async ? async () => ({}) : () => ({});
  return runtimeOf({
    maxAgentHops,
    maxIterations: Infinity,
    stages: [
      { name: 'a', run, defaultNext: 'b' },
      { name: 'b', run, defaultNext: 'a' },
    ],
  });
}

/** Aborts `controller` after `ms` (a real timer) and records when, on the monotonic clock. */
function abortAfter(controller: AbortController, ms: number): { at: number | undefined } {
  const fired: { at: number | undefined } = { at: undefined };
  setTimeout(() => {
    fired.at = performance.now();
    controller.abort('stop');
  }, ms);
  return fired;
}

/** A stage that keeps the thread busy for `ms` (a synchronous stage doing real work). */
function busy(name: string, ms: number, rest: Partial<StageConfig> = {}): StageConfig {
  return {
    name,
    run: () => {
      const until = performance.now() + ms;
      while (performance.now() < until) {
        // working
      }
      return {};
    },
    ...rest,
  };
}

describe('runs let the event loop run (time slicing)', () => {
  it('run() returns its promise before any stage runs', async () => {
    let ran = 0;
    const runtime = runtimeOf({ stages: [{ name: 'a', run: () => (ran++, {}) }] });
    const promise = runtime.run(null);
    expect(ran).toBe(0);
    expect((await promise).terminalReason).toBe('completed');
    expect(ran).toBe(1);
  });

  it('an abort at 50 ms ends a loop of synchronous stages within 100 ms of it, with a bounded trace', async () => {
    const controller = new AbortController();
    const fired = abortAfter(controller, 50);
    const env = await loop(2_000_000).run(null, { abortSignal: controller.signal });
    const endedAt = performance.now();
    expect(env.terminalReason).toBe('user_cancelled');
    expect(fired.at).toBeDefined();
    expect(endedAt - (fired.at as number)).toBeLessThan(100);
    expect(env.trace.length).toBeLessThanOrEqual(1000);
    expect(env.droppedTraceEntries).toBe(env.agentHops - env.trace.length);
  });

  it('an abort ends an unbounded loop of synchronous stages (which used to hang the process)', async () => {
    const controller = new AbortController();
    const fired = abortAfter(controller, 50);
    const env = await loop(Infinity).run(null, { abortSignal: controller.signal });
    expect(env.terminalReason).toBe('user_cancelled');
    expect(performance.now() - (fired.at as number)).toBeLessThan(100);
  });

  it('an abort ends a loop of async stages whose promises settle at once', async () => {
    const controller = new AbortController();
    const fired = abortAfter(controller, 50);
    const env = await loop(2_000_000, true).run(null, { abortSignal: controller.signal });
    expect(env.terminalReason).toBe('user_cancelled');
    expect(performance.now() - (fired.at as number)).toBeLessThan(100);
  });

  it("the run's timeoutMs ends a loop of synchronous stages", async () => {
    const startedAt = performance.now();
    const env = await loop(2_000_000).run(null, { timeoutMs: 50 });
    expect(env.terminalReason).toBe('timeout_exceeded');
    expect(performance.now() - startedAt).toBeLessThan(150);
  });

  it('a DAG run of slow synchronous stages is cancelled between them', async () => {
    const runtime = runtimeOf({
      stages: [busy('a', 30), busy('b', 30, { requires: ['a'] }), busy('c', 30, { requires: ['b'] })],
    });
    const controller = new AbortController();
    abortAfter(controller, 45);
    const env = await runtime.run(null, { mode: 'parallel', abortSignal: controller.signal });
    expect(env.terminalReason).toBe('user_cancelled');
    expect(env.completedStages).not.toContain('c');
  });

  it("a kernel's timeoutMs quota ends a process whose stages are synchronous", async () => {
    const kernel = new Kernel();
    kernel.registerService('loop', loop(2_000_000));
    const events: string[] = [];
    kernel.on((e) => {
      if (e.type === 'resource_exhausted') events.push(e.resource);
    });
    const startedAt = performance.now();
    const env = await kernel.submit(null, { quota: { timeoutMs: 50 } }).result;
    expect(env.terminalReason).toBe('timeout_exceeded');
    expect(events).toEqual(['timeoutMs']);
    expect(performance.now() - startedAt).toBeLessThan(150);
  });

  it('other timers run while a long run of synchronous stages is in progress', async () => {
    const ticks: number[] = [];
    const timer = setInterval(() => ticks.push(performance.now()), 5);
    try {
      const controller = new AbortController();
      abortAfter(controller, 60);
      await loop(Infinity).run(null, { abortSignal: controller.signal });
    } finally {
      clearInterval(timer);
    }
    expect(ticks.length).toBeGreaterThan(2);
  });
});
