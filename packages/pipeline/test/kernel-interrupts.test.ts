import { afterEach, describe, expect, it, vi } from 'vitest';
import { PipelineStateError, type Envelope, type Interrupt, type StageConfig } from '@signalyard/pipeline';
import { gated, kernelWith, lifeOf, record, ticks } from './kernel-support.js';
import { runtimeOf, throwsCode } from './support.js';

afterEach(() => {
  vi.useRealTimers();
});

/** gather → confirm (pauses on a confirmation) → act; `act` reads the input and every output. */
function approvalRuntime(seen: unknown[] = []) {
  const stages: StageConfig[] = [
    { name: 'gather', run: (ctx) => ({ facts: `facts about ${String(ctx.input)}` }), defaultNext: 'confirm' },
    {
      name: 'confirm',
      run: (ctx) => (ctx.response?.approved === true ? { approved: true } : { ask: 'go?' }),
      routingRules: [{ condition: 'ask', value: 'go?', target: 'confirmation' }],
      defaultNext: 'act',
    },
    { name: 'act', run: (ctx) => (seen.push({ input: ctx.input, outputs: { ...ctx.outputs } }), { acted: true }) },
  ];
  return runtimeOf({ stages });
}

describe('waiting and resume', () => {
  it('regression: resume continues the stored envelope with the original input and outputs intact (the source system rebuilt it from ids alone)', async () => {
    const seen: unknown[] = [];
    const kernel = kernelWith(approvalRuntime(seen));
    const { pid, result } = kernel.submit({ order: 42 });
    const paused = await result;
    expect(paused).toMatchObject({
      id: pid,
      terminated: false,
      currentStage: 'confirm',
      interrupt: { kind: 'confirmation', stage: 'confirm' },
    });
    const status = kernel.status(pid);
    expect(status?.state).toBe('waiting');
    expect(status?.interrupt).toEqual(paused.interrupt);
    expect(kernel.envelope(pid)).toBe(paused);

    const resumed = kernel.resume(pid, (paused.interrupt as Interrupt).id, { approved: true });
    expect(resumed.pid).toBe(pid);
    expect(kernel.status(pid)?.state).toBe('ready');
    const done = await resumed.result;
    expect(done).toMatchObject({ id: pid, terminated: true, terminalReason: 'completed', input: { order: 42 } });
    expect(done.outputs).toEqual({
      gather: { facts: 'facts about [object Object]' },
      confirm: { approved: true },
      act: { acted: true },
    });
    expect(seen).toEqual([
      {
        input: { order: 42 },
        outputs: { gather: { facts: 'facts about [object Object]' }, confirm: { approved: true } },
      },
    ]);
    expect(done.trace.map((t) => t.stage)).toEqual(['gather', 'confirm', 'confirm', 'act']);
    expect(done.resolvedInterrupts).toMatchObject([{ id: paused.interrupt?.id, response: { approved: true } }]);
    expect(done.agentHops).toBe(4);
  });

  it('a denied confirmation ends the process user_denied', async () => {
    const kernel = kernelWith(approvalRuntime());
    const { pid, result } = kernel.submit('x');
    const paused = await result;
    expect(await kernel.resume(pid, paused.interrupt?.id as string, { approved: false }).result).toMatchObject({
      terminalReason: 'user_denied',
    });
    expect(kernel.status(pid)?.state).toBe('zombie');
  });

  it('a listener may resume a process as soon as interrupt_raised arrives', async () => {
    const kernel = kernelWith(approvalRuntime());
    kernel.on((e) => {
      if (e.type === 'interrupt_raised') kernel.resume(e.pid, e.interrupt.id, { approved: true });
    });
    const { pid } = kernel.submit('x');
    await kernel.drain();
    expect(kernel.envelope(pid)).toMatchObject({ terminalReason: 'completed' });
  });

  it('a process can pause and resume several times', async () => {
    const runtime = runtimeOf({
      stages: [
        {
          name: 'ask',
          run: (ctx) => ({ n: ctx.envelope.resolvedInterrupts.length }),
          routingRules: [
            { condition: 'n', value: 0, target: 'clarification' },
            { condition: 'n', value: 1, target: 'clarification' },
          ],
        },
      ],
    });
    const kernel = kernelWith(runtime);
    let handle = kernel.submit('x');
    let env: Envelope = await handle.result;
    while (env.interrupt !== undefined) {
      handle = kernel.resume(handle.pid, env.interrupt.id, { text: 'more' });
      env = await handle.result;
    }
    expect(env).toMatchObject({ terminalReason: 'completed', outputs: { ask: { n: 2 } } });
    expect(env.resolvedInterrupts).toHaveLength(2);
  });
});

describe('resume misuse, checked in order', () => {
  it('an unknown pid is KERNEL_UNKNOWN_PROCESS, before anything else', () => {
    const kernel = kernelWith(approvalRuntime());
    const error = throwsCode(
      () => kernel.resume('nope', 'also-nope', 'not a response' as never),
      'KERNEL_UNKNOWN_PROCESS',
    );
    expect(error.message).toContain('"nope"');
    throwsCode(() => kernel.resume(42 as never, 'x', {}), 'KERNEL_UNKNOWN_PROCESS');
  });

  it('a process that is not waiting is KERNEL_INVALID_STATE, before the interrupt id is checked', async () => {
    const g = gated();
    const kernel = kernelWith(g.runtime);
    const { pid, result } = kernel.submit('x');
    expect(throwsCode(() => kernel.resume(pid, 'wrong', {}), 'KERNEL_INVALID_STATE')).toMatchObject({
      pid,
      state: 'ready',
    });
    await g.startedFor('x');
    expect(throwsCode(() => kernel.resume(pid, 'wrong', {}), 'KERNEL_INVALID_STATE')).toMatchObject({
      state: 'running',
    });
    g.release('x');
    await result;
    const error = throwsCode(() => kernel.resume(pid, 'wrong', {}), 'KERNEL_INVALID_STATE');
    expect(error.message).toContain('zombie');
  });

  it('a resumed process that is ready again cannot be resumed twice', async () => {
    const kernel = kernelWith(approvalRuntime());
    const { pid, result } = kernel.submit('x');
    const id = (await result).interrupt?.id as string;
    kernel.resume(pid, id, { approved: true });
    throwsCode(() => kernel.resume(pid, id, { approved: true }), 'KERNEL_INVALID_STATE');
    await kernel.drain();
  });

  it('an interrupt id that is not the pending one is KERNEL_INTERRUPT_MISMATCH, before the response is checked', async () => {
    const kernel = kernelWith(approvalRuntime());
    const { pid, result } = kernel.submit('x');
    const paused = await result;
    const error = throwsCode(() => kernel.resume(pid, 'not-it', 'bad' as never), 'KERNEL_INTERRUPT_MISMATCH');
    expect(error.message).toContain(paused.interrupt?.id);
    expect(kernel.status(pid)?.state).toBe('waiting');
  });

  it('a malformed response is KERNEL_ARGUMENT_INVALID and leaves the process waiting', async () => {
    const kernel = kernelWith(approvalRuntime());
    const { pid, result } = kernel.submit('x');
    const id = (await result).interrupt?.id as string;
    throwsCode(() => kernel.resume(pid, id, { approved: 'yes' } as never), 'KERNEL_ARGUMENT_INVALID');
    throwsCode(() => kernel.resume(pid, id, null as never), 'KERNEL_ARGUMENT_INVALID');
    expect(kernel.status(pid)?.state).toBe('waiting');
  });

  it('an expired interrupt is PipelineStateError INTERRUPT_EXPIRED and leaves the process waiting', async () => {
    vi.useFakeTimers();
    const runtime = runtimeOf({
      interruptTtlMs: { clarification: 1000 },
      stages: [{ name: 'ask', run: () => ({}), defaultNext: 'clarification' }],
    });
    const kernel = kernelWith(runtime);
    const { pid, result } = kernel.submit('x');
    await vi.advanceTimersByTimeAsync(0);
    const id = (await result).interrupt?.id as string;
    await vi.advanceTimersByTimeAsync(1000);
    const error = throwsCode(() => kernel.resume(pid, id, { text: 'late' }), 'INTERRUPT_EXPIRED');
    expect(PipelineStateError.isInstance(error)).toBe(true);
    expect(kernel.status(pid)?.state).toBe('waiting');
    kernel.cancel(pid);
    expect(kernel.status(pid)?.state).toBe('zombie');
  });

  it('an interrupt that expires while the resumed process waits for a slot ends it timeout_exceeded', async () => {
    vi.useFakeTimers();
    const g = gated();
    const kernel = kernelWith(g.runtime, { maxRunning: 1 });
    kernel.registerService(
      'asks',
      runtimeOf({
        interruptTtlMs: { clarification: 1000 },
        stages: [
          {
            name: 'ask',
            run: (ctx) => (ctx.response === undefined ? { q: 1 } : {}),
            routingRules: [{ condition: 'q', value: 1, target: 'clarification' }],
          },
        ],
      }),
    );
    const { pid, result } = kernel.submit('x', { service: 'asks' });
    await vi.advanceTimersByTimeAsync(0);
    const id = (await result).interrupt?.id as string;
    kernel.submit('blocker');
    await vi.advanceTimersByTimeAsync(0);
    expect(g.started).toEqual(['blocker']);
    const resumed = kernel.resume(pid, id, { text: 'in time' });
    await vi.advanceTimersByTimeAsync(1000);
    g.release('blocker');
    const env = await resumed.result;
    expect(env).toMatchObject({ terminated: true, terminalReason: 'timeout_exceeded', outputs: { ask: { q: 1 } } });
    expect(env.terminationReason).toContain('expired');
  });
});

describe('cancel', () => {
  it('cancels a ready process before it runs: its result resolves user_cancelled', async () => {
    const g = gated();
    const kernel = kernelWith(g.runtime, { maxRunning: 1 });
    const events = record(kernel);
    kernel.submit('first');
    const second = kernel.submit('second');
    await g.startedFor('first');
    expect(kernel.status(second.pid)?.state).toBe('ready');
    kernel.cancel(second.pid, 'no longer needed');
    const env = await second.result;
    expect(env).toMatchObject({
      id: second.pid,
      terminated: true,
      terminalReason: 'user_cancelled',
      terminationReason: 'cancelled: no longer needed',
      agentHops: 0,
      input: 'second',
    });
    expect(lifeOf(events, second.pid)).toEqual([
      'process_created',
      'new->ready',
      'ready->terminated',
      'terminated->zombie',
    ]);
    g.release('first');
    await kernel.drain();
    expect(g.started).toEqual(['first']);
  });

  it('cancels a blocked process', async () => {
    const g = gated();
    const kernel = kernelWith(g.runtime, {}, 1);
    kernel.submit('first');
    const blocked = kernel.submit('blocked');
    expect(kernel.status(blocked.pid)?.state).toBe('blocked');
    kernel.cancel(blocked.pid);
    expect(await blocked.result).toMatchObject({
      terminalReason: 'user_cancelled',
      terminationReason: 'cancelled: Kernel.cancel',
    });
    g.release('first');
    await kernel.drain();
    expect(g.started).toEqual(['first']);
  });

  it('cancels a running process: the stage in flight is aborted and the result resolves user_cancelled', async () => {
    const g = gated();
    const kernel = kernelWith(g.runtime);
    const events = record(kernel);
    const { pid, result } = kernel.submit('x');
    await g.startedFor('x');
    kernel.cancel(pid, 'stop');
    kernel.cancel(pid, 'twice is harmless');
    const env = await result;
    expect(env).toMatchObject({
      terminated: true,
      terminalReason: 'user_cancelled',
      terminationReason: 'cancelled: stop',
    });
    expect(g.aborted).toEqual(['x']);
    expect(lifeOf(events, pid)).toEqual([
      'process_created',
      'new->ready',
      'ready->running',
      'running->terminated',
      'terminated->zombie',
    ]);
  });

  it('cancels a waiting process: it ends at once, keeping its outputs', async () => {
    const kernel = kernelWith(approvalRuntime());
    const events = record(kernel);
    const { pid, result } = kernel.submit('x');
    const paused = await result;
    kernel.cancel(pid, 'user left');
    expect(kernel.status(pid)?.state).toBe('zombie');
    const final = kernel.envelope(pid) as Envelope;
    expect(final).toMatchObject({
      terminated: true,
      terminalReason: 'user_cancelled',
      terminationReason: 'cancelled: user left',
      currentStage: 'confirm',
    });
    expect(final.interrupt).toBeUndefined();
    expect(final.outputs).toEqual(paused.outputs);
    expect(lifeOf(events, pid).slice(-2)).toEqual(['waiting->terminated', 'terminated->zombie']);
  });

  it('cancels a resumed process still queued: the resume handle resolves user_cancelled', async () => {
    const g = gated();
    const kernel = kernelWith(g.runtime, { maxRunning: 1 });
    kernel.registerService('asks', approvalRuntime());
    const { pid, result } = kernel.submit('x', { service: 'asks' });
    const id = (await result).interrupt?.id as string;
    kernel.submit('blocker');
    await g.startedFor('blocker');
    const resumed = kernel.resume(pid, id, { approved: true });
    kernel.cancel(pid);
    expect(await resumed.result).toMatchObject({ terminalReason: 'user_cancelled', outputs: { gather: {} } });
    g.release('blocker');
    await kernel.drain();
  });

  it('is a no-op on a terminated process, and misuse is typed', async () => {
    const kernel = kernelWith(approvalRuntime());
    const { pid, result } = kernel.submit('x');
    const id = (await result).interrupt?.id as string;
    await kernel.resume(pid, id, { approved: true }).result;
    kernel.cancel(pid);
    expect(kernel.envelope(pid)?.terminalReason).toBe('completed');
    throwsCode(() => kernel.cancel('nope'), 'KERNEL_UNKNOWN_PROCESS');
    throwsCode(() => kernel.cancel(pid, 42 as never), 'KERNEL_ARGUMENT_INVALID');
  });

  it('the submit abortSignal cancels the process in any state, and an aborted one never starts', async () => {
    const g = gated();
    const kernel = kernelWith(g.runtime);
    const before = new AbortController();
    before.abort(new Error('gone'));
    expect(await kernel.submit('never', { abortSignal: before.signal }).result).toMatchObject({
      terminalReason: 'user_cancelled',
      terminationReason: 'cancelled: gone',
    });

    const running = new AbortController();
    const r = kernel.submit('running', { abortSignal: running.signal });
    await g.startedFor('running');
    running.abort('enough');
    expect(await r.result).toMatchObject({ terminalReason: 'user_cancelled', terminationReason: 'cancelled: enough' });

    kernel.registerService('asks', approvalRuntime());
    const waiting = new AbortController();
    const w = kernel.submit('w', { service: 'asks', abortSignal: waiting.signal });
    await w.result;
    waiting.abort('bye');
    expect(kernel.envelope(w.pid)).toMatchObject({
      terminalReason: 'user_cancelled',
      terminationReason: 'cancelled: bye',
    });

    // after the process ended, the signal is no longer watched
    const done = new AbortController();
    const d = kernel.submit('d', { service: 'asks', abortSignal: done.signal });
    kernel.cancel(d.pid);
    await ticks();
    kernel.reap(d.pid);
    done.abort();
    expect(g.started).toEqual(['running']);
  });
});
