import { afterEach, describe, expect, it, vi } from 'vitest';
import { PipelineBoundError, type KernelEvent, type StageContext } from '@signalyard/pipeline';
import { kernelWith, lifeOf, record } from './kernel-support.js';
import { echoModel, runtimeOf } from './support.js';

afterEach(() => {
  vi.useRealTimers();
});

const exhausted = (events: readonly KernelEvent[]) => events.filter((e) => e.type === 'resource_exhausted');

describe('quotas enforced while the process runs', () => {
  it('regression: a model-call quota stops the run at the refused call, not after the run (the source system checked quotas only after a run)', async () => {
    const model = echoModel();
    const after: string[] = [];
    const runtime = runtimeOf(
      {
        maxLlmCalls: 100,
        stages: [
          {
            name: 'chatty',
            run: async (ctx: StageContext) => {
              for (let i = 0; i < 50; i++) await ctx.model?.generate({ messages: [] });
              return {};
            },
            defaultNext: 'later',
          },
          { name: 'later', run: () => (after.push('later'), {}) },
        ],
      },
      model,
    );
    const kernel = kernelWith(runtime);
    const events = record(kernel);
    const { pid, result } = kernel.submit('x', { quota: { maxLlmCalls: 3 } });
    const env = await result;
    expect(model.calls).toHaveLength(3);
    expect(after).toEqual([]);
    expect(env).toMatchObject({ terminated: true, terminalReason: 'max_llm_calls_exceeded', llmCalls: 3 });
    expect(exhausted(events)).toEqual([
      { type: 'resource_exhausted', pid, resource: 'maxLlmCalls', used: 3, limit: 3 },
    ]);
    expect(lifeOf(events, pid).slice(-3)).toEqual(['resource_exhausted', 'running->terminated', 'terminated->zombie']);
    expect(kernel.status(pid)?.remaining).toEqual({ maxLlmCalls: 0 });
  });

  it('the smaller of the quota and the pipeline bound wins; a pipeline bound is not a quota exhaustion', async () => {
    const looping = (maxLlmCalls: number) =>
      runtimeOf(
        {
          maxLlmCalls,
          stages: [
            {
              name: 'call',
              run: async (ctx) => (await ctx.model?.generate({ messages: [] }), {}),
              defaultNext: 'call',
            },
          ],
          maxAgentHops: 1000,
        },
        echoModel(),
      );
    const tight = kernelWith(looping(2));
    const events = record(tight);
    const env = await tight.submit('x', { quota: { maxLlmCalls: 10 } }).result;
    expect(env).toMatchObject({ terminalReason: 'max_llm_calls_exceeded', llmCalls: 2 });
    expect(exhausted(events)).toEqual([]);

    const loose = kernelWith(looping(50));
    const looseEvents = record(loose);
    const env2 = await loose.submit('x', { quota: { maxLlmCalls: 4 } }).result;
    expect(env2).toMatchObject({ terminalReason: 'max_llm_calls_exceeded', llmCalls: 4 });
    expect(exhausted(looseEvents)).toMatchObject([{ resource: 'maxLlmCalls', used: 4, limit: 4 }]);
  });

  it('an agent-hop quota ends a self-loop before the hop that would exceed it', async () => {
    let runs = 0;
    const kernel = kernelWith(
      runtimeOf({ stages: [{ name: 'again', run: () => (runs++, {}), defaultNext: 'again' }] }),
    );
    const events = record(kernel);
    const { pid, result } = kernel.submit('x', { quota: { maxAgentHops: 5 } });
    expect(await result).toMatchObject({ terminalReason: 'max_agent_hops_exceeded', agentHops: 5 });
    expect(runs).toBe(5);
    expect(exhausted(events)).toEqual([
      { type: 'resource_exhausted', pid, resource: 'maxAgentHops', used: 5, limit: 5 },
    ]);
  });

  it('an iteration quota ends a loop-back cycle', async () => {
    const kernel = kernelWith(
      runtimeOf({
        maxIterations: 10,
        stages: [
          { name: 'a', run: () => ({}), defaultNext: 'b' },
          { name: 'b', run: () => ({}), defaultNext: 'a' },
        ],
      }),
    );
    const events = record(kernel);
    const env = await kernel.submit('x', { quota: { maxIterations: 2 } }).result;
    expect(env).toMatchObject({ terminalReason: 'max_iterations_exceeded', iteration: 2 });
    expect(exhausted(events)).toMatchObject([{ resource: 'maxIterations', used: 2, limit: 2 }]);
  });

  it('a tool-call quota refuses ctx.countToolCall inside the stage and ends the run even if the stage catches it', async () => {
    const refused: unknown[] = [];
    let hops = 0;
    const runtime = runtimeOf({
      stages: [
        {
          name: 'tools',
          run: (ctx) => {
            hops++;
            try {
              ctx.countToolCall(2);
            } catch (error) {
              refused.push(error);
            }
            return {};
          },
          defaultNext: 'tools',
        },
      ],
    });
    const kernel = kernelWith(runtime);
    const events = record(kernel);
    const { pid, result } = kernel.submit('x', { quota: { maxToolCalls: 5 } });
    const env = await result;
    expect(env.terminalReason).toBe('max_tool_calls_exceeded');
    expect(hops).toBe(3);
    expect(refused).toHaveLength(1);
    expect(PipelineBoundError.isInstance(refused[0])).toBe(true);
    expect(refused[0]).toMatchObject({
      code: 'PIPELINE_BOUND_EXCEEDED',
      bound: 'maxToolCalls',
      limit: 5,
      stage: 'tools',
    });
    expect(exhausted(events)).toEqual([
      { type: 'resource_exhausted', pid, resource: 'maxToolCalls', used: 4, limit: 5 },
    ]);
    expect(kernel.status(pid)?.usage.toolCalls).toBe(4);
  });

  it('the tool-call count survives resume: the quota holds over the whole process', async () => {
    const runtime = runtimeOf({
      stages: [
        {
          name: 'tools',
          run: (ctx) => {
            ctx.countToolCall(2);
            if (ctx.response === undefined) ctx.interrupt('checkpoint');
            return {};
          },
        },
      ],
    });
    const kernel = kernelWith(runtime);
    const { pid, result } = kernel.submit('x', { quota: { maxToolCalls: 3 } });
    const paused = await result;
    expect(kernel.status(pid)?.usage.toolCalls).toBe(2);
    const env = await kernel.resume(pid, paused.interrupt?.id as string, {}).result;
    expect(env.terminalReason).toBe('max_tool_calls_exceeded');
  });

  it('timeoutMs aborts the run in flight and ends it timeout_exceeded (fake timers)', async () => {
    vi.useFakeTimers();
    const aborted: unknown[] = [];
    const runtime = runtimeOf({
      stages: [
        {
          name: 'slow',
          run: (ctx) =>
            new Promise(() => {
              ctx.abortSignal.addEventListener('abort', () => aborted.push(ctx.abortSignal.reason));
            }),
        },
      ],
    });
    const kernel = kernelWith(runtime);
    const events = record(kernel);
    const { pid, result } = kernel.submit('x', { quota: { timeoutMs: 1000 } });
    let settled = false;
    void result.then(() => (settled = true));
    await vi.advanceTimersByTimeAsync(999);
    expect(settled).toBe(false);
    expect(kernel.status(pid)?.state).toBe('running');
    await vi.advanceTimersByTimeAsync(1);
    const env = await result;
    expect(env).toMatchObject({ terminated: true, terminalReason: 'timeout_exceeded' });
    expect(aborted).toHaveLength(1);
    expect(exhausted(events)).toEqual([
      { type: 'resource_exhausted', pid, resource: 'timeoutMs', used: 1000, limit: 1000 },
    ]);
  });

  it('timeoutMs counts running time only: time waiting on an interrupt does not use it', async () => {
    vi.useFakeTimers();
    const runtime = runtimeOf({
      stages: [
        {
          name: 'step',
          run: (ctx) =>
            new Promise((resolve) => {
              if (ctx.response === undefined) setTimeout(() => resolve({ need: true }), 600);
            }),
          routingRules: [{ condition: 'need', value: true, target: 'clarification' }],
        },
      ],
    });
    const kernel = kernelWith(runtime);
    const { pid, result } = kernel.submit('x', { quota: { timeoutMs: 1000 } });
    await vi.advanceTimersByTimeAsync(600);
    const paused = await result;
    expect(kernel.status(pid)?.state).toBe('waiting');
    await vi.advanceTimersByTimeAsync(60_000);
    const resumed = kernel.resume(pid, paused.interrupt?.id as string, { text: 'go on' });
    let settled = false;
    void resumed.result.then(() => (settled = true));
    await vi.advanceTimersByTimeAsync(399);
    expect(settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(await resumed.result).toMatchObject({ terminalReason: 'timeout_exceeded' });
    expect(kernel.status(pid)?.usage.elapsedMs).toBe(1000);
  });

  it('a run that ends within its quotas emits no resource_exhausted', async () => {
    const kernel = kernelWith(runtimeOf({ stages: [{ name: 'a', run: () => ({}) }] }));
    const events = record(kernel);
    const env = await kernel.submit('x', {
      quota: { maxLlmCalls: 1, maxToolCalls: 1, maxAgentHops: 1, maxIterations: 1, timeoutMs: 10 },
    }).result;
    expect(env.terminalReason).toBe('completed');
    expect(exhausted(events)).toEqual([]);
  });
});
