// Helpers for the kernel tests (not a test file: vitest only runs `*.test.ts`).
import {
  Kernel,
  type KernelEvent,
  type KernelOptions,
  type PipelineRuntime,
  type StageContext,
} from '@signalyard/pipeline';
import { deferred, runtimeOf, type Deferred } from './support.js';

/** Lets pending microtasks (the kernel's dispatch, resolved stage promises) run. */
export async function ticks(n = 20): Promise<void> {
  for (let i = 0; i < n; i++) await Promise.resolve();
}

/** Records every event of `kernel`. */
export function record(kernel: Kernel): KernelEvent[] {
  const events: KernelEvent[] = [];
  kernel.on((e) => events.push(e));
  return events;
}

/** `from->to` for each state change of `pid`, and the other event types by name. */
export function lifeOf(events: readonly KernelEvent[], pid: string): string[] {
  return events
    .filter((e) => e.pid === pid)
    .map((e) => (e.type === 'process_state_changed' ? `${e.from}->${e.to}` : e.type));
}

/**
 * A one-stage runtime whose stage records its input when it starts and then waits until the
 * test releases it with `release(input)` (or, with `open`, does not wait at all).
 */
export interface Gated {
  readonly runtime: PipelineRuntime;
  readonly started: unknown[];
  /** Inputs whose stage is running now. */
  readonly running: Set<unknown>;
  release(input: unknown, output?: Record<string, unknown>): void;
  /** Resolves when the stage for `input` has started. */
  startedFor(input: unknown): Promise<void>;
  aborted: unknown[];
}

export function gated(): Gated {
  const gates = new Map<unknown, Deferred<Record<string, unknown>>>();
  const starts = new Map<unknown, Deferred>();
  const gate = <T>(map: Map<unknown, Deferred<T>>, key: unknown): Deferred<T> => {
    let d = map.get(key);
    if (d === undefined) map.set(key, (d = deferred<T>()));
    return d;
  };
  const g: Gated = {
    started: [],
    running: new Set(),
    aborted: [],
    runtime: runtimeOf({
      stages: [
        {
          name: 'work',
          run: async (ctx: StageContext) => {
            g.started.push(ctx.input);
            g.running.add(ctx.input);
            ctx.abortSignal.addEventListener('abort', () => g.aborted.push(ctx.input));
            gate(starts, ctx.input).resolve(undefined);
            try {
              return await gate(gates, ctx.input).promise;
            } finally {
              g.running.delete(ctx.input);
            }
          },
        },
      ],
    }),
    release(input, output = { done: input }) {
      gate(gates, input).resolve(output);
    },
    startedFor: (input) => gate(starts, input).promise,
  };
  return g;
}

/** A kernel with one service `s` running `runtime`. */
export function kernelWith(runtime: PipelineRuntime, options?: KernelOptions, maxConcurrent?: number): Kernel {
  const kernel = new Kernel(options);
  kernel.registerService('s', runtime, maxConcurrent === undefined ? {} : { maxConcurrent });
  return kernel;
}
