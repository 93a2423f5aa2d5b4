import { describeValue } from '@signalyard/core';
import { startTimer } from '@signalyard/core/internal';
import { KernelError } from '../errors/kernel-error.js';
import type { KernelEvent } from './kernel-event.js';
import { ProcessQueue } from './process-queue.js';
import type { ProcessRecord } from './process-record.js';
import { canTransition, type ProcessState } from './process-state.js';
import { admit, nextUnblocked } from './scheduler.js';
import type { Service } from './service-registry.js';

/** States in which a process counts toward `drain`. */
const ACTIVE: Readonly<Record<ProcessState, boolean>> = {
  new: true,
  ready: true,
  blocked: true,
  running: true,
  waiting: false,
  terminated: false,
  zombie: false,
};

/**
 * The kernel's processes: their records by pid, where each is queued (the kernel-wide ready
 * queue, and each service's ready set and blocked queue, as the scheduler's decisions place
 * them), how many run, and their lifecycle (every transition is checked against
 * {@link PROCESS_TRANSITIONS} and reported).
 * @internal
 */
export class ProcessTable {
  /** Every `ready` process, most urgent first. */
  readonly ready = new ProcessQueue<ProcessRecord>();
  /** Processes in state `running`. */
  running = 0;
  readonly #records = new Map<string, ProcessRecord>();
  readonly #onTransition: (event: KernelEvent) => void;
  #active = 0;
  #seq = 0;

  /** @param onTransition Receives each `process_state_changed` event. */
  constructor(onTransition: (event: KernelEvent) => void) {
    this.#onTransition = onTransition;
  }

  /** Processes in a state that `drain` waits for (`new`, `ready`, `blocked`, `running`). */
  get active(): number {
    return this.#active;
  }

  /** Adds a `new` process. */
  add(p: ProcessRecord): void {
    this.#records.set(p.pid, p);
    if (ACTIVE[p.state]) this.#active++;
  }

  /** The process with this pid, if the kernel knows it. */
  get(pid: unknown): ProcessRecord | undefined {
    return typeof pid === 'string' ? this.#records.get(pid) : undefined;
  }

  /** @throws KernelError `KERNEL_UNKNOWN_PROCESS` when the kernel does not know `pid`. */
  lookup(pid: unknown): ProcessRecord {
    const p = this.get(pid);
    if (p === undefined) {
      throw new KernelError({
        code: 'KERNEL_UNKNOWN_PROCESS',
        message: `Unknown process ${describeValue(pid)}: expected the pid of a process submitted to this kernel and not yet forgotten`,
        ...(typeof pid === 'string' ? { pid } : {}),
      });
    }
    return p;
  }

  /** Gives `p` the next sequence number: FIFO among processes queued with the same priority. */
  #stamp(p: ProcessRecord): void {
    p.order.seq = this.#seq++;
  }

  /**
   * Moves `p` to `to`, keeping the drain count and reporting the change.
   * @throws KernelError `KERNEL_INVALID_STATE` for a transition outside the lifecycle table.
   */
  transition(p: ProcessRecord, to: ProcessState): void {
    const from = p.state;
    if (!canTransition(from, to)) {
      throw new KernelError({
        code: 'KERNEL_INVALID_STATE',
        pid: p.pid,
        state: from,
        message: `Invalid process transition ${from} -> ${to} for process ${JSON.stringify(p.pid)}`,
      });
    }
    p.state = to;
    this.#onTransition({ type: 'process_state_changed', pid: p.pid, from, to });
    if (ACTIVE[from] !== ACTIVE[to]) this.#active += ACTIVE[to] ? 1 : -1;
  }

  /** Forgets `p` after `ms` (`Infinity`: never by itself); the timer never keeps the process alive. */
  retain(p: ProcessRecord, ms: number): void {
    if (ms === Infinity) return;
    p.hooks.cancelForget = startTimer(
      ms,
      () => {
        this.forget(p);
      },
      { unref: true },
    );
  }

  /** Forgets `p` now. */
  forget(p: ProcessRecord): void {
    p.hooks.cancelForget?.();
    p.hooks.cancelForget = undefined;
    if (this.#records.get(p.pid) === p) this.#records.delete(p.pid);
  }

  // ------------------------------------------------------------------------------ queues

  /** Queues a `new` or `waiting` process: `ready`, or `blocked` when its service is full (see {@link admit}). */
  enqueue(p: ProcessRecord): void {
    const service = p.request.service as Service<ProcessRecord>;
    this.#stamp(p);
    this.transition(p, 'ready');
    const admission = admit(p, service);
    if (admission.to === 'blocked') {
      this.#block(p, service);
      return;
    }
    const displaced = admission.displaced;
    if (displaced !== undefined) {
      service.ready.delete(displaced);
      this.ready.remove(displaced);
      this.#block(displaced, service);
    }
    this.#makeReady(p, service);
  }

  #makeReady(p: ProcessRecord, service: Service<ProcessRecord>): void {
    service.ready.add(p);
    this.ready.push(p);
  }

  #block(p: ProcessRecord, service: Service<ProcessRecord>): void {
    this.transition(p, 'blocked');
    service.blocked.push(p);
  }

  /** Moves the service's most urgent blocked processes to `ready` while it has free slots. */
  unblock(service: Service<ProcessRecord>): void {
    for (let p = nextUnblocked(service); p !== undefined; p = nextUnblocked(service)) {
      service.blocked.remove(p);
      this.transition(p, 'ready');
      this.#makeReady(p, service);
    }
  }

  /** Takes `p` out of whichever queue holds it; returns whether one did. */
  dequeue(p: ProcessRecord): boolean {
    const service = p.request.service;
    if (service === undefined) return false;
    const wasReady = service.ready.delete(p);
    this.ready.remove(p);
    return service.blocked.remove(p) || wasReady;
  }
}
