import { before, type Queued } from './process-queue.js';

// The scheduling decisions, pure: each reads the queues and counters it is given and says what
// to do, changing nothing. The kernel applies them (transitions, queue moves, starting runs).

/** What the scheduler reads of a service. @internal */
export interface ServiceSlots<P> {
  readonly maxConcurrent: number;
  readonly running: number;
  readonly healthy: boolean;
  /** Its ready processes. */
  readonly ready: ReadonlySet<P>;
  /** Its blocked processes, most urgent first. */
  readonly blocked: { peek(): P | undefined };
}

/** What the scheduler reads of the kernel. @internal */
export interface KernelSlots<P> {
  readonly maxRunning: number;
  readonly running: number;
  /** The most urgent ready process. */
  peekReady(): P | undefined;
  serviceOf(p: P): ServiceSlots<P>;
}

/** Where a process being queued goes. @internal */
export type Admission<P> =
  /** `ready`; `displaced` (a less urgent ready process of its service) goes to `blocked` to make room. */
  | { readonly to: 'ready'; readonly displaced: P | undefined }
  /** `blocked`: its service is full with more urgent processes. */
  | { readonly to: 'blocked' };

/** What the kernel does next. @internal */
export type Dispatch<P> =
  /** Start the process's run. */
  | { readonly kind: 'start'; readonly process: P }
  /** End the process `service_unhealthy`: it reached the front while its service is unhealthy. */
  | { readonly kind: 'refuse'; readonly process: P }
  /** Nothing: `maxRunning` processes run, or none is ready. */
  | undefined;

const READY_FREE = Object.freeze({ to: 'ready', displaced: undefined } as const);
const BLOCKED = Object.freeze({ to: 'blocked' } as const);

/**
 * Where a process entering the queue (submitted, or resumed) goes. A service's ready processes
 * are the most urgent of its queued ones, at most as many as its free slots: `p` is `ready` when
 * a slot is free, or when it is more urgent than the least urgent ready process of its service
 * (which it displaces); otherwise `blocked`.
 * @internal
 */
export function admit<P extends Queued>(p: P, service: ServiceSlots<P>): Admission<P> {
  if (service.running + service.ready.size < service.maxConcurrent) return READY_FREE;
  let worst: P | undefined;
  for (const r of service.ready) if (worst === undefined || before(worst, r)) worst = r;
  if (worst !== undefined && before(p, worst)) return { to: 'ready', displaced: worst };
  return BLOCKED;
}

/** The blocked process of `service` that becomes `ready` now (a slot is free), if any. @internal */
export function nextUnblocked<P>(service: ServiceSlots<P>): P | undefined {
  return service.running + service.ready.size < service.maxConcurrent ? service.blocked.peek() : undefined;
}

/**
 * The next dispatch: while fewer than `maxRunning` run, the most urgent ready process (FIFO
 * within a priority) starts, unless its service has become unhealthy. No preemption: a running
 * process is never stopped for a more urgent one.
 * @internal
 */
export function nextDispatch<P>(kernel: KernelSlots<P>): Dispatch<P> {
  if (kernel.running >= kernel.maxRunning) return undefined;
  const p = kernel.peekReady();
  if (p === undefined) return undefined;
  return kernel.serviceOf(p).healthy ? { kind: 'start', process: p } : { kind: 'refuse', process: p };
}
