// One clock (decisions-wave3 §10): a runtime and a kernel read the time they record only through
// their `clock` option, so tests drive time with a clock of their own instead of fake timers.
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError, isSignalyardError, type Clock } from '@signalyard/core';
import { Kernel, KernelError, PipelineRuntime, PipelineUsageError, definePipeline } from '@signalyard/pipeline';
import { deferred, rejectsCode, thrown } from './support.js';

/** A clock that stands still until the test moves it. */
function manualClock(start = Date.UTC(2030, 0, 1)): Clock & { t: number } {
  const clock = {
    t: start,
    now: (): number => clock.t,
  };
  return clock;
}
const iso = (ms: number): string => new Date(ms).toISOString();

/** draft (advances the clock 5 s while it runs) -> review (asks for confirmation, expiring after 60 s) -> publish. */
function reviewPipeline(clock: { t: number }) {
  return definePipeline({
    name: 'review',
    interruptTtlMs: { confirmation: 60_000 },
    confirmationResumeStage: 'publish',
    stages: [
      {
        name: 'draft',
        run: () => {
          clock.t += 5_000;
          return { text: 'x' };
        },
        defaultNext: 'review',
      },
      { name: 'review', run: () => ({ ok: true }), defaultNext: 'confirmation' },
      { name: 'publish', run: () => ({ error: 'disk full' }), errorNext: 'end' },
    ],
  });
}

describe('PipelineRuntime({ clock })', () => {
  it('stamps the trace, interrupts, resolutions and errors with its clock, and checks expiry against it', async () => {
    const clock = manualClock();
    const t0 = clock.t;
    const runtime = new PipelineRuntime(reviewPipeline(clock), { clock });
    const paused = await runtime.run(null);
    expect(paused.trace.map((e) => [e.stage, e.startedAt, e.endedAt])).toEqual([
      ['draft', iso(t0), iso(t0 + 5_000)],
      ['review', iso(t0 + 5_000), iso(t0 + 5_000)],
    ]);
    expect(paused.interrupt?.createdAt).toBe(iso(t0 + 5_000));
    expect(paused.interrupt?.expiresAt).toBe(iso(t0 + 65_000));

    clock.t = t0 + 30_000;
    const done = await runtime.resume(paused, { approved: true });
    expect(done.resolvedInterrupts[0]?.resolvedAt).toBe(iso(t0 + 30_000));
    expect(done.errors).toEqual([{ stage: 'publish', error: 'disk full', at: iso(t0 + 30_000) }]);

    clock.t = t0 + 65_000; // the interrupt's expiry, reached on the clock alone (no timers)
    const error = await rejectsCode(runtime.resume(paused, { approved: true }), 'INTERRUPT_EXPIRED');
    expect(error.message).toContain(iso(t0 + 65_000));
  });

  it('a clock that stands still does not stop a run of synchronous stages from yielding: an abort still ends it', async () => {
    const runtime = new PipelineRuntime(
      definePipeline({
        name: 'loop',
        maxAgentHops: Infinity,
        maxIterations: Infinity,
        stages: [
          { name: 'a', run: () => ({}), defaultNext: 'b' },
          { name: 'b', run: () => ({}), defaultNext: 'a' },
        ],
      }),
      { clock: { now: () => 0 } },
    );
    const controller = new AbortController();
    setTimeout(() => {
      controller.abort('stop');
    }, 20);
    const env = await runtime.run(null, { abortSignal: controller.signal });
    expect(env.terminalReason).toBe('user_cancelled');
    expect(env.trace.at(-1)?.endedAt).toBe('1970-01-01T00:00:00.000Z');
  });

  it('refuses a clock that is not a Clock with PIPELINE_ARGUMENT_INVALID naming it', () => {
    for (const clock of [null, 5, { now: 'soon' }, {}]) {
      const error = thrown(() => new PipelineRuntime(reviewPipeline({ t: 0 }), { clock: clock as unknown as Clock }));
      expect(PipelineUsageError.isInstance(error)).toBe(true);
      expect((error as PipelineUsageError).code).toBe('PIPELINE_ARGUMENT_INVALID');
      expect((error as PipelineUsageError).message).toContain('expected a Clock { now(): number }');
    }
  });

  it('a clock that returns no time rejects the run with CLOCK_INVALID', async () => {
    const runtime = new PipelineRuntime(reviewPipeline({ t: 0 }), { clock: { now: () => Number.NaN } });
    const error = await rejectsCode(runtime.run(null), 'CLOCK_INVALID');
    expect(InvalidArgumentError.isInstance(error)).toBe(true);
  });
});

describe('new Kernel({ clock })', () => {
  it("a process's runs record the kernel's clock (not their runtime's), and its elapsed time follows that clock", async () => {
    const kernelClock = manualClock(Date.UTC(2031, 5, 1));
    const runtimeClock = manualClock(Date.UTC(1999, 0, 1));
    const gate = deferred<undefined>();
    const started = deferred<undefined>();
    const pipeline = definePipeline({
      name: 'slow',
      stages: [
        {
          name: 'work',
          run: async () => {
            started.resolve(undefined);
            await gate.promise;
            return {};
          },
        },
      ],
    });
    const kernel = new Kernel({ clock: kernelClock });
    kernel.registerService('slow', new PipelineRuntime(pipeline, { clock: runtimeClock }));
    const t0 = kernelClock.t;
    const { pid, result } = kernel.submit(null);
    await started.promise;
    kernelClock.t += 1_500;
    expect(kernel.status(pid)?.usage.elapsedMs).toBe(1_500);
    kernelClock.t += 500;
    gate.resolve(undefined);
    const env = await result;
    expect(env.trace[0]).toMatchObject({ startedAt: iso(t0), endedAt: iso(t0 + 2_000) });
    expect(kernel.status(pid)?.usage.elapsedMs).toBe(2_000);
  });

  it('checks interrupt expiry at resume against its clock', async () => {
    const clock = manualClock();
    const kernel = new Kernel({ clock });
    kernel.registerService('review', new PipelineRuntime(reviewPipeline(clock)));
    const paused = await kernel.submit(null).result;
    const interrupt = paused.interrupt;
    if (interrupt === undefined) throw new Error('expected the process to wait on its confirmation');
    clock.t += 60_000;
    const error = thrown(() => kernel.resume(paused.id, interrupt.id, { approved: true }));
    expect(isSignalyardError(error, 'INTERRUPT_EXPIRED')).toBe(true);
    expect(kernel.status(paused.id)?.state).toBe('waiting');
  });

  it('refuses a clock that is not a Clock with KERNEL_ARGUMENT_INVALID naming it', () => {
    for (const clock of [null, 'now', { now: 1 }]) {
      const error = thrown(() => new Kernel({ clock: clock as unknown as Clock }));
      expect(KernelError.isInstance(error)).toBe(true);
      expect((error as KernelError).code).toBe('KERNEL_ARGUMENT_INVALID');
      expect((error as KernelError).message).toContain('clock');
    }
  });

  it('a clock that returns no time ends the process stage_failed saying why, and the kernel keeps serving', async () => {
    let broken = true;
    const kernel = new Kernel({ clock: { now: () => (broken ? Number.NaN : Date.UTC(2030, 0, 1)) } });
    kernel.registerService('review', new PipelineRuntime(reviewPipeline({ t: 0 })));
    const env = await kernel.submit(null).result;
    expect(env.terminalReason).toBe('stage_failed');
    expect(env.terminationReason).toContain('clock.now()');
    broken = false;
    const next = await kernel.submit(null).result;
    expect(next.interrupt?.kind).toBe('confirmation');
  });
});
