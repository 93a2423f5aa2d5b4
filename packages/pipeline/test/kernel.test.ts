import { afterEach, describe, expect, expectTypeOf, it, vi } from 'vitest';
import { SignalyardError, isSignalyardError } from '@signalyard/core';
import {
  Envelope,
  Kernel,
  KernelError,
  PipelineStateError,
  PRIORITIES,
  isPriority,
  type Interrupt,
  type KernelEvent,
  type Priority,
  type ProcessHandle,
  type ProcessState,
  type ProcessStatus,
  type ResourceQuota,
} from '@signalyard/pipeline';
import { PROCESS_TRANSITIONS, canTransition } from '../src/kernel/process-state.js';
import { gated, kernelWith, lifeOf, record, ticks } from './kernel-support.js';
import { runtimeOf, stage, throwsCode } from './support.js';

const quick = () => runtimeOf({ stages: [stage('only', { ok: true })] });

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe('Kernel construction and services', () => {
  it('defaults to maxRunning 4 and retainTerminatedMs 300000', () => {
    const kernel = new Kernel();
    expect(kernel.maxRunning).toBe(4);
    expect(kernel.retainTerminatedMs).toBe(300_000);
    expect(new Kernel({ maxRunning: Infinity, retainTerminatedMs: 0 })).toMatchObject({
      maxRunning: Infinity,
      retainTerminatedMs: 0,
    });
  });

  it.each<[string, unknown]>([
    ['maxRunning 0', { maxRunning: 0 }],
    ['maxRunning 1.5', { maxRunning: 1.5 }],
    ['maxRunning "2"', { maxRunning: '2' }],
    ['retainTerminatedMs -1', { retainTerminatedMs: -1 }],
    ['retainTerminatedMs NaN', { retainTerminatedMs: Number.NaN }],
    ['retainTerminatedMs beyond setTimeout', { retainTerminatedMs: 2 ** 31 }],
    ['an unknown key', { maxrunning: 2 }],
    ['null options', null],
  ])('rejects %s with KERNEL_ARGUMENT_INVALID', (_, options) => {
    const error = throwsCode(() => new Kernel(options as never), 'KERNEL_ARGUMENT_INVALID');
    expect(KernelError.isInstance(error)).toBe(true);
  });

  it('registerService validates its arguments and refuses a duplicate name', () => {
    const kernel = new Kernel();
    kernel.registerService('a', quick(), { maxConcurrent: 2 });
    kernel.registerService('b', quick(), { maxConcurrent: Infinity });
    expect(throwsCode(() => kernel.registerService('a', quick()), 'KERNEL_DUPLICATE_SERVICE').message).toContain('"a"');
    throwsCode(() => kernel.registerService('', quick()), 'KERNEL_ARGUMENT_INVALID');
    throwsCode(() => kernel.registerService(7 as never, quick()), 'KERNEL_ARGUMENT_INVALID');
    const notRuntime = throwsCode(
      () => kernel.registerService('c', { run: () => undefined } as never),
      'KERNEL_ARGUMENT_INVALID',
    );
    expect(notRuntime.message).toContain('expected a PipelineRuntime');
    throwsCode(() => kernel.registerService('c', quick(), { maxConcurrent: 0 }), 'KERNEL_ARGUMENT_INVALID');
    throwsCode(() => kernel.registerService('c', quick(), { concurrency: 1 } as never), 'KERNEL_ARGUMENT_INVALID');
    // nothing was half-registered
    kernel.registerService('c', quick());
  });

  it('setHealth names an unknown service with KERNEL_UNKNOWN_SERVICE and rejects a non-boolean', () => {
    const kernel = kernelWith(quick());
    const error = throwsCode(() => kernel.setHealth('nope', false), 'KERNEL_UNKNOWN_SERVICE');
    expect(error.message).toContain('"nope"');
    expect(error.message).toContain('"s"');
    throwsCode(() => kernel.setHealth('s', 'no' as never), 'KERNEL_ARGUMENT_INVALID');
  });
});

describe('Kernel.submit', () => {
  it('runs the input on the default (first registered) service and resolves with the envelope, whose id is the pid', async () => {
    const kernel = new Kernel();
    kernel.registerService('first', runtimeOf({ stages: [{ name: 'echo', run: (ctx) => ({ got: ctx.input }) }] }));
    kernel.registerService('second', quick());
    const { pid, result } = kernel.submit({ q: 1 });
    const env = await result;
    expect(Envelope.isInstance(env)).toBe(true);
    expect(env).toMatchObject({
      id: pid,
      terminated: true,
      terminalReason: 'completed',
      outputs: { echo: { got: { q: 1 } } },
    });
    expect(kernel.status(pid)).toMatchObject({ pid, state: 'zombie', priority: 'normal', service: 'first' });
  });

  it('is ready at once and starts on a later microtask', async () => {
    const g = gated();
    const kernel = kernelWith(g.runtime);
    const { pid } = kernel.submit('x');
    expect(kernel.status(pid)?.state).toBe('ready');
    expect(g.started).toEqual([]);
    await g.startedFor('x');
    expect(kernel.status(pid)?.state).toBe('running');
    g.release('x');
    await kernel.drain();
  });

  it.each<[string, unknown]>([
    ['an unknown priority', { priority: 'urgent' }],
    ['an empty service name', { service: '' }],
    ['a quota of 0 model calls', { quota: { maxLlmCalls: 0 } }],
    ['a fractional tool-call quota', { quota: { maxToolCalls: 2.5 } }],
    ['a negative timeout', { quota: { timeoutMs: -5 } }],
    ['an infinite timeout', { quota: { timeoutMs: Infinity } }],
    ['an unknown quota key', { quota: { maxTokens: 5 } }],
    ['a quota that is not an object', { quota: 5 }],
    ['an abortSignal that is not one', { abortSignal: {} }],
    ['an unknown mode', { mode: 'dag' }],
    ['an unknown option', { prio: 'high' }],
    ['options that are not an object', 'high'],
  ])('rejects %s with KERNEL_ARGUMENT_INVALID and creates no process', (_, opts) => {
    const kernel = kernelWith(quick());
    const events = record(kernel);
    const error = throwsCode(() => kernel.submit('x', opts as never), 'KERNEL_ARGUMENT_INVALID');
    expect(KernelError.isInstance(error) ? error.argument : undefined).toMatch(/^opts/);
    expect(events).toEqual([]);
  });

  it('accepts every priority and a full quota', async () => {
    const kernel = kernelWith(quick());
    const handles = PRIORITIES.map((priority) =>
      kernel.submit(priority, {
        priority,
        quota: { maxLlmCalls: 1, maxToolCalls: 1, maxAgentHops: 1, maxIterations: 1, timeoutMs: 1000 },
      }),
    );
    const envs = await Promise.all(handles.map((h) => h.result));
    expect(envs.map((e) => e.terminalReason)).toEqual(PRIORITIES.map(() => 'completed'));
  });
});

describe('re-entrancy', () => {
  it('a stage may submit, inspect and cancel processes of its own kernel', async () => {
    const kernel = new Kernel({ maxRunning: 2 });
    const children: string[] = [];
    kernel.registerService(
      'parent',
      runtimeOf({
        stages: [
          {
            name: 'spawn',
            run: () => {
              const keep = kernel.submit('kept', { service: 'child' });
              const drop = kernel.submit('dropped', { service: 'child' });
              kernel.cancel(drop.pid);
              children.push(keep.pid, drop.pid);
              return { state: kernel.status(keep.pid)?.state };
            },
          },
        ],
      }),
    );
    kernel.registerService('child', runtimeOf({ stages: [{ name: 'c', run: (ctx) => ({ got: ctx.input }) }] }));
    const env = await kernel.submit('go', { service: 'parent' }).result;
    await kernel.drain();
    expect(env.outputs).toEqual({ spawn: { state: 'ready' } });
    expect(children.map((pid) => kernel.envelope(pid)?.terminalReason)).toEqual(['completed', 'user_cancelled']);
  });
});

describe('run mode', () => {
  it("mode 'parallel' runs the service's pipeline as a DAG, with the quota as its bounds", async () => {
    const runtime = runtimeOf({
      stages: [stage('a', { a: 1 }), stage('b', { b: 1 }), { ...stage('c', { c: 1 }), requires: ['a', 'b'] }],
    });
    const kernel = kernelWith(runtime);
    const env = await kernel.submit('x', { mode: 'parallel' }).result;
    expect(env).toMatchObject({ mode: 'parallel', terminalReason: 'completed', completedStages: ['a', 'b', 'c'] });
    const bounded = await kernel.submit('x', { mode: 'parallel', quota: { maxAgentHops: 2 } }).result;
    expect(bounded).toMatchObject({ mode: 'parallel', terminated: true, terminalReason: 'max_agent_hops_exceeded' });
    expect((await kernel.submit('x').result).mode).toBe('sequential');
  });
});

describe('dispatch to unknown and unhealthy services', () => {
  it('an unknown service terminates the process unknown_service without running anything', async () => {
    const kernel = kernelWith(quick());
    const events = record(kernel);
    const { pid, result } = kernel.submit('x', { service: 'billing' });
    const env = await result;
    expect(env).toMatchObject({
      id: pid,
      terminated: true,
      terminalReason: 'unknown_service',
      agentHops: 0,
      input: 'x',
    });
    expect(env.terminationReason).toContain('"billing"');
    expect(env.terminationReason).toContain('"s"');
    expect(events[0]).toEqual({ type: 'process_created', pid, priority: 'normal', service: 'billing' });
    expect(lifeOf(events, pid)).toEqual(['process_created', 'new->terminated', 'terminated->zombie']);
    expect(kernel.status(pid)).toMatchObject({ state: 'zombie', service: 'billing' });
  });

  it('with no service registered, a submission without a service is unknown_service', async () => {
    const kernel = new Kernel();
    const { pid, result } = kernel.submit('x');
    expect(await result).toMatchObject({ terminalReason: 'unknown_service', currentStage: 'end' });
    expect(kernel.status(pid)?.service).toBe('');
    expect(Envelope.fromJSON((await result).toJSON())).toEqual(await result);
  });

  it('an unhealthy service terminates the process service_unhealthy and does not dispatch it', async () => {
    let ran = 0;
    const kernel = kernelWith(runtimeOf({ stages: [{ name: 'a', run: () => (ran++, {}) }] }));
    kernel.setHealth('s', false);
    const events = record(kernel);
    const { pid, result } = kernel.submit('x');
    expect(await result).toMatchObject({ terminated: true, terminalReason: 'service_unhealthy', currentStage: 'a' });
    expect(lifeOf(events, pid)).toEqual(['process_created', 'new->terminated', 'terminated->zombie']);
    kernel.setHealth('s', true);
    expect((await kernel.submit('y').result).terminalReason).toBe('completed');
    expect(ran).toBe(1);
  });

  it('a service that turns unhealthy while processes queue ends them at dispatch; running ones finish', async () => {
    const g = gated();
    const kernel = kernelWith(g.runtime, { maxRunning: 1 });
    const first = kernel.submit('first');
    await g.startedFor('first');
    const queued = kernel.submit('queued');
    await ticks();
    expect(kernel.status(queued.pid)?.state).toBe('ready');
    kernel.setHealth('s', false);
    g.release('first');
    expect((await first.result).terminalReason).toBe('completed');
    expect(await queued.result).toMatchObject({ terminalReason: 'service_unhealthy', agentHops: 0 });
    expect(g.started).toEqual(['first']);
  });
});

describe('status, usage and remaining quota', () => {
  it('returns undefined for an unknown pid and for non-strings', () => {
    const kernel = new Kernel();
    expect(kernel.status('nope')).toBeUndefined();
    expect(kernel.status(42 as never)).toBeUndefined();
    expect(kernel.envelope('nope')).toBeUndefined();
  });

  it('reports live usage while running and what remains of the quota', async () => {
    const model = { generate: () => Promise.resolve({ content: 'ok' }) };
    const step = { at: 0 };
    const gate = { release: (): void => undefined };
    const runtime = runtimeOf(
      {
        stages: [
          {
            name: 'think',
            run: async (ctx) => {
              await ctx.model?.generate({ messages: [] });
              await ctx.model?.generate({ messages: [] });
              ctx.countToolCall(3);
              step.at = 1;
              await new Promise<void>((resolve) => (gate.release = resolve));
              return {};
            },
          },
        ],
      },
      model,
    );
    const kernel = kernelWith(runtime);
    const { pid, result } = kernel.submit('x', { quota: { maxLlmCalls: 5, maxToolCalls: 10, maxAgentHops: 4 } });
    expect(kernel.status(pid)).toEqual({
      pid,
      state: 'ready',
      priority: 'normal',
      service: 's',
      usage: { llmCalls: 0, toolCalls: 0, agentHops: 0, iterations: 0, elapsedMs: 0 },
      remaining: { maxLlmCalls: 5, maxToolCalls: 10, maxAgentHops: 4 },
    });
    while (step.at === 0) await ticks(1);
    const running = kernel.status(pid) as ProcessStatus;
    expect(running.state).toBe('running');
    expect(running.usage).toMatchObject({ llmCalls: 2, toolCalls: 3, agentHops: 1, iterations: 0 });
    expect(running.remaining).toEqual({ maxLlmCalls: 3, maxToolCalls: 7, maxAgentHops: 3 });
    gate.release();
    await result;
    expect(kernel.status(pid)?.usage).toMatchObject({ llmCalls: 2, toolCalls: 3, agentHops: 1 });
  });

  it('counts only running time in elapsedMs and timeoutMs remaining', async () => {
    vi.useFakeTimers();
    const runtime = runtimeOf({
      stages: [{ name: 'slow', run: () => new Promise((resolve) => setTimeout(() => resolve({}), 300)) }],
    });
    const kernel = kernelWith(runtime);
    const { pid, result } = kernel.submit('x', { quota: { timeoutMs: 1000 } });
    await vi.advanceTimersByTimeAsync(100);
    expect(kernel.status(pid)).toMatchObject({
      state: 'running',
      usage: { elapsedMs: 100 },
      remaining: { timeoutMs: 900 },
    });
    await vi.advanceTimersByTimeAsync(200);
    await result;
    await vi.advanceTimersByTimeAsync(5000);
    expect(kernel.status(pid)).toMatchObject({
      state: 'zombie',
      usage: { elapsedMs: 300 },
      remaining: { timeoutMs: 700 },
    });
  });
});

describe('lifecycle', () => {
  it('PROCESS_TRANSITIONS is exactly the contract table', () => {
    expect(PROCESS_TRANSITIONS).toEqual({
      new: ['ready', 'terminated'],
      ready: ['running', 'blocked', 'terminated'],
      blocked: ['ready', 'terminated'],
      running: ['waiting', 'terminated'],
      waiting: ['ready', 'terminated'],
      terminated: ['zombie'],
      zombie: [],
    });
    expect(Object.isFrozen(PROCESS_TRANSITIONS)).toBe(true);
    expect(canTransition('running', 'ready')).toBe(false);
    expect(canTransition('blocked', 'running')).toBe(false);
    expect(canTransition('waiting', 'ready')).toBe(true);
  });

  it('a whole life emits events in order: created, ready, running, waiting + interrupt, ready, running, terminated, zombie', async () => {
    const runtime = runtimeOf({
      stages: [
        {
          name: 'ask',
          run: (ctx) => (ctx.response === undefined ? { need: 'clarification' } : { answer: ctx.response.text }),
          routingRules: [{ condition: 'need', value: 'clarification', target: 'clarification' }],
        },
      ],
    });
    const kernel = kernelWith(runtime);
    const events = record(kernel);
    const { pid, result } = kernel.submit('q', { priority: 'high' });
    const paused = await result;
    const interrupt = paused.interrupt as Interrupt;
    await kernel.resume(pid, interrupt.id, { text: 'yes' }).result;
    expect(events).toEqual<KernelEvent[]>([
      { type: 'process_created', pid, priority: 'high', service: 's' },
      { type: 'process_state_changed', pid, from: 'new', to: 'ready' },
      { type: 'process_state_changed', pid, from: 'ready', to: 'running' },
      { type: 'process_state_changed', pid, from: 'running', to: 'waiting' },
      { type: 'interrupt_raised', pid, interrupt },
      { type: 'process_state_changed', pid, from: 'waiting', to: 'ready' },
      { type: 'process_state_changed', pid, from: 'ready', to: 'running' },
      { type: 'process_state_changed', pid, from: 'running', to: 'terminated' },
      { type: 'process_state_changed', pid, from: 'terminated', to: 'zombie' },
    ]);
  });

  it('a zombie is forgotten after retainTerminatedMs', async () => {
    vi.useFakeTimers();
    const kernel = kernelWith(quick(), { retainTerminatedMs: 1000 });
    const { pid, result } = kernel.submit('x');
    await vi.advanceTimersByTimeAsync(0);
    await result;
    expect(kernel.status(pid)?.state).toBe('zombie');
    await vi.advanceTimersByTimeAsync(999);
    expect(kernel.status(pid)?.state).toBe('zombie');
    await vi.advanceTimersByTimeAsync(1);
    expect(kernel.status(pid)).toBeUndefined();
    throwsCode(() => kernel.cancel(pid), 'KERNEL_UNKNOWN_PROCESS');
  });

  it('by default a zombie stays for 5 minutes; with Infinity until reaped', async () => {
    vi.useFakeTimers();
    const kernel = kernelWith(quick());
    const forever = kernelWith(quick(), { retainTerminatedMs: Infinity });
    const a = kernel.submit('x');
    const b = forever.submit('x');
    await vi.advanceTimersByTimeAsync(299_999);
    await Promise.all([a.result, b.result]);
    expect(kernel.status(a.pid)?.state).toBe('zombie');
    await vi.advanceTimersByTimeAsync(1);
    expect(kernel.status(a.pid)).toBeUndefined();
    await vi.advanceTimersByTimeAsync(10 * 300_000);
    expect(forever.status(b.pid)?.state).toBe('zombie');
    forever.reap(b.pid);
    expect(forever.status(b.pid)).toBeUndefined();
  });

  it('reap forgets a terminated process now; it refuses unknown and live ones', async () => {
    const g = gated();
    const kernel = kernelWith(g.runtime);
    const { pid, result } = kernel.submit('x');
    await g.startedFor('x');
    expect(throwsCode(() => kernel.reap(pid), 'KERNEL_INVALID_STATE')).toMatchObject({ pid, state: 'running' });
    g.release('x');
    await result;
    kernel.reap(pid);
    expect(kernel.status(pid)).toBeUndefined();
    expect(kernel.envelope(pid)).toBeUndefined();
    throwsCode(() => kernel.reap(pid), 'KERNEL_UNKNOWN_PROCESS');
    throwsCode(() => kernel.reap(undefined as never), 'KERNEL_UNKNOWN_PROCESS');
  });
});

describe('drain', () => {
  it('resolves at once when nothing is queued or running', async () => {
    await expect(new Kernel().drain()).resolves.toBeUndefined();
  });

  it('waits for ready and running processes but not for waiting ones', async () => {
    const g = gated();
    const asks = runtimeOf({ stages: [{ name: 'ask', run: () => ({ q: 1 }), defaultNext: 'clarification' }] });
    const kernel = new Kernel();
    kernel.registerService('g', g.runtime);
    kernel.registerService('asks', asks);
    const paused = kernel.submit('p', { service: 'asks' });
    const work = kernel.submit('w', { service: 'g' });
    let drained = false;
    const drain = kernel.drain().then(() => (drained = true));
    await g.startedFor('w');
    await paused.result;
    expect(drained).toBe(false);
    g.release('w');
    await drain;
    expect(kernel.status(work.pid)?.state).toBe('zombie');
    expect(kernel.status(paused.pid)?.state).toBe('waiting');
  });
});

describe('events', () => {
  it('on() returns an idempotent unsubscribe and rejects a non-function', async () => {
    const kernel = kernelWith(quick());
    const seen: string[] = [];
    const off = kernel.on((e) => seen.push(e.type));
    await kernel.submit('x').result;
    off();
    off();
    await kernel.submit('y').result;
    expect(seen).toEqual([
      'process_created',
      'process_state_changed',
      'process_state_changed',
      'process_state_changed',
      'process_state_changed',
    ]);
    throwsCode(() => kernel.on('log' as never), 'KERNEL_ARGUMENT_INVALID');
  });

  it('delivers events after the operation, so a listener sees a consistent kernel and may call it', async () => {
    const kernel = kernelWith(quick());
    const states: (ProcessState | undefined)[] = [];
    kernel.on((e) => {
      if (e.type === 'process_created') {
        states.push(kernel.status(e.pid)?.state);
        kernel.cancel(e.pid, 'from a listener');
      }
    });
    const { result } = kernel.submit('x');
    expect(states).toEqual(['ready']);
    expect(await result).toMatchObject({
      terminalReason: 'user_cancelled',
      terminationReason: 'cancelled: from a listener',
    });
  });

  it('a throwing listener neither breaks the kernel nor the other listeners; its error is rethrown on a microtask', async () => {
    const rethrown: unknown[] = [];
    const original = globalThis.queueMicrotask;
    vi.spyOn(globalThis, 'queueMicrotask').mockImplementation((callback) => {
      original(() => {
        try {
          callback();
        } catch (error) {
          rethrown.push(error);
        }
      });
    });
    const kernel = kernelWith(quick());
    const boom = new Error('listener bug');
    kernel.on(() => {
      throw boom;
    });
    const seen = record(kernel);
    const env = await kernel.submit('x').result;
    await ticks();
    expect(env.terminalReason).toBe('completed');
    expect(seen).toHaveLength(5);
    expect(rethrown).toEqual([boom, boom, boom, boom, boom]);
  });

  it('events() buffers events until read and ends when its abortSignal fires', async () => {
    const kernel = kernelWith(quick());
    const controller = new AbortController();
    const iterable = kernel.events({ abortSignal: controller.signal });
    const { pid, result } = kernel.submit('x');
    await result;
    const seen: string[] = [];
    for await (const event of iterable) {
      seen.push(event.type === 'process_state_changed' ? event.to : event.type);
      if (seen.length === 5) controller.abort();
    }
    expect(seen).toEqual(['process_created', 'ready', 'running', 'terminated', 'zombie']);
    expect(kernel.status(pid)?.state).toBe('zombie');
  });

  it('events() wakes a waiting reader, stops listening on break, and ends at once with an aborted signal', async () => {
    const kernel = kernelWith(quick());
    const iterator = kernel.events()[Symbol.asyncIterator]();
    const next = iterator.next();
    kernel.submit('x');
    expect((await next).value).toMatchObject({ type: 'process_created' });
    await iterator.return?.();
    expect(await iterator.next()).toEqual({ value: undefined, done: true });
    const aborted = kernel.events({ abortSignal: AbortSignal.abort() });
    const seen: KernelEvent[] = [];
    for await (const e of aborted) seen.push(e);
    expect(seen).toEqual([]);
    throwsCode(() => kernel.events({ abortSignal: 'stop' } as never), 'KERNEL_ARGUMENT_INVALID');
    throwsCode(() => kernel.events({ signal: new AbortController().signal } as never), 'KERNEL_ARGUMENT_INVALID');
  });
});

describe('KernelError', () => {
  class AppKernelError extends KernelError {}

  it('is a SignalyardError with its code and fields', () => {
    const e = new KernelError({ code: 'KERNEL_INVALID_STATE', message: 'm', pid: 'p', state: 'running' });
    expect(isSignalyardError(e, 'KERNEL_INVALID_STATE')).toBe(true);
    expect(e).toMatchObject({ name: 'KernelError', pid: 'p', state: 'running' });
    expect(e.argument).toBeUndefined();
    expect(new KernelError({ code: 'KERNEL_ARGUMENT_INVALID', message: 'm', argument: 'opts' }).argument).toBe('opts');
  });

  it('isInstance matches its own instances and subclasses only', () => {
    expect(KernelError.isInstance(new KernelError({ code: 'KERNEL_UNKNOWN_PROCESS', message: 'm' }))).toBe(true);
    expect(KernelError.isInstance(new AppKernelError({ code: 'KERNEL_UNKNOWN_PROCESS', message: 'm' }))).toBe(true);
    for (const other of [
      new SignalyardError({ code: 'KERNEL_UNKNOWN_PROCESS', message: 'm' }),
      new PipelineStateError({ code: 'NO_PENDING_INTERRUPT', message: 'm', envelopeId: 'e' }),
      new Error('m'),
      { code: 'KERNEL_UNKNOWN_PROCESS', name: 'KernelError' },
      null,
    ]) {
      expect(KernelError.isInstance(other)).toBe(false);
    }
    expect(PipelineStateError.isInstance(new KernelError({ code: 'KERNEL_UNKNOWN_PROCESS', message: 'm' }))).toBe(
      false,
    );
  });
});

describe('public types', () => {
  it('match the contract', () => {
    expectTypeOf<Priority>().toEqualTypeOf<'realtime' | 'high' | 'normal' | 'low' | 'idle'>();
    expectTypeOf<ProcessState>().toEqualTypeOf<
      'new' | 'ready' | 'running' | 'waiting' | 'blocked' | 'terminated' | 'zombie'
    >();
    expectTypeOf<ResourceQuota>().toEqualTypeOf<{
      maxLlmCalls?: number;
      maxToolCalls?: number;
      maxAgentHops?: number;
      maxIterations?: number;
      timeoutMs?: number;
    }>();
    expectTypeOf<ProcessHandle>().toEqualTypeOf<{ readonly pid: string; readonly result: Promise<Envelope> }>();
    expectTypeOf<ProcessStatus['usage']>().toEqualTypeOf<{
      llmCalls: number;
      toolCalls: number;
      agentHops: number;
      iterations: number;
      elapsedMs: number;
    }>();
    expectTypeOf<ProcessStatus['remaining']>().toEqualTypeOf<Partial<ResourceQuota>>();
    expectTypeOf<Extract<KernelEvent, { type: 'resource_exhausted' }>['resource']>().toEqualTypeOf<
      keyof ResourceQuota
    >();
    expectTypeOf<KernelEvent['type']>().toEqualTypeOf<
      'process_created' | 'process_state_changed' | 'interrupt_raised' | 'resource_exhausted'
    >();
    expectTypeOf<Kernel['submit']>().returns.toEqualTypeOf<ProcessHandle>();
    expectTypeOf<Kernel['resume']>().returns.toEqualTypeOf<ProcessHandle>();
    expectTypeOf<Kernel['on']>().returns.toEqualTypeOf<() => void>();
    expectTypeOf<Kernel['events']>().returns.toEqualTypeOf<AsyncIterable<KernelEvent>>();
  });

  it('PRIORITIES lists every priority, most urgent first, and isPriority recognises them', () => {
    expect(PRIORITIES).toEqual(['realtime', 'high', 'normal', 'low', 'idle']);
    expect(PRIORITIES.every((p) => isPriority(p))).toBe(true);
    expect(isPriority('urgent')).toBe(false);
    expect(isPriority(undefined)).toBe(false);
  });
});
