import { AbortedError, type Clock } from '@signalyard/core';
import { onAbort, readClock } from '@signalyard/core/internal';
import type { Envelope } from '../envelope/envelope.js';
import type { Interrupt } from '../envelope/interrupt.js';
import type { TerminalReason } from '../envelope/terminal-reason.js';
import { messageOf } from '../shared/error-message.js';
import { KernelEventBus } from './kernel-event-bus.js';
import type { ProcessRecord } from './process-record.js';
import { startProcessRun } from './process-run.js';
import { ProcessTable } from './process-table.js';
import { exhaustedQuota } from './quotas.js';
import { nextDispatch, type KernelSlots } from './scheduler.js';
import { ServiceRegistry, type Service } from './service-registry.js';
import { elapsedBetween } from './process-snapshot.js';
import { stoppedEnvelope } from './stopped-envelope.js';

/**
 * The kernel's machinery behind its public methods: the process table, the services, the event
 * bus, and each process's way through its lifecycle — admitted, queued, dispatched by the
 * scheduler's decisions (scheduler.ts), run (process-run.ts), paused or terminated, settled,
 * forgotten. `Kernel` validates its callers' arguments and calls in here.
 * @internal
 */
export class ProcessDispatcher {
  readonly services = new ServiceRegistry<ProcessRecord>();
  readonly bus = new KernelEventBus(() => {
    this.#releaseDrainWaiters();
  });
  readonly table = new ProcessTable((event) => {
    this.bus.emit(event);
  });
  /** What the scheduler reads. */
  readonly #slots: KernelSlots<ProcessRecord>;
  readonly #retainTerminatedMs: number;
  readonly #clock: Clock;
  #drainWaiters: (() => void)[] = [];
  #scheduleQueued = false;

  constructor(maxRunning: number, retainTerminatedMs: number, clock: Clock) {
    this.#retainTerminatedMs = retainTerminatedMs;
    this.#clock = clock;
    const table = this.table;
    this.#slots = {
      maxRunning,
      get running() {
        return table.running;
      },
      peekReady: () => table.ready.peek(),
      serviceOf: (p) => p.request.service as Service<ProcessRecord>,
    };
  }

  /** The kernel's clock, read. */
  now(): number {
    return readClock(this.#clock);
  }

  /** A new pending `result` for `p`, settled at its next pause or termination. */
  pendingResult(p: ProcessRecord): Promise<Envelope> {
    return new Promise<Envelope>((resolve) => {
      p.hooks.settle = resolve;
    });
  }

  /** Checks a new process's service and signal, then queues it (or ends it at once). */
  admit(p: ProcessRecord, abortSignal: AbortSignal | undefined): void {
    const { service, serviceName } = p.request;
    if (service === undefined) {
      const known =
        this.services.size === 0 ? 'no service is registered' : `registered services: ${this.services.describe()}`;
      this.#end(p, 'unknown_service', `unknown service ${JSON.stringify(serviceName)} (${known})`);
    } else if (!service.healthy) {
      this.#end(p, 'service_unhealthy', `service ${JSON.stringify(serviceName)} is unhealthy`);
    } else if (abortSignal?.aborted === true) {
      this.#end(p, 'user_cancelled', `cancelled: ${messageOf(abortSignal.reason)}`);
    } else {
      if (abortSignal !== undefined) {
        p.hooks.unlinkAbort = onAbort(abortSignal, () => {
          if (this.table.get(p.pid) !== p) return;
          this.bus.batch(() => {
            this.cancel(p, messageOf(abortSignal.reason));
          });
        });
      }
      this.queue(p);
    }
  }

  /** Puts `p` (new, or waiting with its answer) in line to run. */
  queue(p: ProcessRecord): void {
    this.table.enqueue(p);
    this.#requestSchedule();
  }

  /** Cancels `p`: a running one is aborted (it ends when its run stops), a queued or waiting one ends now. */
  cancel(p: ProcessRecord, why: string): void {
    switch (p.state) {
      case 'terminated':
      case 'zombie':
        return;
      case 'running': {
        const controller = (p.run as { controller: AbortController }).controller;
        if (!controller.signal.aborted) controller.abort(new AbortedError({ message: why }));
        return;
      }
      default: {
        const service = p.request.service;
        const wasQueued = this.table.dequeue(p);
        this.#end(p, 'user_cancelled', `cancelled: ${why}`);
        if (wasQueued && service !== undefined) {
          this.table.unblock(service);
          this.#requestSchedule();
        }
      }
    }
  }

  /** Resolves when no process is `new`, `ready`, `blocked` or `running`. */
  drain(): Promise<void> {
    if (this.table.active === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.#drainWaiters.push(resolve);
    });
  }

  #requestSchedule(): void {
    if (this.#scheduleQueued) return;
    this.#scheduleQueued = true;
    queueMicrotask(() => {
      this.#scheduleQueued = false;
      this.bus.batch(() => {
        this.#schedule();
      });
    });
  }

  /** Applies the scheduler's decisions until it has none (see {@link nextDispatch}). */
  #schedule(): void {
    for (let d = nextDispatch(this.#slots); d !== undefined; d = nextDispatch(this.#slots)) {
      const p = d.process;
      const service = p.request.service as Service<ProcessRecord>;
      this.table.dequeue(p);
      if (d.kind === 'refuse') {
        this.#end(p, 'service_unhealthy', `service ${JSON.stringify(service.name)} is unhealthy`);
        this.table.unblock(service);
      } else {
        this.#start(p, service);
      }
    }
  }

  #start(p: ProcessRecord, service: Service<ProcessRecord>): void {
    const limit = p.request.quota.timeoutMs;
    const timeLeft = limit === undefined ? undefined : limit - p.usage.elapsedMs;
    if (limit !== undefined && timeLeft !== undefined && timeLeft <= 0) {
      // the running time of earlier segments already used it all (clock granularity)
      this.bus.emit({ type: 'resource_exhausted', pid: p.pid, resource: 'timeoutMs', used: p.usage.elapsedMs, limit });
      this.#end(p, 'timeout_exceeded', `the process used its timeoutMs quota of ${limit} ms`);
      this.table.unblock(service);
      return;
    }
    this.table.running++;
    service.running++;
    this.table.transition(p, 'running');
    startProcessRun(p, service, timeLeft, this.#clock, this.#reading(), (envelope, ran) => {
      this.bus.batch(() => {
        this.#finish(p, service, envelope, ran);
      });
    });
  }

  /** A run stopped: the process waits on its interrupt or terminates; the slot frees. */
  #finish(p: ProcessRecord, service: Service<ProcessRecord>, envelope: Envelope, ran: boolean): void {
    p.usage.elapsedMs += elapsedBetween((p.run as { startedAt: number }).startedAt, this.#reading());
    p.run = undefined;
    p.response = undefined;
    this.table.running--;
    service.running--;
    if (envelope.terminated) {
      const exhausted = ran
        ? exhaustedQuota(p.request.quota, service.runtime.pipeline.bounds, envelope, {
            toolCalls: p.usage.toolCalls.used,
            elapsedMs: p.usage.elapsedMs,
          })
        : undefined;
      if (exhausted !== undefined) this.bus.emit({ type: 'resource_exhausted', pid: p.pid, ...exhausted });
      this.#terminate(p, envelope);
    } else {
      p.envelope = envelope;
      this.table.transition(p, 'waiting');
      this.bus.emit({ type: 'interrupt_raised', pid: p.pid, interrupt: envelope.interrupt as Interrupt });
      this.#settle(p, envelope);
    }
    this.table.unblock(service);
    this.#schedule();
  }

  /**
   * The kernel's clock for its own bookkeeping (a run's elapsed time), never throwing: `NaN` when
   * the clock cannot be read (the run, reading the same clock, then fails and says why).
   */
  #reading(): number {
    try {
      return this.now();
    } catch {
      return Number.NaN;
    }
  }

  /** Ends a process that is not running, with a terminated copy of its stored envelope (or a fresh one). */
  #end(p: ProcessRecord, reason: TerminalReason, message: string): void {
    this.#terminate(p, stoppedEnvelope(p, reason, message));
  }

  /** terminated (result settles) → zombie (forgotten after `retainTerminatedMs`). */
  #terminate(p: ProcessRecord, envelope: Envelope): void {
    p.envelope = envelope;
    this.table.transition(p, 'terminated');
    p.hooks.unlinkAbort?.();
    p.hooks.unlinkAbort = undefined;
    this.#settle(p, envelope);
    this.table.transition(p, 'zombie');
    this.table.retain(p, this.#retainTerminatedMs);
  }

  #settle(p: ProcessRecord, envelope: Envelope): void {
    const settle = p.hooks.settle;
    p.hooks.settle = undefined;
    if (settle !== undefined) settle(envelope);
  }

  /** After each outermost operation: releases `drain` callers when nothing is active. */
  #releaseDrainWaiters(): void {
    if (this.table.active === 0 && this.#drainWaiters.length > 0) {
      const waiters = this.#drainWaiters;
      this.#drainWaiters = [];
      for (const resolve of waiters) resolve();
    }
  }
}
