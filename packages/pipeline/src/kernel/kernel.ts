import { frozenCopy } from '@signalyard/core/internal';
import { describeValue, systemClock } from '@signalyard/core';
import type { Envelope } from '../envelope/envelope.js';
import type { Interrupt, InterruptResponse } from '../envelope/interrupt.js';
import { parseResponseArgument } from '../envelope/interrupt-response.js';
import { KernelError } from '../errors/kernel-error.js';
import { PipelineRuntime } from '../runtime/pipeline-runtime.js';
import { checkNotExpired } from '../runtime/prepare-run.js';
import { messageOf } from '../shared/error-message.js';
import type { KernelEvent } from './kernel-event.js';
import {
  argumentError,
  parseEventsOptions,
  parseKernelOptions,
  parseServiceOptions,
  parseSubmitOptions,
  type KernelEventsOptions,
  type KernelOptions,
  type ServiceOptions,
  type SubmitOptions,
} from './kernel-options.js';
import { ProcessDispatcher } from './process-dispatcher.js';
import { newProcessRecord } from './process-record.js';
import { processStatus } from './process-snapshot.js';
import type { ProcessHandle, ProcessStatus } from './process-status.js';
import { quotaBounds } from './quotas.js';

const DEFAULT_MAX_RUNNING = 4;
const DEFAULT_RETAIN_TERMINATED_MS = 300_000;
const DEFAULT_CANCEL_REASON = 'Kernel.cancel';

/**
 * The control tower: runs pipeline processes on registered services, by priority, within
 * concurrency limits and per-process quotas, and keeps each process's lifecycle.
 *
 * - **Services**: `registerService(name, runtime, { maxConcurrent })` names a
 *   {@link PipelineRuntime}; `setHealth(name, false)` stops dispatching to it.
 * - **Scheduling**: at most `maxRunning` processes run at once; the next to run is the most
 *   urgent ({@link Priority}), FIFO within a priority; a running process is never preempted. A
 *   process whose service already runs its `maxConcurrent` is `blocked` until a slot frees.
 *   Dispatch happens on the next microtask, so processes submitted together are ordered by
 *   priority before any starts.
 * - **Lifecycle** ({@link ProcessState}): new → ready → running → waiting / terminated → zombie,
 *   with `blocked` between ready and running; a zombie is forgotten after `retainTerminatedMs`
 *   or `reap`.
 * - **Quotas** ({@link ResourceQuota}) are enforced while the process runs and across resumes:
 *   exceeding one emits `resource_exhausted` and terminates the process `max_*_exceeded` /
 *   `timeout_exceeded`.
 * - **Interrupts**: a process whose pipeline pauses is `waiting`; `resume(pid, interruptId,
 *   response)` continues the **stored** envelope (input, outputs, counters intact).
 *
 * - **Time**: the kernel reads the time from its `clock` option (default `systemClock`): a
 *   process's `elapsedMs`, and every time its runs record (trace, errors, interrupts) and check
 *   interrupt expiry against. Its deadlines (`timeoutMs` quotas, `retainTerminatedMs`) are timers.
 *
 * Failures are outcomes, never rejections: an unknown service ends the process
 * `unknown_service`, an unhealthy one `service_unhealthy`, `cancel` `user_cancelled`. Methods
 * throw {@link KernelError} only for misuse.
 *
 * @example
 * ```ts
 * const kernel = new Kernel({ maxRunning: 8 });
 * kernel.registerService('support', new PipelineRuntime(supportPipeline, { model }), { maxConcurrent: 4 });
 * const { pid, result } = kernel.submit(ticket, { priority: 'high', quota: { maxLlmCalls: 6, timeoutMs: 60_000 } });
 * const env = await result;
 * if (env.interrupt !== undefined) await kernel.resume(pid, env.interrupt.id, { text: await ask(env.interrupt.payload) }).result;
 * ```
 */
export class Kernel {
  /** At most this many processes run at once. */
  readonly maxRunning: number;
  /** How long a terminated process stays visible, in ms. */
  readonly retainTerminatedMs: number;
  /** The process table, the services, the events and the lifecycle behind these methods. */
  readonly #d: ProcessDispatcher;

  /**
   * @param options `maxRunning` (default 4), `retainTerminatedMs` (default 300000), `clock`
   *   (default `systemClock`).
   * @throws KernelError `KERNEL_ARGUMENT_INVALID` for malformed options (unknown keys included, a
   *   `clock` that is not a `Clock { now(): number }`).
   */
  constructor(options: KernelOptions = {}) {
    const o = parseKernelOptions(options);
    this.maxRunning = o.maxRunning ?? DEFAULT_MAX_RUNNING;
    this.retainTerminatedMs = o.retainTerminatedMs ?? DEFAULT_RETAIN_TERMINATED_MS;
    this.#d = new ProcessDispatcher(this.maxRunning, this.retainTerminatedMs, o.clock ?? systemClock);
  }

  /**
   * Registers `runtime` as the service `name`. The first service registered is the default of
   * `submit`. A new service is healthy.
   *
   * @throws KernelError `KERNEL_DUPLICATE_SERVICE` when `name` is already registered;
   *   `KERNEL_ARGUMENT_INVALID` for an empty name, something other than a `PipelineRuntime`, or a
   *   `maxConcurrent` that is not a positive integer or `Infinity`.
   * @example
   * ```ts
   * kernel.registerService('triage', new PipelineRuntime(triage), { maxConcurrent: 2 });
   * ```
   */
  registerService(name: string, runtime: PipelineRuntime, opts: ServiceOptions = {}): void {
    if (typeof name !== 'string' || name === '')
      throw argumentError('name', `Invalid service name ${describeValue(name)}: expected a non-empty string`);
    if (!((runtime as unknown) instanceof PipelineRuntime)) {
      throw argumentError(
        'runtime',
        `Invalid runtime ${describeValue(runtime)} for service ${JSON.stringify(name)}: expected a PipelineRuntime of this copy of @signalyard/pipeline`,
      );
    }
    const o = parseServiceOptions(opts);
    this.#d.services.register(name, runtime, o.maxConcurrent ?? Infinity);
  }

  /**
   * Marks a service healthy or not. Processes of an unhealthy service are not dispatched: a
   * process submitted to it, or reaching the front of the queue while it is unhealthy, is
   * terminated `service_unhealthy`. Running processes are not affected.
   *
   * @throws KernelError `KERNEL_UNKNOWN_SERVICE` when `name` is not registered;
   *   `KERNEL_ARGUMENT_INVALID` when `healthy` is not a boolean.
   * @example
   * ```ts
   * kernel.setHealth('triage', await ping(triageBackend));
   * ```
   */
  setHealth(name: string, healthy: boolean): void {
    const service = this.#d.services.require(name);
    if (typeof healthy !== 'boolean')
      throw argumentError(
        'healthy',
        `Invalid health ${describeValue(healthy)} for service ${JSON.stringify(name)}: expected a boolean`,
      );
    service.healthy = healthy;
  }

  /**
   * Submits a process running `input` through a service's pipeline, and returns its pid and
   * result. The process is `ready` (or `blocked`, when its service is full) at once, and starts
   * when the scheduler picks it (on the next microtask at the earliest).
   *
   * An unknown service ends the process at once with `unknown_service`, an unhealthy one with
   * `service_unhealthy`, an already aborted `abortSignal` with `user_cancelled`: `result` still
   * resolves with the envelope.
   *
   * @throws KernelError `KERNEL_ARGUMENT_INVALID` for malformed options: an unknown key, a
   *   priority that is not a {@link Priority}, a quota value that is not a positive integer
   *   (`timeoutMs`: positive milliseconds), an invalid `abortSignal` or `mode`; an input that
   *   cannot be copied (the process keeps a deep, frozen copy of `input`; reading it threw).
   * @example
   * ```ts
   * const { pid, result } = kernel.submit({ text: 'refund please' }, { service: 'support', priority: 'high', quota: { maxToolCalls: 10 } });
   * ```
   */
  submit(input: unknown, opts: SubmitOptions = {}): ProcessHandle {
    const o = parseSubmitOptions(opts);
    let copy: unknown;
    try {
      copy = frozenCopy(input);
    } catch (error) {
      throw argumentError(
        'input',
        `Invalid input ${describeValue(input)}: copying it threw: ${messageOf(error)}`,
        error,
      );
    }
    const d = this.#d;
    const serviceName = o.service ?? d.services.defaultName();
    const p = newProcessRecord(crypto.randomUUID(), {
      input: copy,
      mode: o.mode ?? 'sequential',
      serviceName,
      service: d.services.get(serviceName),
      priority: o.priority ?? 'normal',
      quota: o.quota,
      bounds: quotaBounds(o.quota),
    });
    const result = d.pendingResult(p);
    d.table.add(p);
    d.bus.batch(() => {
      d.bus.emit({ type: 'process_created', pid: p.pid, priority: p.request.priority, service: serviceName });
      d.admit(p, o.abortSignal);
    });
    return { pid: p.pid, result };
  }

  /**
   * Answers the interrupt a `waiting` process paused on, and puts the process back to `ready`.
   * When it runs again, its pipeline continues the **stored** envelope (the one its last `result`
   * resolved with): its input, outputs, counters and trace are kept, and its quota usage goes on.
   * Returns a new handle whose `result` settles at the next pause or termination.
   *
   * If the interrupt expires while the process waits for a slot, the process ends
   * `timeout_exceeded`.
   *
   * @throws KernelError, checked in this order: `KERNEL_UNKNOWN_PROCESS` for an unknown pid;
   *   `KERNEL_INVALID_STATE` when the process is not `waiting`; `KERNEL_INTERRUPT_MISMATCH` when
   *   `interruptId` is not its pending interrupt's id; then `KERNEL_ARGUMENT_INVALID` for a
   *   malformed response.
   * @throws PipelineStateError `INTERRUPT_EXPIRED` when the pending interrupt has expired (the
   *   process stays `waiting`; `cancel` ends it).
   * @example
   * ```ts
   * const paused = await kernel.submit(request).result;
   * if (paused.interrupt?.kind === 'confirmation') {
   *   const done = await kernel.resume(paused.id, paused.interrupt.id, { approved: true }).result;
   * }
   * ```
   */
  resume(pid: string, interruptId: string, response: InterruptResponse): ProcessHandle {
    const d = this.#d;
    const p = d.table.lookup(pid);
    if (p.state !== 'waiting') {
      throw new KernelError({
        code: 'KERNEL_INVALID_STATE',
        pid,
        state: p.state,
        message: `Cannot resume process ${JSON.stringify(pid)}: it is ${p.state}, expected waiting (paused on an interrupt)`,
      });
    }
    const interrupt = (p.envelope as Envelope).interrupt as Interrupt;
    if (interruptId !== interrupt.id) {
      throw new KernelError({
        code: 'KERNEL_INTERRUPT_MISMATCH',
        pid,
        message: `Cannot resume process ${JSON.stringify(pid)} with interrupt ${describeValue(interruptId)}: it waits on interrupt ${JSON.stringify(interrupt.id)} (${interrupt.kind} from stage ${JSON.stringify(interrupt.stage)})`,
      });
    }
    let answer: InterruptResponse;
    try {
      answer = parseResponseArgument(response, 'response');
    } catch (error) {
      throw new KernelError({
        code: 'KERNEL_ARGUMENT_INVALID',
        argument: 'response',
        pid,
        message: messageOf(error),
        cause: error,
      });
    }
    checkNotExpired(pid, interrupt, `Cannot resume process ${JSON.stringify(pid)}`, d.now());
    p.response = { ...answer };
    const result = d.pendingResult(p);
    d.bus.batch(() => {
      d.queue(p);
    });
    return { pid, result };
  }

  /**
   * Cancels a process: it ends `terminated: true`, `terminalReason: 'user_cancelled'`, and its
   * pending `result` resolves. A `ready`, `blocked` or `waiting` process ends at once (a waiting
   * one keeps its outputs in the final envelope); a `running` one is aborted (the stage in flight
   * sees its `ctx.abortSignal` fire) and ends as soon as its run stops. Cancelling a process that
   * has already terminated does nothing.
   *
   * @param reason Recorded in the envelope's `terminationReason` (`cancelled: <reason>`).
   * @throws KernelError `KERNEL_UNKNOWN_PROCESS` for an unknown pid; `KERNEL_ARGUMENT_INVALID`
   *   when `reason` is not a string.
   * @example
   * ```ts
   * kernel.cancel(pid, 'the user closed the chat');
   * ```
   */
  cancel(pid: string, reason?: string): void {
    const d = this.#d;
    const p = d.table.lookup(pid);
    if (reason !== undefined && typeof reason !== 'string')
      throw argumentError('reason', `Invalid cancel reason ${describeValue(reason)}: expected a string`);
    const why = reason ?? DEFAULT_CANCEL_REASON;
    d.bus.batch(() => {
      d.cancel(p, why);
    });
  }

  /**
   * A snapshot of a process: state, priority, service, usage and remaining quota, and the
   * pending interrupt while it is `waiting`. Usage is live while the process runs.
   * `undefined` for a pid the kernel does not know (never submitted, or forgotten).
   *
   * @throws InvalidArgumentError `CLOCK_INVALID` when the kernel's clock returns no time.
   * @example
   * ```ts
   * const s = kernel.status(pid);
   * console.log(s?.state, s?.usage.llmCalls, s?.remaining.maxLlmCalls);
   * ```
   */
  status(pid: string): ProcessStatus | undefined {
    const p = this.#d.table.get(pid);
    return p === undefined ? undefined : processStatus(p, this.#d.now());
  }

  /**
   * The process's envelope as of its last pause or termination (what its last `result`
   * resolved with, or for a process cancelled while waiting, its final envelope); `undefined`
   * before it first stops, and for a pid the kernel does not know.
   *
   * @example
   * ```ts
   * kernel.cancel(pid);
   * kernel.envelope(pid)?.terminalReason;   // 'user_cancelled'
   * ```
   */
  envelope(pid: string): Envelope | undefined {
    return this.#d.table.get(pid)?.envelope;
  }

  /**
   * Subscribes to every {@link KernelEvent}. Events are delivered synchronously, in order, at
   * the end of the kernel operation that caused them; a listener may call any kernel method. An
   * error thrown by a listener does not disturb the kernel or the other listeners: it is
   * rethrown on a later microtask (like an `EventTarget` listener's, as an uncaught exception).
   *
   * @returns A function that unsubscribes (idempotent).
   * @throws KernelError `KERNEL_ARGUMENT_INVALID` when `listener` is not a function.
   * @example
   * ```ts
   * const off = kernel.on((e) => { if (e.type === 'process_state_changed') log(`${e.pid}: ${e.from} -> ${e.to}`) });
   * ```
   */
  on(listener: (event: KernelEvent) => void): () => void {
    if (typeof listener !== 'function')
      throw argumentError('listener', `Invalid listener ${describeValue(listener)}: expected a function`);
    return this.#d.bus.on(listener);
  }

  /**
   * The kernel's events as a buffered `AsyncIterable` (an adapter over {@link Kernel.on}):
   * events are kept from the moment `events` is called until they are read. The kernel never
   * ends it; it ends when `abortSignal` fires or the consumer stops (`break`).
   *
   * @throws KernelError `KERNEL_ARGUMENT_INVALID` for malformed options.
   * @example
   * ```ts
   * for await (const event of kernel.events({ abortSignal: shutdown.signal })) metrics.record(event);
   * ```
   */
  events(opts: KernelEventsOptions = {}): AsyncIterable<KernelEvent> {
    const o = parseEventsOptions(opts);
    return this.#d.bus.events(o.abortSignal);
  }

  /**
   * Resolves when no process is `new`, `ready`, `blocked` or `running` (at once if none is).
   * `waiting` processes stay as they are; processes submitted or resumed before it resolves are
   * waited for too.
   *
   * @example
   * ```ts
   * for (const job of jobs) kernel.submit(job);
   * await kernel.drain();
   * ```
   */
  drain(): Promise<void> {
    return this.#d.drain();
  }

  /**
   * Forgets a terminated process now (instead of after `retainTerminatedMs`): `status` then
   * returns `undefined` and the other methods throw `KERNEL_UNKNOWN_PROCESS` for its pid.
   *
   * @throws KernelError `KERNEL_UNKNOWN_PROCESS` for an unknown pid; `KERNEL_INVALID_STATE` when
   *   the process has not terminated.
   * @example
   * ```ts
   * const env = await kernel.submit(job).result;
   * kernel.reap(env.id);   // a process's envelope id is its pid
   * ```
   */
  reap(pid: string): void {
    const p = this.#d.table.lookup(pid);
    if (p.state !== 'terminated' && p.state !== 'zombie') {
      throw new KernelError({
        code: 'KERNEL_INVALID_STATE',
        pid,
        state: p.state,
        message: `Cannot reap process ${JSON.stringify(pid)}: it is ${p.state}, expected terminated or zombie`,
      });
    }
    this.#d.table.forget(p);
  }
}
