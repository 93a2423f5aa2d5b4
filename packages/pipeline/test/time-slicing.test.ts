// Regression: stages that never yield (synchronous ones, or async ones whose promises settle at
// once) used to block the event loop for the whole run, so `abortSignal`, `timeoutMs` and a
// kernel's `timeoutMs` quota could not stop it, and `run()` did not even return its promise
// before the loop ended. The runtime now yields to the event loop every few milliseconds.
//
// Nothing here measures time. The loops are unbounded, so a run ends only if a timer got to
// run during it; the tests count the stages that ran after an abort (none: a run checks its
// abort as soon as it has yielded), and, with `Date` faked and each stage taking 1 ms of it, how
// many stages run between two turns of the event loop. Aborts come from timers set at a given
// stage, so a slow machine runs the same stages as a fast one.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { Kernel, type StageConfig } from '@signalyard/pipeline';
import { runtimeOf } from './support.js';

/** Counts the stages a loop ran. */
interface Counter {
  count: number;
}

/**
 * A -> B -> A ... of stages that return at once (synchronously, or from an async function),
 * without end: neither hops nor iterations are bounded. Each stage adds one to `ran.count`.
 */
function loop(ran: Counter = { count: 0 }, async = false, step: () => void = () => undefined) {
  const work = () => {
    ran.count++;
    step();
    return {};
  };
  const run = async ? async () => work() : work;
  return runtimeOf({
    maxAgentHops: Infinity,
    maxIterations: Infinity,
    stages: [
      { name: 'a', run, defaultNext: 'b' },
      { name: 'b', run, defaultNext: 'a' },
    ],
  });
}

/**
 * A stage step that, at the `at`-th stage, sets a timer aborting `controller`: the timer can only
 * run when the loop lets the event loop run. Notes how many stages had run when it fired.
 */
function abortByTimerAt(at: number, controller: AbortController, ran: Counter) {
  const fired: { stagesBefore: number | undefined } = { stagesBefore: undefined };
  const step = () => {
    if (ran.count !== at) return;
    setTimeout(() => {
      fired.stagesBefore = ran.count;
      controller.abort('stop');
    }, 0);
  };
  return { fired, step };
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

afterEach(() => {
  vi.useRealTimers();
});

describe('runs let the event loop run (time slicing)', () => {
  it('run() returns its promise before any stage runs', async () => {
    let ran = 0;
    const runtime = runtimeOf({ stages: [{ name: 'a', run: () => (ran++, {}) }] });
    const promise = runtime.run(null);
    expect(ran).toBe(0);
    expect((await promise).terminalReason).toBe('completed');
    expect(ran).toBe(1);
  });

  it('an abort from a timer ends an endless loop of synchronous stages at its next turn of the event loop, with a bounded trace', async () => {
    const controller = new AbortController();
    const ran: Counter = { count: 0 };
    const { fired, step } = abortByTimerAt(5000, controller, ran);
    const env = await loop(ran, false, step).run(null, { abortSignal: controller.signal });
    expect(env.terminalReason).toBe('user_cancelled');
    expect(fired.stagesBefore).toBeGreaterThanOrEqual(5000);
    expect(ran.count).toBe(fired.stagesBefore); // no stage ran after the abort
    expect(env.trace.length).toBeLessThanOrEqual(1000);
    expect(env.droppedTraceEntries).toBe(env.agentHops - env.trace.length);
  });

  it('an abort from a timer ends an endless loop of async stages whose promises settle at once', async () => {
    const controller = new AbortController();
    const ran: Counter = { count: 0 };
    const { fired, step } = abortByTimerAt(5000, controller, ran);
    const env = await loop(ran, true, step).run(null, { abortSignal: controller.signal });
    expect(env.terminalReason).toBe('user_cancelled');
    expect(fired.stagesBefore).toBeGreaterThanOrEqual(5000);
    expect(ran.count).toBe(fired.stagesBefore);
  });

  it('synchronous stages yield to the event loop after every 4 ms of work', async () => {
    // Date is faked and each stage takes 1 ms of it; a real setImmediate chain notes the stage
    // count at each turn of the event loop, and aborts the run after 20 turns.
    vi.useFakeTimers({ toFake: ['Date'] });
    const ran: Counter = { count: 0 };
    const controller = new AbortController();
    const atTurns: number[] = [];
    const turn = () => {
      atTurns.push(ran.count);
      if (atTurns.length === 20) controller.abort('stop');
      else setImmediate(turn);
    };
    setImmediate(turn);
    const env = await loop(ran, false, () => vi.setSystemTime(Date.now() + 1)).run(null, {
      abortSignal: controller.signal,
    });
    expect(env.terminalReason).toBe('user_cancelled');
    const between = atTurns.slice(1).map((n, i) => n - (atTurns[i] as number));
    expect(Math.max(...between)).toBeLessThanOrEqual(4);
    expect(ran.count).toBe(atTurns.at(-1)); // and nothing after the abort
  });

  it("the run's timeoutMs ends an endless loop of synchronous stages", async () => {
    const env = await loop().run(null, { timeoutMs: 50 });
    expect(env.terminalReason).toBe('timeout_exceeded');
  });

  it('a DAG run of slow synchronous stages is cancelled between them', async () => {
    const runtime = runtimeOf({
      stages: [busy('a', 30), busy('b', 30, { requires: ['a'] }), busy('c', 30, { requires: ['b'] })],
    });
    const controller = new AbortController();
    setTimeout(() => controller.abort('stop'), 45); // during b: the loop sees it before c
    const env = await runtime.run(null, { mode: 'parallel', abortSignal: controller.signal });
    expect(env.terminalReason).toBe('user_cancelled');
    expect(env.completedStages).not.toContain('c');
  });

  it("a kernel's timeoutMs quota ends a process whose stages are synchronous", async () => {
    const kernel = new Kernel();
    kernel.registerService('loop', loop());
    const events: string[] = [];
    kernel.on((e) => {
      if (e.type === 'resource_exhausted') events.push(e.resource);
    });
    const env = await kernel.submit(null, { quota: { timeoutMs: 50 } }).result;
    expect(env.terminalReason).toBe('timeout_exceeded');
    expect(events).toEqual(['timeoutMs']);
  });

  it('other timers run while an endless run of synchronous stages is in progress', async () => {
    // The run ends only when the interval has fired three times and aborts it.
    let ticks = 0;
    const controller = new AbortController();
    const timer = setInterval(() => {
      if (++ticks === 3) controller.abort('stop');
    }, 5);
    try {
      const env = await loop().run(null, { abortSignal: controller.signal });
      expect(env.terminalReason).toBe('user_cancelled');
    } finally {
      clearInterval(timer);
    }
    expect(ticks).toBe(3);
  });
});
