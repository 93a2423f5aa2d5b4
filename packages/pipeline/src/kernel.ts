import { AbortedError, describeValue } from '@signalyard/core';
import { parseResponse, type Envelope, type PipelineMode } from './envelope.js';
import type { Interrupt, InterruptResponse } from './interrupt.js';
import { KernelError } from './kernel-error.js';
import type { KernelEvent } from './kernel-event.js';
import { PipelineRuntime, type RunBounds, type RunOptions } from './pipeline-runtime.js';
import { PipelineStateError } from './pipeline-state-error.js';
import { isPriority, PRIORITIES, priorityRank, type Priority } from './priority.js';
import { ProcessQueue, type Queued } from './process-queue.js';
import { canTransition, type ProcessState } from './process-state.js';
import type { ProcessHandle, ProcessStatus } from './process-status.js';
import { QUOTA_KEYS, type ResourceQuota } from './resource-quota.js';
import { RUN_CONTROL, type RunControl } from './run-control.js';
import { messageOf } from './run-engine.js';
import { envelopeFromState, newRunState, runStateFrom, terminate, type RunState } from './run-state.js';
import type { TerminalReason } from './terminal-reason.js';

/** Options of the {@link Kernel} constructor. */
export interface KernelOptions {
  /** At most this many processes run at once, over all services. A positive integer or `Infinity`; default 4. */
  maxRunning?: number;
  /**
   * How long a terminated process stays visible (`status`, state `zombie`) before the kernel
   * forgets it, in ms: `0` or more, or `Infinity` (kept until `reap`). Default 300000 (5 minutes).
   */
  retainTerminatedMs?: number;
}

/** Options of {@link Kernel.registerService}. */
export interface ServiceOptions {
  /** At most this many of the service's processes run at once. A positive integer or `Infinity` (the default). */
  maxConcurrent?: number;
}

/** Options of {@link Kernel.submit}. */
export interface SubmitOptions {
  /** The service to run on. Default: the first registered service. */
  service?: string;
  /** Default `normal`. */
  priority?: Priority;
  /** Limits enforced while the process runs; see {@link ResourceQuota}. */
  quota?: ResourceQuota;
  /** Cancels the process (like {@link Kernel.cancel}), in any state, for its whole life. */
  abortSignal?: AbortSignal;
  /** The run mode of its pipeline: `sequential` (default) or `parallel` (DAG mode). */
  mode?: PipelineMode;
}

/** Options of {@link Kernel.events}. */
export interface KernelEventsOptions {
  /** Ends the iteration at once (events buffered but not yet read are dropped). */
  abortSignal?: AbortSignal;
}

type Listener = (event: KernelEvent) => void;

interface Service {
  readonly name: string;
  readonly runtime: PipelineRuntime;
  readonly maxConcurrent: number;
  readonly firstStage: string;
  healthy: boolean;
  /** Its processes in state `running`. */
  running: number;
  /** Its processes in state `ready` (queued in the kernel's ready queue). */
  readonly ready: Set<Process>;
  /** Its processes in state `blocked`. */
  readonly blocked: ProcessQueue<Process>;
}

/** The process control block. */
interface Process extends Queued {
  readonly pid: string;
  readonly priority: Priority;
  readonly rank: number;
  /** FIFO order within a priority: set when the process is submitted or resumed. */
  seq: number;
  /** Moves on every state change, so queue entries of an earlier state are dropped. */
  epoch: number;
  state: ProcessState;
  readonly serviceName: string;
  readonly service: Service | undefined;
  readonly input: unknown;
  readonly mode: PipelineMode;
  readonly quota: Readonly<ResourceQuota>;
  readonly bounds: RunBounds | undefined;
  /** The envelope as of the last pause or termination: what `resume` continues. */
  envelope: Envelope | undefined;
  /** The answer `resume` gave, until the run continues with it. */
  response: InterruptResponse | undefined;
  /** The run's live state while it runs (for `status`). */
  live: Readonly<RunState> | undefined;
  readonly toolCalls: { used: number };
  /** Running time of the segments that ended. */
  elapsedMs: number;
  startedAt: number;
  controller: AbortController | undefined;
  /** Resolves the pending `result`, if one is pending. */
  settle: ((envelope: Envelope) => void) | undefined;
  unlinkAbort: (() => void) | undefined;
  forgetTimer: ReturnType<typeof setTimeout> | undefined;
}

const DEFAULT_MAX_RUNNING = 4;
const DEFAULT_RETAIN_TERMINATED_MS = 300_000;
/** setTimeout's largest delay; larger ones fire at once. */
const MAX_TIMEOUT_MS = 2_147_483_647;
const DEFAULT_CANCEL_REASON = 'Kernel.cancel';
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
  readonly #services = new Map<string, Service>();
  readonly #processes = new Map<string, Process>();
  readonly #ready = new ProcessQueue<Process>();
  #running = 0;
  /** Processes in an {@link ACTIVE} state. */
  #active = 0;
  #seq = 0;
  #drainWaiters: (() => void)[] = [];
  #listeners: readonly Listener[] = [];
  #pending: KernelEvent[] = [];
  #depth = 0;
  #flushing = false;
  #scheduleQueued = false;

  /**
   * @param options `maxRunning` (default 4), `retainTerminatedMs` (default 300000).
   * @throws KernelError `KERNEL_ARGUMENT_INVALID` for malformed options (unknown keys included).
   */
  constructor(options: KernelOptions = {}) {
    const o = checkRecord<KernelOptions>(options, 'options', ['maxRunning', 'retainTerminatedMs']);
    this.maxRunning = checkLimit(o.maxRunning, 'options.maxRunning') ?? DEFAULT_MAX_RUNNING;
    const retain = o.retainTerminatedMs;
    if (
      retain !== undefined &&
      (typeof retain !== 'number' ||
        Number.isNaN(retain) ||
        retain < 0 ||
        (retain > MAX_TIMEOUT_MS && retain !== Infinity))
    ) {
      throw argumentError(
        'options.retainTerminatedMs',
        `Invalid retainTerminatedMs ${describeValue(retain)}: expected a number of milliseconds from 0 to ${MAX_TIMEOUT_MS}, or Infinity`,
      );
    }
    this.retainTerminatedMs = retain ?? DEFAULT_RETAIN_TERMINATED_MS;
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
    const o = checkRecord<ServiceOptions>(opts, 'opts', ['maxConcurrent']);
    const maxConcurrent = checkLimit(o.maxConcurrent, 'opts.maxConcurrent') ?? Infinity;
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
    const service = this.#services.get(name);
    if (service === undefined) {
      throw new KernelError({
        code: 'KERNEL_UNKNOWN_SERVICE',
        message: `Unknown service ${describeValue(name)}: expected one of ${this.#serviceList()}`,
      });
    }
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
   *   (`timeoutMs`: positive milliseconds), an invalid `abortSignal` or `mode`.
   * @example
   * ```ts
   * const { pid, result } = kernel.submit({ text: 'refund please' }, { service: 'support', priority: 'high', quota: { maxToolCalls: 10 } });
   * ```
   */
  submit(input: unknown, opts: SubmitOptions = {}): ProcessHandle {
    const o = checkRecord<SubmitOptions>(opts, 'opts', ['service', 'priority', 'quota', 'abortSignal', 'mode']);
    if (o.service !== undefined && (typeof o.service !== 'string' || o.service === '')) {
      throw argumentError(
        'opts.service',
        `Invalid service ${describeValue(o.service)}: expected a non-empty service name`,
      );
    }
    const priority = o.priority ?? 'normal';
    if (!isPriority(priority))
      throw argumentError(
        'opts.priority',
        `Invalid priority ${describeValue(priority)}: expected one of ${PRIORITIES.join(', ')}`,
      );
    const quota = checkQuota(o.quota);
    const abortSignal = o.abortSignal;
    if (abortSignal !== undefined && !isAbortSignal(abortSignal)) {
      throw argumentError(
        'opts.abortSignal',
        `Invalid abortSignal ${describeValue(abortSignal)}: expected an AbortSignal`,
      );
    }
    const mode: unknown = o.mode ?? 'sequential';
    if (mode !== 'sequential' && mode !== 'parallel')
      throw argumentError('opts.mode', `Invalid mode ${describeValue(mode)}: expected "sequential" or "parallel"`);

    const serviceName = o.service ?? this.#services.keys().next().value ?? '';
    const service = this.#services.get(serviceName);
    const pid = crypto.randomUUID();
    const bounds: RunBounds = {};
    if (quota.maxLlmCalls !== undefined) bounds.maxLlmCalls = quota.maxLlmCalls;
    if (quota.maxAgentHops !== undefined) bounds.maxAgentHops = quota.maxAgentHops;
    if (quota.maxIterations !== undefined) bounds.maxIterations = quota.maxIterations;
    const p: Process = {
      pid,
      priority,
      rank: priorityRank(priority),
      seq: 0,
      epoch: 0,
      state: 'new',
      serviceName,
      service,
      input,
      mode,
      quota,
      bounds: Object.keys(bounds).length === 0 ? undefined : bounds,
      envelope: undefined,
      response: undefined,
      live: undefined,
      toolCalls: { used: 0 },
      elapsedMs: 0,
      startedAt: 0,
      controller: undefined,
      settle: undefined,
      unlinkAbort: undefined,
      forgetTimer: undefined,
    };
    const result = new Promise<Envelope>((resolve) => {
      p.settle = resolve;
    });
    this.#processes.set(pid, p);
    this.#active++;
    this.#batch(() => {
      this.#emit({ type: 'process_created', pid, priority, service: serviceName });
      if (service === undefined) {
        const known =
          this.#services.size === 0 ? 'no service is registered' : `registered services: ${this.#serviceList()}`;
        this.#end(p, 'unknown_service', `unknown service ${JSON.stringify(serviceName)} (${known})`);
      } else if (!service.healthy) {
        this.#end(p, 'service_unhealthy', `service ${JSON.stringify(serviceName)} is unhealthy`);
      } else if (abortSignal?.aborted === true) {
        this.#end(p, 'user_cancelled', `cancelled: ${messageOf(abortSignal.reason)}`);
      } else {
        if (abortSignal !== undefined) {
          const onAbort = (): void => {
            if (this.#processes.get(pid) === p) this.cancel(pid, messageOf(abortSignal.reason));
          };
          abortSignal.addEventListener('abort', onAbort, { once: true });
          p.unlinkAbort = () => {
            abortSignal.removeEventListener('abort', onAbort);
          };
        }
        this.#enqueue(p);
        this.#requestSchedule();
      }
    });
    return { pid, result };
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
    const p = this.#lookup(pid);
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
      answer = parseResponse(response, 'response', 'PIPELINE_ARGUMENT_INVALID');
    } catch (error) {
      throw new KernelError({
        code: 'KERNEL_ARGUMENT_INVALID',
        argument: 'response',
        pid,
        message: messageOf(error),
        cause: error,
      });
    }
    if (interrupt.expiresAt !== undefined && Date.now() >= Date.parse(interrupt.expiresAt)) {
      throw new PipelineStateError({
        code: 'INTERRUPT_EXPIRED',
        envelopeId: pid,
        interruptId: interrupt.id,
        expiresAt: interrupt.expiresAt,
        message: `Cannot resume process ${JSON.stringify(pid)}: its ${interrupt.kind} interrupt expired at ${interrupt.expiresAt}`,
      });
    }
    p.response = { ...answer };
    const result = new Promise<Envelope>((resolve) => {
      p.settle = resolve;
    });
    this.#batch(() => {
      this.#enqueue(p);
      this.#requestSchedule();
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
    const p = this.#lookup(pid);
    if (reason !== undefined && typeof reason !== 'string')
      throw argumentError('reason', `Invalid cancel reason ${describeValue(reason)}: expected a string`);
    const why = reason ?? DEFAULT_CANCEL_REASON;
    switch (p.state) {
      case 'terminated':
      case 'zombie':
        return;
      case 'running': {
        const controller = p.controller as AbortController;
        if (!controller.signal.aborted) controller.abort(new AbortedError({ message: why }));
        return;
      }
      default:
        this.#batch(() => {
          const service = p.service;
          const wasQueued = p.state === 'ready' || p.state === 'blocked';
          if (service !== undefined) service.ready.delete(p);
          this.#end(p, 'user_cancelled', `cancelled: ${why}`);
          if (wasQueued && service !== undefined) {
            this.#unblock(service);
            this.#requestSchedule();
          }
        });
    }
  }

  /**
   * A snapshot of a process: state, priority, service, usage and remaining quota, and the
   * pending interrupt while it is `waiting`. Usage is live while the process runs.
   * `undefined` for a pid the kernel does not know (never submitted, or forgotten).
   *
   * @example
   * ```ts
   * const s = kernel.status(pid);
   * console.log(s?.state, s?.usage.llmCalls, s?.remaining.maxLlmCalls);
   * ```
   */
  status(pid: string): ProcessStatus | undefined {
    const p = typeof pid === 'string' ? this.#processes.get(pid) : undefined;
    if (p === undefined) return undefined;
    const counters = p.live ?? p.envelope;
    const llmCalls = counters?.llmCalls ?? 0;
    const agentHops = counters?.agentHops ?? 0;
    const iterations = counters?.iteration ?? 0;
    const toolCalls = p.toolCalls.used;
    const elapsedMs = p.elapsedMs + (p.state === 'running' ? Date.now() - p.startedAt : 0);
    const remaining: Partial<ResourceQuota> = {};
    const q = p.quota;
    if (q.maxLlmCalls !== undefined) remaining.maxLlmCalls = Math.max(0, q.maxLlmCalls - llmCalls);
    if (q.maxToolCalls !== undefined) remaining.maxToolCalls = Math.max(0, q.maxToolCalls - toolCalls);
    if (q.maxAgentHops !== undefined) remaining.maxAgentHops = Math.max(0, q.maxAgentHops - agentHops);
    if (q.maxIterations !== undefined) remaining.maxIterations = Math.max(0, q.maxIterations - iterations);
    if (q.timeoutMs !== undefined) remaining.timeoutMs = Math.max(0, q.timeoutMs - elapsedMs);
    const status: ProcessStatus = {
      pid: p.pid,
      state: p.state,
      priority: p.priority,
      service: p.serviceName,
      usage: { llmCalls, toolCalls, agentHops, iterations, elapsedMs },
      remaining,
    };
    if (p.state === 'waiting') status.interrupt = (p.envelope as Envelope).interrupt;
    return status;
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
    return typeof pid === 'string' ? this.#processes.get(pid)?.envelope : undefined;
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
    this.#listeners = [...this.#listeners, listener];
    let active = true;
    return () => {
      if (!active) return;
      active = false;
      this.#listeners = this.#listeners.filter((l) => l !== listener);
    };
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
    const o = checkRecord<KernelEventsOptions>(opts, 'opts', ['abortSignal']);
    const abortSignal = o.abortSignal;
    if (abortSignal !== undefined && !isAbortSignal(abortSignal)) {
      throw argumentError(
        'opts.abortSignal',
        `Invalid abortSignal ${describeValue(abortSignal)}: expected an AbortSignal`,
      );
    }
    let buffer: KernelEvent[] = [];
    let head = 0;
    const s: { wake: (() => void) | undefined; done: boolean } = { wake: undefined, done: false };
    const notify = (): void => {
      const wake = s.wake;
      s.wake = undefined;
      if (wake !== undefined) wake();
    };
    const finish = (): void => {
      if (s.done) return;
      s.done = true;
      unsubscribe();
      abortSignal?.removeEventListener('abort', finish);
      buffer = [];
      head = 0;
      notify();
    };
    const unsubscribe = this.on((event) => {
      buffer.push(event);
      notify();
    });
    if (abortSignal?.aborted === true) finish();
    else abortSignal?.addEventListener('abort', finish, { once: true });
    return {
      [Symbol.asyncIterator]: () => ({
        next: async (): Promise<IteratorResult<KernelEvent>> => {
          while (head >= buffer.length && !s.done) {
            await new Promise<void>((resolve) => {
              s.wake = resolve;
            });
          }
          if (head < buffer.length) {
            const event = buffer[head] as KernelEvent;
            buffer[head++] = undefined as unknown as KernelEvent;
            if (head === buffer.length) {
              buffer = [];
              head = 0;
            }
            return { value: event, done: false };
          }
          return { value: undefined, done: true };
        },
        return: (): Promise<IteratorResult<KernelEvent>> => {
          finish();
          return Promise.resolve({ value: undefined, done: true });
        },
      }),
    };
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
    if (this.#active === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.#drainWaiters.push(resolve);
    });
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
    const p = this.#lookup(pid);
    if (p.state !== 'terminated' && p.state !== 'zombie') {
      throw new KernelError({
        code: 'KERNEL_INVALID_STATE',
        pid,
        state: p.state,
        message: `Cannot reap process ${JSON.stringify(pid)}: it is ${p.state}, expected terminated or zombie`,
      });
    }
    this.#forget(p);
  }

  // ------------------------------------------------------------------------------ internals

  #lookup(pid: string): Process {
    const p = typeof pid === 'string' ? this.#processes.get(pid) : undefined;
    if (p === undefined) {
      throw new KernelError({
        code: 'KERNEL_UNKNOWN_PROCESS',
        message: `Unknown process ${describeValue(pid)}: expected the pid of a process submitted to this kernel and not yet forgotten`,
        ...(typeof pid === 'string' ? { pid } : {}),
      });
    }
    return p;
  }

  #serviceList(): string {
    return this.#services.size === 0
      ? '(none registered)'
      : [...this.#services.keys()].map((n) => JSON.stringify(n)).join(', ');
  }

  /** Moves `p` to `to` (per the lifecycle table), keeping the drain count and emitting the change. */
  #transition(p: Process, to: ProcessState): void {
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
    p.epoch++;
    this.#emit({ type: 'process_state_changed', pid: p.pid, from, to });
    if (ACTIVE[from] !== ACTIVE[to]) this.#active += ACTIVE[to] ? 1 : -1;
  }

  /** Queues a `new` or `waiting` process: `ready`, or `blocked` when its service is full. */
  #enqueue(p: Process): void {
    const service = p.service as Service;
    p.seq = this.#seq++;
    this.#transition(p, 'ready');
    if (service.running + service.ready.size < service.maxConcurrent) {
      this.#queueReady(p, service);
      return;
    }
    // The service's ready processes are the most urgent of its queued ones: `p` displaces the
    // least urgent of them if it is more urgent.
    let worst: Process | undefined;
    for (const r of service.ready)
      if (worst === undefined || r.rank > worst.rank || (r.rank === worst.rank && r.seq > worst.seq)) worst = r;
    if (worst !== undefined && (p.rank < worst.rank || (p.rank === worst.rank && p.seq < worst.seq))) {
      service.ready.delete(worst);
      this.#block(worst, service);
      this.#queueReady(p, service);
    } else {
      this.#block(p, service);
    }
  }

  #queueReady(p: Process, service: Service): void {
    service.ready.add(p);
    this.#ready.push(p);
  }

  #block(p: Process, service: Service): void {
    this.#transition(p, 'blocked');
    service.blocked.push(p);
  }

  /** Moves the service's most urgent blocked processes to `ready` while it has free slots. */
  #unblock(service: Service): void {
    while (service.running + service.ready.size < service.maxConcurrent) {
      const p = service.blocked.pop();
      if (p === undefined) return;
      this.#transition(p, 'ready');
      this.#queueReady(p, service);
    }
  }

  #requestSchedule(): void {
    if (this.#scheduleQueued) return;
    this.#scheduleQueued = true;
    queueMicrotask(() => {
      this.#scheduleQueued = false;
      this.#batch(() => {
        this.#schedule();
      });
    });
  }

  /** Starts the most urgent ready processes while fewer than `maxRunning` run. */
  #schedule(): void {
    while (this.#running < this.maxRunning) {
      const p = this.#ready.pop();
      if (p === undefined) return;
      const service = p.service as Service;
      service.ready.delete(p);
      if (!service.healthy) {
        this.#end(p, 'service_unhealthy', `service ${JSON.stringify(service.name)} is unhealthy`);
        this.#unblock(service);
        continue;
      }
      this.#start(p, service);
    }
  }

  #start(p: Process, service: Service): void {
    const q = p.quota;
    let timeoutMs: number | undefined;
    if (q.timeoutMs !== undefined) {
      timeoutMs = q.timeoutMs - p.elapsedMs;
      if (timeoutMs <= 0) {
        // the running time of earlier segments already used it all (clock granularity)
        this.#emit({
          type: 'resource_exhausted',
          pid: p.pid,
          resource: 'timeoutMs',
          used: p.elapsedMs,
          limit: q.timeoutMs,
        });
        this.#end(p, 'timeout_exceeded', `the process used its timeoutMs quota of ${q.timeoutMs} ms`);
        this.#unblock(service);
        return;
      }
    }
    this.#running++;
    service.running++;
    this.#transition(p, 'running');
    const controller = new AbortController();
    p.controller = controller;
    p.startedAt = Date.now();
    const control: RunControl = {
      toolCalls: p.toolCalls,
      maxToolCalls: q.maxToolCalls ?? Infinity,
      onState: (state) => {
        p.live = state;
      },
    };
    const options: RunOptions & { [RUN_CONTROL]: RunControl } = {
      abortSignal: controller.signal,
      [RUN_CONTROL]: control,
    };
    if (p.bounds !== undefined) options.bounds = p.bounds;
    if (timeoutMs !== undefined) options.timeoutMs = timeoutMs;
    const stored = p.envelope;
    let run: Promise<Envelope>;
    if (stored === undefined) {
      options.envelopeId = p.pid;
      options.mode = p.mode;
      run = service.runtime.run(p.input, options);
    } else {
      run = service.runtime.resume(stored, p.response ?? {}, options);
    }
    run.then(
      (envelope) => {
        this.#batch(() => {
          this.#finish(p, service, envelope, true);
        });
      },
      (error: unknown) => {
        this.#batch(() => {
          this.#finish(p, service, this.#rejectedEnvelope(p, error), false);
        });
      },
    );
  }

  /** A run stopped: the process waits on its interrupt or terminates; the slot frees. */
  #finish(p: Process, service: Service, envelope: Envelope, ran: boolean): void {
    p.elapsedMs += Date.now() - p.startedAt;
    p.controller = undefined;
    p.live = undefined;
    p.response = undefined;
    this.#running--;
    service.running--;
    if (envelope.terminated) {
      const exhausted = ran ? this.#exhausted(p, service, envelope) : undefined;
      if (exhausted !== undefined) this.#emit(exhausted);
      this.#terminate(p, envelope);
    } else {
      p.envelope = envelope;
      this.#transition(p, 'waiting');
      this.#emit({ type: 'interrupt_raised', pid: p.pid, interrupt: envelope.interrupt as Interrupt });
      this.#settle(p, envelope);
    }
    this.#unblock(service);
    this.#schedule();
  }

  /** The `resource_exhausted` event for a run a quota ended (not the pipeline's own bound). */
  #exhausted(p: Process, service: Service, env: Envelope): KernelEvent | undefined {
    const q = p.quota;
    const pipeline = service.runtime.pipeline;
    const event = (resource: keyof ResourceQuota, used: number, limit: number): KernelEvent => ({
      type: 'resource_exhausted',
      pid: p.pid,
      resource,
      used,
      limit,
    });
    switch (env.terminalReason) {
      case 'max_llm_calls_exceeded':
        return q.maxLlmCalls !== undefined && q.maxLlmCalls <= pipeline.maxLlmCalls
          ? event('maxLlmCalls', env.llmCalls, q.maxLlmCalls)
          : undefined;
      case 'max_agent_hops_exceeded':
        return q.maxAgentHops !== undefined && q.maxAgentHops <= pipeline.maxAgentHops
          ? event('maxAgentHops', env.agentHops, q.maxAgentHops)
          : undefined;
      case 'max_iterations_exceeded':
        return q.maxIterations !== undefined && q.maxIterations <= pipeline.maxIterations
          ? event('maxIterations', env.iteration, q.maxIterations)
          : undefined;
      case 'max_tool_calls_exceeded':
        return q.maxToolCalls === undefined ? undefined : event('maxToolCalls', p.toolCalls.used, q.maxToolCalls);
      case 'timeout_exceeded':
        return q.timeoutMs === undefined ? undefined : event('timeoutMs', p.elapsedMs, q.timeoutMs);
      default:
        return undefined;
    }
  }

  /** The envelope of a run whose runtime call rejected (an interrupt that expired while queued, or a runtime bug). */
  #rejectedEnvelope(p: Process, error: unknown): Envelope {
    if (PipelineStateError.isInstance(error) && error.code === 'INTERRUPT_EXPIRED') {
      return this.#stoppedEnvelope(
        p,
        'timeout_exceeded',
        `the interrupt expired before the process was resumed: ${error.message}`,
      );
    }
    return this.#stoppedEnvelope(p, 'stage_failed', `the pipeline runtime failed: ${messageOf(error)}`);
  }

  /** Ends a process that is not running, with a terminated copy of its stored envelope (or a fresh one). */
  #end(p: Process, reason: TerminalReason, message: string): void {
    this.#terminate(p, this.#stoppedEnvelope(p, reason, message));
  }

  #stoppedEnvelope(p: Process, reason: TerminalReason, message: string): Envelope {
    const state =
      p.envelope === undefined
        ? newRunState(p.pid, p.input, p.mode, p.service?.firstStage ?? 'end')
        : runStateFrom(p.envelope);
    state.interrupt = undefined;
    terminate(state, reason, message, state.currentStage);
    return envelopeFromState(state);
  }

  /** terminated (result settles) → zombie (forgotten after `retainTerminatedMs`). */
  #terminate(p: Process, envelope: Envelope): void {
    p.envelope = envelope;
    this.#transition(p, 'terminated');
    if (p.unlinkAbort !== undefined) {
      p.unlinkAbort();
      p.unlinkAbort = undefined;
    }
    this.#settle(p, envelope);
    this.#transition(p, 'zombie');
    const retain = this.retainTerminatedMs;
    if (retain !== Infinity) {
      const timer = setTimeout(() => {
        this.#forget(p);
      }, retain);
      // a kernel's bookkeeping never keeps the process alive
      (timer as { unref?: () => void }).unref?.();
      p.forgetTimer = timer;
    }
  }

  #settle(p: Process, envelope: Envelope): void {
    const settle = p.settle;
    p.settle = undefined;
    if (settle !== undefined) settle(envelope);
  }

  #forget(p: Process): void {
    if (p.forgetTimer !== undefined) clearTimeout(p.forgetTimer);
    p.forgetTimer = undefined;
    if (this.#processes.get(p.pid) === p) this.#processes.delete(p.pid);
  }

  // ------------------------------------------------------------------------------ events

  #emit(event: KernelEvent): void {
    if (this.#listeners.length > 0) this.#pending.push(event);
  }

  /**
   * Runs a kernel operation. When the outermost operation ends, its events are delivered, and
   * then (listeners may have submitted or resumed processes) `drain` callers are released if
   * nothing is active.
   */
  #batch(operation: () => void): void {
    this.#depth++;
    try {
      operation();
    } finally {
      this.#depth--;
      if (this.#depth === 0) {
        this.#flush();
        if (this.#active === 0 && this.#drainWaiters.length > 0) {
          const waiters = this.#drainWaiters;
          this.#drainWaiters = [];
          for (const resolve of waiters) resolve();
        }
      }
    }
  }

  #flush(): void {
    if (this.#flushing) return;
    this.#flushing = true;
    try {
      // listeners may cause more events: they are appended and delivered by this same loop
      const pending = this.#pending;
      for (let i = 0; i < pending.length; i++) {
        const event = pending[i] as KernelEvent;
        const listeners = this.#listeners;
        for (let j = 0; j < listeners.length; j++) {
          try {
            (listeners[j] as Listener)(event);
          } catch (error) {
            queueMicrotask(() => {
              throw error;
            });
          }
        }
      }
    } finally {
      this.#pending = [];
      this.#flushing = false;
    }
  }
}

// ------------------------------------------------------------------------------ validation

function argumentError(argument: string, message: string): KernelError {
  return new KernelError({ code: 'KERNEL_ARGUMENT_INVALID', argument, message });
}

function checkRecord<T extends object>(value: T, path: string, allowed: readonly string[]): T {
  if (typeof value !== 'object' || (value as unknown) === null || Array.isArray(value)) {
    throw argumentError(path, `Invalid ${path} ${describeValue(value)}: expected an object { ${allowed.join(', ')} }`);
  }
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key))
      throw argumentError(
        `${path}.${key}`,
        `Unknown option ${JSON.stringify(key)} in ${path}: expected one of ${allowed.join(', ')}`,
      );
  }
  return value;
}

/** A positive integer or Infinity, or undefined. */
function checkLimit(value: unknown, path: string): number | undefined {
  if (value === undefined) return undefined;
  if (value === Infinity || (typeof value === 'number' && Number.isSafeInteger(value) && value >= 1)) return value;
  const name = path.slice(path.lastIndexOf('.') + 1);
  throw argumentError(path, `Invalid ${name} ${describeValue(value)}: expected a positive integer or Infinity`);
}

function checkQuota(value: unknown): Readonly<ResourceQuota> {
  if (value === undefined) return EMPTY_QUOTA;
  const q = checkRecord(value as Record<string, unknown>, 'opts.quota', QUOTA_KEYS);
  const out: ResourceQuota = {};
  for (const key of QUOTA_KEYS) {
    const v = q[key];
    if (v === undefined) continue;
    if (key === 'timeoutMs') {
      if (typeof v !== 'number' || !Number.isFinite(v) || v <= 0 || v > MAX_TIMEOUT_MS) {
        throw argumentError(
          `opts.quota.${key}`,
          `Invalid quota timeoutMs ${describeValue(v)}: expected a positive number of milliseconds up to ${MAX_TIMEOUT_MS}`,
        );
      }
    } else if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1) {
      throw argumentError(`opts.quota.${key}`, `Invalid quota ${key} ${describeValue(v)}: expected a positive integer`);
    }
    out[key] = v;
  }
  return Object.freeze(out);
}

const EMPTY_QUOTA: Readonly<ResourceQuota> = Object.freeze({});

function isAbortSignal(value: unknown): value is AbortSignal {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as AbortSignal).aborted === 'boolean' &&
    typeof (value as AbortSignal).addEventListener === 'function' &&
    typeof (value as AbortSignal).removeEventListener === 'function'
  );
}
