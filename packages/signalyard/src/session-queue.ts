import { AbortedError, Action, type Outcome, type RunnerEvent, type SessionLock, type Signal } from '@signalyard/core';
import { errorText, isAbortSignal, type EventChannel } from '@signalyard/core/internal';
import type { RouteMatch } from '@signalyard/router';
import { emitDecision, userMessageDefault } from './apply-signal.js';
import { RunnerError, type RunnerErrorCode } from './errors/runner-error.js';
import { routeExplained, type ExplainedDecision } from './route-decision.js';
import { Batch } from './busy-batch.js';
import { LiveSession, type Job, type Task } from './live-session.js';
import {
  agentMismatch,
  asSignalyardError,
  closedError,
  failedOutcome,
  outcomeOf,
  startFailed,
  stoppedOutcome,
} from './outcomes.js';
import type { AgentRuntime } from './runner-options.js';
import type { Semaphore } from './semaphore.js';
import type { SessionPersistence } from './session-persistence.js';
import { Stopper } from './stopper.js';
import type { TurnSink } from './turn-stream.js';

const MAX_IDLE_SESSIONS = 10_000;

/** What a {@link SessionQueue} works with. @internal */
export interface QueueDeps {
  readonly hub: EventChannel<RunnerEvent>;
  readonly slots: Semaphore;
  readonly persistence: SessionPersistence;
  readonly lock: SessionLock | undefined;
  /** Load → route → apply → save one signal (`reload`: from the store first, a lock was just taken). */
  readonly apply: (session: LiveSession, job: Job, reload: boolean) => Promise<Outcome>;
  /** Applies a batch of user messages (`whenBusy` collect / interrupt), settling its members. */
  readonly applyBatch: (batch: Batch, reload: boolean) => Promise<void>;
  /** `undefined` once the runner has started; else a promise that settles when it has (or failed to). */
  readonly whenStarted: () => Promise<void> | undefined;
  readonly closing: () => boolean;
  /** Whether route decisions carry the router's `explain()` list now. */
  readonly explaining: () => boolean;
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

  constructor(deps: QueueDeps) {
    this.#d = deps;
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
    const session = this.#session(key, agent);
    let resolve!: (outcome: Outcome) => void;
    const promise = new Promise<Outcome>((r) => (resolve = r));
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
    };
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
      if (session.state.kind === 'loaded') this.#stopOnArrival(session, job, victims, inFlight);
      else void this.#loadThenStop(session, job, victims, inFlight);
      return promise;
    }
    if (signal.kind === 'user_message' && session.interruptTurn !== undefined)
      this.#interruptOnArrival(session, signal);
    session.push(job);
    session.loop ??= this.#process(session);
    return promise;
  }

  /**
   * `whenBusy: 'interrupt'`: a user message routed to `continue` on arrival aborts the engine turn
   * of the user messages in flight (their callers get `stopped`); it is then applied in its place
   * in the queue, and messages arriving until its turn starts join it.
   */
  #interruptOnArrival(session: LiveSession, signal: Signal): void {
    const { state } = session;
    if (state.kind !== 'loaded') return;
    let action: Action;
    try {
      action = state.router.match(signal, session.ctx)?.action ?? userMessageDefault(state);
    } catch {
      return; // routing fails again in the message's turn, and is reported there
    }
    if (action.type !== 'continue') return;
    const interrupt = session.interruptTurn;
    session.interruptTurn = undefined;
    interrupt?.(new AbortedError({ message: 'Interrupted by a newer user message' }));
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
    const onAbort = (): void => {
      if (session.isRunning(job)) job.stop.abort(callerAbort.reason);
      else this.settle(job, stoppedOutcome(session.ctx));
    };
    callerAbort.addEventListener('abort', onAbort, { once: true });
    job.detach = () => {
      callerAbort.removeEventListener('abort', onAbort);
    };
  }

  async #process(session: LiveSession): Promise<void> {
    try {
      try {
        // Awaited even when started (one microtask): a signal never starts inside the dispatch()
        // that queued it, so a stop dispatched right after it still finds it waiting.
        await this.#d.whenStarted();
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
            else await this.#runTask(session, job);
          } else if (this.#d.closing()) this.settle(job, stoppedOutcome(session.ctx));
          else if (job.signal.kind === 'user_message' && session.agent.whenBusy !== 'queue')
            await this.#runBatch(session, job);
          else if (this.#d.lock !== undefined) await this.#runLocked(session, job, this.#d.lock);
          else {
            // Without a lock, in this loop's own frame (one async frame less per signal).
            session.running = job;
            let outcome: Outcome;
            try {
              outcome = await this.#d.apply(session, job, false);
            } catch (error) {
              outcome = thrownOutcome(session, job.stop, error, 'ENGINE_FAILED');
            } finally {
              session.running = undefined;
            }
            this.settle(job, outcome);
          }
        } finally {
          this.#d.slots.release();
        }
      }
    } finally {
      session.loop = undefined;
    }
  }

  /** Applies one signal inside the session's lock, and settles it. */
  async #runLocked(session: LiveSession, job: Job, lock: SessionLock): Promise<void> {
    const { apply } = this.#d;
    session.running = job;
    let outcome: Outcome;
    const held: LockWatch = { entered: false, lost: undefined };
    try {
      outcome =
        (await lock.withLock(
          session.key,
          (lockSignal) =>
            underLock(
              held,
              lockSignal,
              (reason) => {
                job.lockLost = true; // another process may hold the session now: write nothing more
                job.stop.abort(reason);
              },
              () => apply(session, job, true),
            ),
          { abortSignal: job.stop.signal },
        )) ?? stoppedOutcome(session.ctx); // the lock lost before applying: reported below
      if (held.lost !== undefined) outcome = failedOutcome(session.ctx, lockFailed(session, held, held.lost.reason));
    } catch (error) {
      // The lock lost, or not taken for another reason than this signal's stop: the lock failed.
      const lockFailure = held.lost !== undefined || (!held.entered && !job.stop.aborted);
      outcome = lockFailure
        ? failedOutcome(session.ctx, lockFailed(session, held, error))
        : thrownOutcome(session, job.stop, error, 'SESSION_LOCK_FAILED');
    } finally {
      session.running = undefined;
    }
    this.settle(job, outcome);
  }

  /** Applies a batch of user messages that starts with `lead` (inside the session's lock, when there is one). */
  async #runBatch(session: LiveSession, lead: Job): Promise<void> {
    const batch = new Batch(session, lead, (job, outcome) => {
      this.settle(job, outcome);
    });
    session.running = lead;
    session.batch = batch;
    const lock = this.#d.lock;
    const held: LockWatch = { entered: false, lost: undefined };
    let failure: Outcome | undefined;
    try {
      if (lock === undefined) await this.#d.applyBatch(batch, false);
      else
        await lock.withLock(
          session.key,
          (lockSignal) =>
            underLock(
              held,
              lockSignal,
              (reason) => {
                batch.lockLost = true;
                batch.abort(reason);
              },
              () => this.#d.applyBatch(batch, true),
            ),
          { abortSignal: lead.stop.signal },
        );
      if (held.lost !== undefined) failure = failedOutcome(session.ctx, lockFailed(session, held, held.lost.reason));
    } catch (error) {
      const lockFailure = lock !== undefined && (held.lost !== undefined || (!held.entered && !lead.stop.aborted));
      failure = lockFailure
        ? failedOutcome(session.ctx, lockFailed(session, held, error))
        : thrownOutcome(session, lead.stop, error, 'ENGINE_FAILED');
    } finally {
      session.running = undefined;
      session.batch = undefined;
    }
    // What the batch did not settle: the lock was lost or not taken.
    for (const job of batch.members) this.settle(job, failure ?? stoppedOutcome(session.ctx));
  }

  /** Runs a task in its turn (inside the session's lock, when there is one). */
  async #runTask(session: LiveSession, task: Task): Promise<void> {
    session.running = task;
    try {
      const lock = this.#d.lock;
      if (lock === undefined) await task.run(session);
      else await lock.withLock(session.key, () => task.run(session));
    } catch (error) {
      task.cancel(error); // a lock failure: the task did not run (run() settles its own errors)
    } finally {
      session.running = undefined;
    }
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
      session.loop ??= this.#process(session);
    });
  }

  /** A stop for a session not loaded yet: load it (sharing the worker's load), then route the stop. */
  async #loadThenStop(
    session: LiveSession,
    job: Job,
    victims: readonly Job[],
    inFlight: readonly Job[],
  ): Promise<void> {
    try {
      await this.#d.persistence.loadShared(session);
    } catch (error) {
      this.settle(job, failedOutcome(session.ctx, asSignalyardError(error, 'CHECKPOINT_LOAD_FAILED')));
      return;
    }
    if (!job.settled) this.#stopOnArrival(session, job, victims, inFlight);
  }

  /** A stop signal is routed on arrival, without waiting behind the turn in flight. */
  #stopOnArrival(session: LiveSession, job: Job, victims: readonly Job[], inFlight: readonly Job[]): void {
    const { hub } = this.#d;
    job.announced = true;
    hub.emit({ type: 'signal_received', ...session.ctx, signal: job.signal });
    let match: RouteMatch | undefined;
    let explained: ExplainedDecision | undefined;
    try {
      const { state } = session;
      if (state.kind === 'loaded' && this.#d.explaining())
        explained = routeExplained(state.router, job.signal, session.ctx);
      else if (state.kind === 'loaded') match = state.router.match(job.signal, session.ctx);
      if (explained !== undefined) match = explained.match;
    } catch (error) {
      hub.emit({ type: 'route_decided', ...session.ctx, signal: job.signal, action: undefined });
      this.settle(job, failedOutcome(session.ctx, error));
      return;
    }
    const action = match?.action ?? Action.GracefulStop;
    emitDecision(hub, session, job, action, match, explained?.considered);
    if (action.type !== 'force_stop' && action.type !== 'graceful_stop') {
      session.push(job); // any other action is applied in order, like any signal
      session.loop ??= this.#process(session);
      return;
    }
    const force = action.type === 'force_stop';
    if (force && session.batch !== undefined && inFlight.some((j) => session.isRunning(j)))
      session.batch.abort(new AbortedError({ message: 'force_stop' }));
    for (const victim of [...inFlight, ...victims]) {
      if (victim.settled) continue;
      // A victim that has started since the stop arrived is in flight now.
      if (session.isRunning(victim)) {
        if (force) victim.stop.abort(new AbortedError({ message: 'force_stop' }));
      } else {
        this.settle(victim, stoppedOutcome(session.ctx));
      }
    }
    this.settle(job, outcomeOf(session.ctx, { action, match, status: 'completed' }));
  }

  /** Resolves every signal queued in `session` as `stopped` (queued tasks stay queued). */
  stopQueued(session: LiveSession): void {
    for (const queued of session.waitingSignals()) this.settle(queued, stoppedOutcome(session.ctx));
  }

  /** Resolves `job` with `outcome` (once; later calls are ignored) and emits `outcome`. */
  settle(job: Job, outcome: Outcome): void {
    if (job.settled) return;
    job.settled = true;
    job.detach?.();
    const { hub } = this.#d;
    if (hub.hasListeners) hub.emit(new OutcomeEvent(outcome, job.signal));
    job.sink?.({ type: 'outcome', outcome });
    job.resolve(outcome);
  }

  /** For `close()`: resolves every queued signal as `stopped`; returns the loops still running. */
  stopAllQueued(): Promise<void>[] {
    for (const session of this.#sessions.values()) {
      for (const queued of session.drain()) {
        if (queued.kind === 'task') queued.cancel(closedError());
        else this.settle(queued, stoppedOutcome(session.ctx));
      }
    }
    return this.loops();
  }

  /** The processing loops running now. */
  loops(): Promise<void>[] {
    return [...this.#sessions.values()].flatMap((s) => (s.loop === undefined ? [] : [s.loop]));
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

/** What became of a session lock around one signal: whether `fn` ran, whether the lock was lost meanwhile. */
interface LockWatch {
  entered: boolean;
  lost: { readonly reason: unknown } | undefined;
}

/**
 * A lock's `fn`: applies the signal (or batch), and calls `lost` — which aborts the turn (its
 * effects are discarded) and writes nothing more — when the lock's `lockSignal` fires. A lock that
 * passes no signal is one that cannot lose its hold. When the lock is lost before `apply` starts,
 * it never runs (`undefined`: reported as the lock's failure).
 */
async function underLock<T>(
  held: LockWatch,
  lockSignal: unknown,
  lost: (reason: AbortedError) => void,
  apply: () => Promise<T>,
): Promise<T | undefined> {
  held.entered = true;
  if (!isAbortSignal(lockSignal)) return apply();
  const onLost = (): void => {
    held.lost ??= { reason: lockSignal.reason };
    lost(new AbortedError({ message: 'The session lock was lost', cause: lockSignal.reason }));
  };
  if (lockSignal.aborted) {
    onLost();
    return undefined;
  }
  lockSignal.addEventListener('abort', onLost, { once: true });
  try {
    return await apply();
  } finally {
    lockSignal.removeEventListener('abort', onLost);
  }
}

/** What a signal whose application threw ends as: `stopped` when its stop fired, else `failed` (`code` for a non-Signalyard error). */
function thrownOutcome(session: LiveSession, stop: Stopper, error: unknown, code: RunnerErrorCode): Outcome {
  return stop.aborted ? stoppedOutcome(session.ctx) : failedOutcome(session.ctx, asSignalyardError(error, code));
}

/** `SESSION_LOCK_FAILED`: the lock could not be taken, or was lost while the signal was applied; `error` is the cause. */
function lockFailed(session: LiveSession, held: LockWatch, error: unknown): RunnerError {
  if (RunnerError.isInstance(error) && error.code === 'SESSION_LOCK_FAILED') return error;
  const what =
    held.lost === undefined
      ? 'could not be taken'
      : 'was lost while a signal was applied (the turn was aborted and its effects discarded)';
  return new RunnerError({
    code: 'SESSION_LOCK_FAILED',
    message: `The session lock on ${JSON.stringify(session.key)} ${what}: ${errorText(error)}`,
    cause: error,
  });
}

/**
 * The `outcome` event: its own shape is `{ type, outcome }`; the signal rides along
 * non-enumerably, read through the prototype, for plugins that need it (the audit log, tracing) —
 * no `defineProperty` per event.
 */
class OutcomeEvent {
  readonly type = 'outcome' as const;
  readonly outcome: Outcome;
  readonly #signal: Signal;

  constructor(outcome: Outcome, signal: Signal) {
    this.outcome = outcome;
    this.#signal = signal;
  }

  /** The signal this outcome is for. */
  get signal(): Signal {
    return this.#signal;
  }
}
