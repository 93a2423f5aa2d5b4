import { describeValue } from '@signalyard/core';
import { KernelError } from '../errors/kernel-error.js';
import type { PipelineRuntime } from '../runtime/pipeline-runtime.js';
import { ProcessQueue, type Queued } from './process-queue.js';

/** A registered service: its runtime, its concurrency limit and health, and its processes by state. @internal */
export interface Service<P extends Queued> {
  readonly name: string;
  readonly runtime: PipelineRuntime;
  readonly maxConcurrent: number;
  /** The first stage of its pipeline (where a process that never ran stands). */
  readonly firstStage: string;
  healthy: boolean;
  /** Its processes in state `running`. */
  running: number;
  /** Its processes in state `ready` (also in the kernel's ready queue). */
  readonly ready: Set<P>;
  /** Its processes in state `blocked`, most urgent first. */
  readonly blocked: ProcessQueue<P>;
}

/** The kernel's services by name, in registration order (the first is the default). @internal */
export class ServiceRegistry<P extends Queued> {
  readonly #services = new Map<string, Service<P>>();

  /** @throws KernelError `KERNEL_DUPLICATE_SERVICE` when `name` is taken. */
  register(name: string, runtime: PipelineRuntime, maxConcurrent: number): void {
    if (this.#services.has(name)) {
      throw new KernelError({
        code: 'KERNEL_DUPLICATE_SERVICE',
        message: `Service ${JSON.stringify(name)} is already registered: expected a new name`,
      });
    }
    this.#services.set(name, {
      name,
      runtime,
      maxConcurrent,
      firstStage: (runtime.pipeline.stages[0] as { name: string }).name,
      healthy: true,
      running: 0,
      ready: new Set(),
      blocked: new ProcessQueue(),
    });
  }

  get(name: string): Service<P> | undefined {
    return this.#services.get(name);
  }

  /** @throws KernelError `KERNEL_UNKNOWN_SERVICE` when `name` is not registered. */
  require(name: unknown): Service<P> {
    const service = typeof name === 'string' ? this.#services.get(name) : undefined;
    if (service === undefined) {
      throw new KernelError({
        code: 'KERNEL_UNKNOWN_SERVICE',
        message: `Unknown service ${describeValue(name)}: expected one of ${this.describe()}`,
      });
    }
    return service;
  }

  /** The first registered service's name, or `''` when none is. */
  defaultName(): string {
    return this.#services.keys().next().value ?? '';
  }

  /** The registered names, quoted, for messages. */
  describe(): string {
    return this.#services.size === 0
      ? '(none registered)'
      : [...this.#services.keys()].map((n) => JSON.stringify(n)).join(', ');
  }

  get size(): number {
    return this.#services.size;
  }
}
