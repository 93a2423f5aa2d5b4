import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { StageContext } from '@signalyard/pipeline';
import { collect, deferred, runtimeOf, stage, types } from './support.js';

/** A stage that waits until released (or forever), recording whether its signal fired. */
function waiting(name: string, log: { aborted?: unknown }, release?: Promise<void>) {
  return {
    name,
    run: async (ctx: StageContext) => {
      ctx.abortSignal.addEventListener('abort', () => {
        log.aborted = ctx.abortSignal.reason;
      });
      await (release ?? new Promise<void>(() => undefined));
      return { released: true };
    },
  };
}

describe('cancellation', () => {
  it('an already-aborted signal ends the run user_cancelled before any stage runs', async () => {
    let ran = false;
    const controller = new AbortController();
    controller.abort(new Error('user left'));
    const env = await runtimeOf({ stages: [{ name: 'a', run: () => ((ran = true), {}) }] }).run(null, {
      abortSignal: controller.signal,
    });
    expect(ran).toBe(false);
    expect(env).toMatchObject({ terminated: true, terminalReason: 'user_cancelled', currentStage: 'a', agentHops: 0 });
    expect(env.terminationReason).toContain('user left');
  });

  it('aborting mid-stage aborts the stage in flight and ends the run user_cancelled promptly, even if the stage ignores it', async () => {
    const log: { aborted?: unknown } = {};
    const controller = new AbortController();
    const runtime = runtimeOf({ stages: [stage('a', {}, { defaultNext: 'b' }), waiting('b', log), stage('c')] });
    const started = deferred();
    const events: string[] = [];
    const done = (async () => {
      for await (const event of runtime.stream(null, { abortSignal: controller.signal })) {
        events.push(
          event.type === 'stage_start' || event.type === 'stage_end' ? `${event.type}:${event.stage}` : event.type,
        );
        if (event.type === 'stage_start' && event.stage === 'b') started.resolve();
        if (event.type === 'end') return event.envelope;
      }
      return undefined;
    })();
    await started.promise;
    controller.abort('stop');
    const env = await done;
    expect(log.aborted).toBe('stop');
    expect(env).toMatchObject({ terminated: true, terminalReason: 'user_cancelled', currentStage: 'b', agentHops: 2 });
    expect(env!.errors).toMatchObject([{ stage: 'b', code: 'ABORTED' }]);
    expect(env!.outputs).toEqual({ a: {} });
    expect(events).toEqual(['stage_start:a', 'stage_end:a', 'stage_start:b', 'stage_end:b', 'end']);
  });

  it('aborting between stages stops before the next one', async () => {
    const controller = new AbortController();
    const runtime = runtimeOf({
      stages: [{ name: 'a', run: () => (controller.abort(), {}), defaultNext: 'b' }, stage('b')],
    });
    const env = await runtime.run(null, { abortSignal: controller.signal });
    expect(env.terminalReason).toBe('user_cancelled');
    expect(env.currentStage).toBe('b');
    expect(env.trace.map((t) => t.stage)).toEqual(['a']);
    expect(env.outputs).toEqual({ a: {} });
  });

  it('cancels a resumed run too', async () => {
    const runtime = runtimeOf({ stages: [stage('a', { q: 1 }, { defaultNext: 'clarification' })] });
    const paused = await runtime.run(null);
    const controller = new AbortController();
    controller.abort();
    const env = await runtime.resume(paused, { text: 'x' }, { abortSignal: controller.signal });
    expect(env.terminalReason).toBe('user_cancelled');
    expect(env.resolvedInterrupts).toHaveLength(1);
  });

  it('removes its abort listeners when the run ends', async () => {
    const controller = new AbortController();
    const add = vi.spyOn(controller.signal, 'addEventListener');
    const remove = vi.spyOn(controller.signal, 'removeEventListener');
    await runtimeOf({ stages: [stage('a')] }).run(null, { abortSignal: controller.signal });
    expect(add).toHaveBeenCalledTimes(1);
    expect(remove).toHaveBeenCalledTimes(1);
  });

  it('the stream of a cancelled run ends with end', async () => {
    const controller = new AbortController();
    controller.abort();
    const events = await collect(runtimeOf({ stages: [stage('a')] }).stream(null, { abortSignal: controller.signal }));
    expect(types(events)).toEqual(['end']);
  });
});

describe('timeouts (fake timers)', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('a stage over its timeoutMs is aborted and fails with PIPELINE_STAGE_TIMEOUT, going to errorNext', async () => {
    const log: { aborted?: unknown } = {};
    const runtime = runtimeOf({
      stages: [
        { ...waiting('slow', log), timeoutMs: 1000, errorNext: 'fallback' },
        stage('fallback', { used: 'fallback' }),
      ],
    });
    const promise = runtime.run(null);
    await vi.advanceTimersByTimeAsync(999);
    expect(log.aborted).toBeUndefined();
    await vi.advanceTimersByTimeAsync(1);
    const env = await promise;
    expect(log.aborted).toMatchObject({ code: 'PIPELINE_STAGE_TIMEOUT', stage: 'slow' });
    expect(env.errors).toMatchObject([{ stage: 'slow', code: 'PIPELINE_STAGE_TIMEOUT' }]);
    expect(env.errors[0]!.error).toContain('1000 ms');
    expect(env.trace.map((t) => t.stage)).toEqual(['slow', 'fallback']);
    expect(env.terminalReason).toBe('completed');
  });

  it('a stage over its timeoutMs without errorNext ends the run stage_failed', async () => {
    const runtime = runtimeOf({ stages: [{ ...waiting('slow', {}), timeoutMs: 50 }] });
    const promise = runtime.run(null);
    await vi.advanceTimersByTimeAsync(50);
    expect((await promise).terminalReason).toBe('stage_failed');
  });

  it('a stage that finishes in time clears its timer', async () => {
    const release = deferred();
    const runtime = runtimeOf({ stages: [{ ...waiting('quick', {}, release.promise), timeoutMs: 1000 }] });
    const promise = runtime.run(null);
    await vi.advanceTimersByTimeAsync(10);
    release.resolve();
    const env = await promise;
    expect(env.terminalReason).toBe('completed');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a run timeoutMs ends the run timeout_exceeded and aborts the stage in flight', async () => {
    const log: { aborted?: unknown } = {};
    const runtime = runtimeOf({ stages: [stage('a', {}, { defaultNext: 'b' }), waiting('b', log)] });
    const promise = runtime.run(null, { timeoutMs: 5000 });
    await vi.advanceTimersByTimeAsync(5000);
    const env = await promise;
    expect(env).toMatchObject({ terminated: true, terminalReason: 'timeout_exceeded', currentStage: 'b' });
    expect(env.terminationReason).toContain('5000 ms');
    expect(log.aborted).toBeDefined();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a user abort during a stage with timeoutMs is a cancellation, not a stage failure', async () => {
    const log: { aborted?: unknown } = {};
    const controller = new AbortController();
    const runtime = runtimeOf({
      stages: [{ ...waiting('slow', log), timeoutMs: 1000, errorNext: 'fallback' }, stage('fallback')],
    });
    const promise = runtime.run(null, { abortSignal: controller.signal });
    await vi.advanceTimersByTimeAsync(10);
    controller.abort('bye');
    const env = await promise;
    expect(log.aborted).toBe('bye');
    expect(env.terminalReason).toBe('user_cancelled');
    expect(env.trace.map((t) => t.stage)).toEqual(['slow']);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('a run that finishes before its timeoutMs clears the timer', async () => {
    const env = await runtimeOf({ stages: [stage('a')] }).run(null, { timeoutMs: 1000 });
    expect(env.terminalReason).toBe('completed');
    expect(vi.getTimerCount()).toBe(0);
  });
});
