import type { InboxEntry, Outcome, RunnerEvent, SessionCause, SessionLock, Signal } from '@signalyard/core';
import { onAbort, type EventChannel } from '@signalyard/core/internal';
import type { BatchApply, SignalApply } from './appliers.js';
import type { SignalApplied } from './signal-step.js';
import { Batch } from './busy-batch.js';
import { LiveSession, type Job, type Task } from './live-session.js';
import { OutcomeEvent } from './outcome-event.js';
import { agentMismatch, closedError, failedOutcome, startFailed, stoppedOutcome } from './outcomes.js';
import type { AgentRuntime } from './runner-options.js';
import type { Semaphore } from './semaphore.js';
import type { SessionPersistence } from './session-persistence.js';
import { runBatch, runLocked, runTask, thrownOutcome } from './session-lock-run.js';
import {
  interruptOnArrival,
  loadForStop,
  stopOnArrival,
  type ArrivalDeps,
  type ArrivalEnd,
} from './stop-on-arrival.js';
import { SignalStep } from './signal-step.js';
import { FastLane, LANE } from './session-lane.js';
import { Stopper } from './stopper.js';
import type { TurnSink } from './turn-stream.js';

const MAX_IDLE_SESSIONS = 10_000;

/** What the queue awaits once the runner has started: a settled promise, shared. */
const STARTED: Promise<void> = Promise.resolve();

/** The resolve function of the promise made last with {@link captureResolve}, read at once. */
let captured: ((outcome: Outcome) => void) | undefined;
/** One executor for every signal's promise: no closure (and no context) made per signal. */
const captureResolve = (resolve: (outcome: Outcome) => void): void => {
  captured = resolve;
};

/** What a {@link SessionQueue} works with. @internal */
export interface QueueDeps {
  readonly hub: EventChannel<RunnerEvent>;
  readonly slots: Semaphore;
  readonly persistence: SessionPersistence;
  readonly lock: SessionLock | undefined;
  /** Applies one signal: load → route → apply → save. */
  readonly applier: SignalApply;
  /** Applies a batch of user messages (`whenBusy` collect / interrupt), settling its members. */
  readonly batches: BatchApply;
  /** `undefined` once the runner has started; else a promise that settles when it has (or failed to). */
  readonly whenStarted: () => Promise<void> | undefined;
  readonly closing: () => boolean;
  /** Whether route decisions carry the router's `explain()` list now. */
  readonly explaining: () => boolean;
  /** With a durable inbox: what runs around an entry's application. */
  readonly inbox?: InboxHooks;
}

/** What the queue runs around an inbox entry's application (a runner with a durable inbox). @internal */
export interface InboxHooks {
  /**
   * Before the entry's job runs (its delivery counted, poison and already-settled entries
   * handled): `false` when it settled the job itself, which then does not run.
   */
  gate(session: LiveSession, job: Job): Promise<boolean>;
  /** Before a member taken into a batch with an entry is applied, on the batch's loaded state (`carried`). */
  member(
    session: LiveSession,
    job: Job,
    carried: Readonly<Record<string, unknown>>,
  ): Promise<'run' | 'settled' | 'giveBack'>;
  /** After the entry's job was applied, before its outcome is resolved: `inboxSeq` covers it. */
  applied(session: LiveSession, job: Job, outcome: Outcome): Promise<void>;
}

/**
 * The live sessions and their queues: one signal at a time per session, in call order, across at
 * most `maxConcurrentSessions` sessions; stop signals routed on arrival; every signal resolved
 * exactly once with its outcome (and an `outcome` event).
 * @internal
 */
export class SessionQueue {
  readonly #d: QueueDeps;
  readonly #sessions = new Map<string, LiveSession>();
  readonly #arrivals: ArrivalDeps;
  /** Without a lock and a durable inbox: where a session's signals run (the general path takes what it does not). */
  readonly #lane: FastLane | undefined;

  constructor(deps: QueueDeps) {
    this.#d = deps;
    this.#lane =
      deps.lock === undefined && deps.inbox === undefined
        ? new FastLane({
            applier: deps.applier,
            slots: deps.slots,
            closing: deps.closing,
            settle: (job, outcome) => {
              this.settle(job, outcome);
            },
            settleApplied: (session, job, applied) => {
              this.#settleApplied(session, job, applied);
            },
            slowLoop: (session) => this.#process(session),
          })
        : undefined;
    this.#arrivals = {
      hub: deps.hub,
      explaining: deps.explaining,
      persistence: deps.persistence,
      settle: (job, outcome) => {
        this.settle(job, outcome);
      },
    };
  }

  /** The live session of canonical key `key`, if any. */
  live(key: string): LiveSession | undefined {
    return this.#sessions.get(key);
  }

  /** Enqueues synchronously (before any await), so per-session order is call order. */
  enqueue(
    key: string,
    agent: AgentRuntime,
    signal: Signal,
    callerAbort: AbortSignal | undefined,
    sink?: TurnSink,
  ): Promise<Outcome> {
    return this.#enqueue(key, agent, signal, callerAbort, sink, undefined);
  }

  /** Enqueues an inbox entry's signal (a worker, in `seq` order; `sink` publishes its events): its job, and its outcome once settled. */
  enqueueEntry(
    key: string,
    agent: AgentRuntime,
    signal: Signal,
    entry: InboxEntry,
    sink?: TurnSink,
  ): { job: Job; outcome: Promise<Outcome> } {
    const outcome = this.#enqueue(key, agent, signal, undefined, sink, entry);
    const job = this.#lastJob as Job;
    this.#lastJob = undefined;
    return { job, outcome };
  }

  /** The job {@link SessionQueue.#enqueue} made last (read at once by `enqueueEntry`: no object per signal on the common path). */
  #lastJob: Job | undefined;

  #enqueue(
    key: string,
    agent: AgentRuntime,
    signal: Signal,
    callerAbort: AbortSignal | undefined,
    sink: TurnSink | undefined,
    entry: InboxEntry | undefined,
  ): Promise<Outcome> {
    const session = this.#session(key, agent);
    const promise = new Promise<Outcome>(captureResolve);
    const resolve = captured as (outcome: Outcome) => void;
    captured = undefined;
    const job: Job = {
      kind: 'signal',
      signal,
      resolve,
      settled: false,
      stop: new Stopper(),
      detach: undefined,
      announced: false,
      lockLost: false,
      sink,
      entry,
    };
    if (entry !== undefined) this.#lastJob = job;
    if (session.agent !== agent) {
      this.settle(
        job,
        failedOutcome({ sessionKey: key, agentId: agent.id }, agentMismatch(key, session.agent.id, agent.id)),
      );
      return promise;
    }
    if (callerAbort !== undefined) {
      if (callerAbort.aborted) {
        this.settle(job, stoppedOutcome(session.ctx));
        return promise;
      }
      this.#linkCallerAbort(session, job, callerAbort);
    }
    // A stop is routed on arrival, never waiting in the queue. It can only stop the work that
    // existed when it arrived: the turn in flight and the signals waiting then.
    if (signal.kind === 'stop') {
      const victims = session.waitingSignals();
      const inFlight = session.runningSignals();
      if (session.state.kind === 'loaded')
        this.#afterArrival(session, job, stopOnArrival(this.#arrivals, session, job, victims, inFlight));
      else void this.#loadThenStop(session, job, victims, inFlight);
      return promise;
    }
    if (signal.kind === 'user_message' && session.interruptTurn !== undefined) interruptOnArrival(session, signal);
    session.push(job);
    this.#run(session);
    return promise;
  }

  /** A stop for a session not loaded yet: load it, then route the stop. */
  async #loadThenStop(
    session: LiveSession,
    job: Job,
    victims: readonly Job[],
    inFlight: readonly Job[],
  ): Promise<void> {
    if (await loadForStop(this.#arrivals, session, job))
      this.#afterArrival(session, job, stopOnArrival(this.#arrivals, session, job, victims, inFlight));
  }

  /** A stop routed on arrival to another action is applied in order, like any signal. */
  #afterArrival(session: LiveSession, job: Job, end: ArrivalEnd): void {
    if (end === 'settled') return;
    session.push(job);
    this.#run(session);
  }

  #session(key: string, agent: AgentRuntime): LiveSession {
    let session = this.#sessions.get(key);
    if (session === undefined) {
      session = new LiveSession(key, agent);
      this.#sessions.set(key, session);
      this.#evictIdle();
    }
    return session;
  }

  #linkCallerAbort(session: LiveSession, job: Job, callerAbort: AbortSignal): void {
    job.detach = onAbort(callerAbort, () => {
      if (session.isRunning(job)) job.stop.abort(callerAbort.reason);
      else this.settle(job, stoppedOutcome(session.ctx));
    });
  }

  /** Runs the session's queue unless a loop runs it: on the fast lane once the runner has started, else the general path. */
  #run(session: LiveSession): void {
    if (session.loop !== undefined) return;
    if (this.#lane !== undefined && this.#d.whenStarted() === undefined) {
      session.loop = LANE;
      this.#lane.start(session);
    } else session.loop = this.#process(session);
  }

  async #process(session: LiveSession): Promise<void> {
    try {
      try {
        // Awaited even when started (one microtask): a signal never starts inside the dispatch()
        // that queued it, so a stop dispatched right after it still finds it waiting. A settled
        // promise rather than `undefined`: awaiting it makes no promise (`await undefined` does).
        await (this.#d.whenStarted() ?? STARTED);
      } catch (error) {
        for (let job = session.next(); job !== undefined; job = session.next()) {
          if (job.kind === 'task') job.cancel(startFailed(error));
          else this.settle(job, failedOutcome(session.ctx, startFailed(error)));
        }
        return;
      }
      // Wait for a slot before taking the next signal off the queue, so that a stop (or close)
      // arriving meanwhile still finds it queued.
      while (session.hasNext()) {
        const wait = this.#d.slots.acquire();
        if (wait !== undefined) await wait;
        try {
          const job = session.next();
          if (job === undefined) break;
          if (job.kind === 'task') {
            if (this.#d.closing()) job.cancel(closedError());
            else await runTask(this.#d.lock, session, job);
          } else if (this.#d.closing()) this.settle(job, stoppedOutcome(session.ctx));
          else if (job.entry !== undefined && !(await this.#d.inbox?.gate(session, job))) continue;
          else if (job.signal.kind === 'user_message' && session.agent.whenBusy !== 'queue')
            await this.#runBatch(session, job);
          else if (this.#d.lock !== undefined)
            this.#settleApplied(session, job, await runLocked(this.#d.applier, this.#d.lock, session, job));
          else {
            // Without a lock, its steps awaited in this loop's own frame (no async frame per step).
            session.running = job;
            let applied: SignalApplied;
            try {
              const { applier } = this.#d;
              let step = applier.begin(session, job);
              while (step instanceof SignalStep) {
                let ok = true;
                let value: unknown;
                try {
                  value = await step.raced();
                } catch (error) {
                  ok = false;
                  value = error;
                }
                step = applier.resume(step, ok, value);
              }
              applied = step instanceof Promise ? await step : step;
            } catch (error) {
              applied = { outcome: thrownOutcome(session, job.stop, error, 'ENGINE_FAILED'), stopQueued: false };
            } finally {
              session.running = undefined;
            }
            if (job.entry !== undefined) await this.#d.inbox?.applied(session, job, applied.outcome);
            this.#settleApplied(session, job, applied);
          }
        } finally {
          this.#d.slots.release();
        }
      }
    } finally {
      session.loop = undefined;
    }
  }

  /** Applies a batch of user messages that starts with `lead`, and settles what it left. */
  async #runBatch(session: LiveSession, lead: Job): Promise<void> {
    const hooks = this.#d.inbox;
    const batch = new Batch(
      session,
      lead,
      (job, outcome, cause) => {
        this.settle(job, outcome, true, cause);
      },
      hooks === undefined ? undefined : (job, carried) => hooks.member(session, job, carried),
    );
    const failure = await runBatch(this.#d.batches, this.#d.lock, batch, lead);
    // What the batch did not settle: the lock was lost or not taken.
    for (const job of batch.members) this.settle(job, failure ?? stoppedOutcome(session.ctx));
  }

  /**
   * Queues `run` on the session `key` of `agent`: it runs in its turn, after the signals queued
   * before it, and before those queued after it. Stop signals never cancel it; `close()` rejects
   * it with `RUNNER_CLOSED` while it waits.
   */
  enqueueTask<T>(key: string, agent: AgentRuntime, run: (session: LiveSession) => Promise<T>): Promise<T> {
    const session = this.#session(key, agent);
    return new Promise<T>((resolve, reject) => {
      const task: Task = {
        kind: 'task',
        settled: false,
        run: async (s) => {
          if (task.settled) return;
          task.settled = true;
          try {
            resolve(await run(s));
          } catch (error) {
            // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- the task's own error, passed through unchanged
            reject(error);
          }
        },
        cancel: (error) => {
          if (task.settled) return;
          task.settled = true;
          // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- a RunnerError or the lock's error
          reject(error);
        },
      };
      session.push(task);
      this.#run(session);
    });
  }

  /** Settles an applied signal, after stopping the signals queued behind it when it asks to. */
  #settleApplied(session: LiveSession, job: Job, applied: SignalApplied): void {
    if (applied.stopQueued) this.stopQueued(session);
    const cause = session.savedCause;
    session.savedCause = undefined;
    // Cleared when the application began (SignalApplier), so it is this signal's final save; the
    // kind is checked too, cheaply.
    this.settle(job, applied.outcome, true, cause?.signal?.kind === job.signal.kind ? cause : undefined);
  }

  /** Resolves every signal queued in `session` as `stopped` (queued tasks stay queued). */
  stopQueued(session: LiveSession): void {
    for (const queued of session.waitingSignals()) this.settle(queued, stoppedOutcome(session.ctx));
  }

  /**
   * Resolves `job` with `outcome` (once; later calls are ignored) and emits `outcome` — unless
   * `settles` is false: the job ends here but its entry stays in the inbox, unsettled.
   */
  settle(job: Job, outcome: Outcome, settles = true, cause?: SessionCause): void {
    if (job.settled) return;
    job.settled = true;
    job.detach?.();
    const { hub } = this.#d;
    if (settles && hub.hasListeners) hub.emit(new OutcomeEvent(outcome, job.signal, cause));
    job.sink?.({ type: 'outcome', outcome });
    job.resolve(outcome);
  }

  /**
   * For `close()`: resolves every queued signal as `stopped` (with no `outcome` event for one with
   * an inbox entry: the entry stays in the inbox for a later delivery); returns the loops still running.
   */
  stopAllQueued(): Promise<void>[] {
    for (const session of this.#sessions.values()) {
      for (const queued of session.drain()) {
        if (queued.kind === 'task') queued.cancel(closedError());
        else this.settle(queued, stoppedOutcome(session.ctx), queued.entry === undefined);
      }
    }
    return this.loops();
  }

  /** The processing loops running now. */
  loops(): Promise<void>[] {
    const loops: Promise<void>[] = [];
    for (const s of this.#sessions.values()) {
      if (s.loop === LANE) loops.push((this.#lane as FastLane).whenDone(s));
      else if (s.loop !== undefined) loops.push(s.loop);
    }
    return loops;
  }

  /** Aborts every turn in flight with `reason`. */
  abortRunning(reason: unknown): void {
    for (const session of this.#sessions.values()) {
      const running = session.running;
      if (session.batch !== undefined) session.batch.abort(reason);
      else if (running?.kind === 'signal') running.stop.abort(reason);
    }
  }

  #evictIdle(): void {
    if (this.#sessions.size <= MAX_IDLE_SESSIONS) return;
    for (const [key, s] of this.#sessions) {
      if (this.#sessions.size <= MAX_IDLE_SESSIONS * 0.9) break;
      if (s.idle) this.#sessions.delete(key);
    }
  }
}
