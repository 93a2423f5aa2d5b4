import { describe, expect, it } from 'vitest';
import {
  Kernel,
  PRIORITIES,
  type Envelope,
  type KernelEvent,
  type Priority,
  type ProcessHandle,
  type ResourceQuota,
  type StageContext,
} from '@signalyard/pipeline';
import { PROCESS_TRANSITIONS, canTransition } from '../src/kernel/process-state.js';
import { echoModel, runtimeOf } from './support.js';

/** A small seeded PRNG (mulberry32), so the load is random but the same on every run. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Job {
  readonly id: number;
  /** Microtask turns each stage execution waits. */
  readonly turns: number;
  /** Stage executions it wants (a self-loop). */
  readonly loops: number;
  readonly modelCalls: number;
  readonly toolCalls: number;
  /** Pauses on a clarification once. */
  readonly asks: boolean;
}

const SERVICES = [
  { name: 'alpha', maxConcurrent: 3 },
  { name: 'beta', maxConcurrent: 2 },
  { name: 'gamma', maxConcurrent: 5 },
] as const;
const MAX_RUNNING = 6;
const PROCESSES = 2000;

describe('kernel under load', () => {
  it('2,000 processes over 3 services with mixed priorities and random quotas drain completely, every result settles exactly once, and no limit is ever exceeded', async () => {
    const random = prng(20_260_119);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    const int = (min: number, max: number): number => min + Math.floor(random() * (max - min + 1));

    // concurrency as the stages see it
    const inStage = new Map<string, number>();
    const maxInStage = new Map<string, number>();
    let inStageTotal = 0;
    let maxInStageTotal = 0;

    const kernel = new Kernel({ maxRunning: MAX_RUNNING, retainTerminatedMs: Infinity });
    for (const service of SERVICES) {
      const name = service.name;
      const work = async (ctx: StageContext): Promise<Record<string, unknown>> => {
        const job = ctx.input as Job;
        const now = (inStage.get(name) ?? 0) + 1;
        inStage.set(name, now);
        maxInStage.set(name, Math.max(maxInStage.get(name) ?? 0, now));
        maxInStageTotal = Math.max(maxInStageTotal, ++inStageTotal);
        // A cancelled run stops waiting for its stage at once (the stage is aborted, not awaited):
        // from then on the stage's code no longer counts as the process running.
        let counted = true;
        const leave = (): void => {
          if (!counted) return;
          counted = false;
          inStage.set(name, (inStage.get(name) ?? 0) - 1);
          inStageTotal--;
        };
        ctx.abortSignal.addEventListener('abort', leave);
        try {
          for (let i = 0; i < job.turns; i++) await Promise.resolve();
          const hop = ctx.envelope.agentHops;
          if (hop === 1 && job.modelCalls > 0)
            for (let i = 0; i < job.modelCalls; i++) await ctx.model?.generate({ messages: [] });
          if (hop === 1 && job.toolCalls > 0) ctx.countToolCall(job.toolCalls);
          if (job.asks && ctx.envelope.resolvedInterrupts.length === 0 && ctx.response === undefined)
            ctx.interrupt('clarification', { id: job.id });
          return { again: hop < job.loops };
        } finally {
          leave();
        }
      };
      const runtime = runtimeOf(
        {
          name,
          maxLlmCalls: 100,
          maxAgentHops: 100,
          stages: [{ name: 'work', run: work, routingRules: [{ condition: 'again', value: true, target: 'work' }] }],
        },
        echoModel(),
      );
      kernel.registerService(name, runtime, { maxConcurrent: service.maxConcurrent });
    }

    // concurrency as the kernel's events tell it, and every transition checked against the table
    const running = new Map<string, number>();
    const maxRunningPerService = new Map<string, number>();
    const serviceOf = new Map<string, string>();
    let runningTotal = 0;
    let maxRunningTotal = 0;
    const badTransitions: KernelEvent[] = [];
    const exhausted = new Map<string, number>();
    const handles: ProcessHandle[] = [];
    const toCancelWhenRunning = new Set<string>();
    kernel.on((event) => {
      if (event.type === 'process_created') serviceOf.set(event.pid, event.service);
      if (event.type === 'resource_exhausted') exhausted.set(event.resource, (exhausted.get(event.resource) ?? 0) + 1);
      if (event.type === 'interrupt_raised') {
        // most are answered at once (from the listener), some later, some cancelled while waiting
        const roll = random();
        if (roll < 0.8) handles.push(kernel.resume(event.pid, event.interrupt.id, { text: 'answer' }));
        else if (roll < 0.9)
          queueMicrotask(() => handles.push(kernel.resume(event.pid, event.interrupt.id, { text: 'later' })));
        else kernel.cancel(event.pid, 'gave up while waiting');
      }
      if (event.type !== 'process_state_changed') return;
      if (!canTransition(event.from, event.to)) badTransitions.push(event);
      const service = serviceOf.get(event.pid) as string;
      if (event.to === 'running') {
        const n = (running.get(service) ?? 0) + 1;
        running.set(service, n);
        maxRunningPerService.set(service, Math.max(maxRunningPerService.get(service) ?? 0, n));
        maxRunningTotal = Math.max(maxRunningTotal, ++runningTotal);
        if (toCancelWhenRunning.delete(event.pid)) kernel.cancel(event.pid, 'cancelled while running');
      } else if (event.from === 'running') {
        running.set(service, (running.get(service) ?? 0) - 1);
        runningTotal--;
      }
    });

    const pids: string[] = [];
    for (let id = 0; id < PROCESSES; id++) {
      const job: Job = {
        id,
        turns: int(0, 6),
        loops: int(1, 4),
        modelCalls: int(0, 3),
        toolCalls: int(0, 3),
        asks: random() < 0.15,
      };
      const quota: ResourceQuota = {};
      if (random() < 0.5) quota.maxLlmCalls = int(1, 4);
      if (random() < 0.5) quota.maxToolCalls = int(1, 4);
      if (random() < 0.5) quota.maxAgentHops = int(1, 5);
      if (random() < 0.3) quota.maxIterations = int(1, 3);
      const priority: Priority = pick(PRIORITIES);
      const handle = kernel.submit(job, { service: pick(SERVICES).name, priority, quota });
      handles.push(handle);
      pids.push(handle.pid);
      const roll = random();
      if (roll < 0.03) kernel.cancel(handle.pid, 'cancelled while queued');
      else if (roll < 0.06) toCancelWhenRunning.add(handle.pid);
      // submissions arrive in bursts, interleaved with the kernel's work
      if (id % 50 === 49) for (let i = 0; i < int(0, 30); i++) await Promise.resolve();
    }

    // resumes answered on a later microtask add processes after a drain may have resolved: drain until quiet
    let settledCount = 0;
    const settlements = new Map<ProcessHandle, number>();
    const watch = (h: ProcessHandle): void => {
      settlements.set(h, 0);
      void h.result.then(
        () => {
          settlements.set(h, (settlements.get(h) ?? 0) + 1);
          settledCount++;
        },
        () => expect.unreachable('a result rejected'),
      );
    };
    const watched = new Set<ProcessHandle>();
    for (;;) {
      await kernel.drain();
      for (let i = 0; i < 20; i++) await Promise.resolve();
      const fresh = handles.filter((h) => !watched.has(h));
      for (const h of fresh) {
        watched.add(h);
        watch(h);
      }
      await kernel.drain();
      for (let i = 0; i < 20; i++) await Promise.resolve();
      if (
        handles.length === watched.size &&
        pids.every(
          (pid) =>
            kernel.status(pid)?.state !== 'ready' &&
            kernel.status(pid)?.state !== 'running' &&
            kernel.status(pid)?.state !== 'blocked',
        )
      )
        break;
    }

    // everything drained: every process terminated (none left waiting, since every interrupt was answered or cancelled)
    const states = new Map<string, number>();
    for (const pid of pids) {
      const state = kernel.status(pid)?.state ?? 'forgotten';
      states.set(state, (states.get(state) ?? 0) + 1);
    }
    expect(Object.fromEntries(states)).toEqual({ zombie: PROCESSES });

    // every result settled exactly once
    expect(handles.length).toBeGreaterThan(PROCESSES);
    expect(settledCount).toBe(handles.length);
    expect([...settlements.values()].every((n) => n === 1)).toBe(true);
    const finals = pids.map((pid) => kernel.envelope(pid) as Envelope);
    expect(finals.every((env) => env.terminated && env.interrupt === undefined)).toBe(true);

    // the limits held, and were reached (so this test could fail)
    expect(badTransitions).toEqual([]);
    expect(maxRunningTotal).toBe(MAX_RUNNING);
    expect(maxInStageTotal).toBeLessThanOrEqual(MAX_RUNNING);
    for (const service of SERVICES) {
      expect(maxRunningPerService.get(service.name), service.name).toBe(service.maxConcurrent);
      expect(maxInStage.get(service.name) ?? 0, service.name).toBeLessThanOrEqual(service.maxConcurrent);
    }
    expect(runningTotal).toBe(0);

    // the mix really was mixed
    const reasons = new Set(finals.map((env) => env.terminalReason));
    for (const reason of [
      'completed',
      'user_cancelled',
      'max_llm_calls_exceeded',
      'max_tool_calls_exceeded',
      'max_agent_hops_exceeded',
    ] as const) {
      expect(reasons.has(reason), reason).toBe(true);
    }
    expect(exhausted.get('maxLlmCalls')).toBeGreaterThan(0);
    expect(exhausted.get('maxToolCalls')).toBeGreaterThan(0);
    expect(Object.keys(PROCESS_TRANSITIONS)).toHaveLength(7);

    for (const pid of pids) kernel.reap(pid);
    expect(pids.every((pid) => kernel.status(pid) === undefined)).toBe(true);
  });
});
