import type { ChatMessage, ExecutionStrategy, Outcome, Signal } from '@signalyard/core';
import type { ComposedRouter } from '@signalyard/router';
import type { AgentRuntime } from './runner-options.js';
import type { Stopper } from './stopper.js';

/** One signal waiting for, or going through, its session's queue. @internal */
export interface Job {
  readonly signal: Signal;
  readonly resolve: (outcome: Outcome) => void;
  /** Set once the outcome is resolved; a settled job is skipped by the queue. */
  settled: boolean;
  /** Stops this signal's work: force_stop, the caller's abortSignal, close() timeout. */
  readonly stop: Stopper;
  /** Removes the listener on the caller's abortSignal. */
  detach: (() => void) | undefined;
  /** Whether `signal_received` was already emitted (stop signals routed on arrival). */
  announced: boolean;
}

/** A session's live state once loaded from the store (or created fresh). @internal */
export interface LoadedState {
  readonly kind: 'loaded';
  /** This session's strategy instance. */
  readonly strategy: ExecutionStrategy;
  /** Its composed router: the strategy's routes, the agent's, the plugins'. */
  readonly router: ComposedRouter;
  /** The checkpoint version it was loaded at or last saved as (0 = never saved). */
  version: number;
  history: readonly ChatMessage[];
  engineState: unknown;
}

/** Not loaded yet, or dropped after a failed save (the next signal reloads it). @internal */
export interface UnloadedState {
  readonly kind: 'unloaded';
}

/** What the runner knows of a session's checkpointed state. @internal */
export type SessionState = UnloadedState | LoadedState;

/** The state of a session the runner has not loaded. @internal */
export const UNLOADED: UnloadedState = Object.freeze({ kind: 'unloaded' });

/** A session the runner has seen: its queue and its {@link SessionState}. @internal */
export class LiveSession {
  readonly key: string;
  readonly agent: AgentRuntime;
  /** The route context every predicate of this session receives. */
  readonly ctx: { readonly sessionKey: string; readonly agentId: string };
  /** Taken slots are cleared, so a settled signal (and its payload) is unreachable from here. */
  readonly #queue: (Job | undefined)[] = [];
  #head = 0;
  running: Job | undefined;
  /** The processing loop, while one runs. */
  loop: Promise<void> | undefined;

  state: SessionState = UNLOADED;
  /** A load in flight (shared by the worker and a stop routed on arrival). */
  loading: Promise<LoadedState> | undefined;

  constructor(key: string, agent: AgentRuntime) {
    this.key = key;
    this.agent = agent;
    this.ctx = Object.freeze({ sessionKey: key, agentId: agent.id });
  }

  push(job: Job): void {
    this.#queue.push(job);
  }

  /** The next unsettled job, or undefined. */
  next(): Job | undefined {
    while (this.#head < this.#queue.length) {
      const job = this.#queue[this.#head] as Job;
      this.#queue[this.#head++] = undefined;
      if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
        this.#queue.splice(0, this.#head);
        this.#head = 0;
      }
      if (!job.settled) return job;
    }
    this.#queue.length = 0;
    this.#head = 0;
    return undefined;
  }

  /** The unsettled jobs waiting now (a copy; the queue is unchanged). */
  waiting(): Job[] {
    return this.#pending();
  }

  #pending(): Job[] {
    const jobs: Job[] = [];
    for (let i = this.#head; i < this.#queue.length; i++) {
      const job = this.#queue[i] as Job;
      if (!job.settled) jobs.push(job);
    }
    return jobs;
  }

  /** Whether an unsettled job is waiting (without taking it). */
  hasNext(): boolean {
    // Settled jobs at the head (stopped while waiting) are dropped here, so they are released
    // even when no job follows them.
    while (this.#head < this.#queue.length && (this.#queue[this.#head] as Job).settled) {
      this.#queue[this.#head++] = undefined;
    }
    if (this.#head < this.#queue.length) return true;
    this.#queue.length = 0;
    this.#head = 0;
    return false;
  }

  /** Removes and returns every unsettled queued job. */
  drain(): Job[] {
    const jobs = this.#pending();
    this.#queue.length = 0;
    this.#head = 0;
    return jobs;
  }

  /** Unsettled jobs waiting behind the one in flight. */
  get queued(): number {
    let n = 0;
    for (let i = this.#head; i < this.#queue.length; i++) if (!(this.#queue[i] as Job).settled) n++;
    return n;
  }

  get busy(): boolean {
    return this.running !== undefined;
  }

  get idle(): boolean {
    return this.running === undefined && this.loop === undefined && this.queued === 0;
  }
}
