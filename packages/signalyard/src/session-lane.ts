import type { Outcome } from '@signalyard/core';
import type { SignalApply } from './appliers.js';
import type { Job, LiveSession } from './live-session.js';
import { stoppedOutcome } from './outcomes.js';
import type { Semaphore } from './semaphore.js';
import { thrownOutcome } from './session-lock-run.js';
import { SignalStep, type SignalApplied, type Step } from './signal-step.js';
import { turnStopped } from './turn.js';

/** A settled promise, shared: what the lane's first hop and a stop's hop hang on. */
const SETTLED: Promise<void> = Promise.resolve();

/** `session.loop` while the session's queue runs on the fast lane (never awaited: `whenDone` is). @internal */
export const LANE: Promise<void> = SETTLED;

/** What the fast lane works with: the queue's own steps. @internal */
export interface LaneHost {
  readonly applier: SignalApply;
  readonly slots: Semaphore;
  readonly closing: () => boolean;
  /** Settles `job` with `outcome` (the queue's `settle`). */
  settle(job: Job, outcome: Outcome): void;
  /** Settles an applied signal, after stopping those queued behind it when it asks to. */
  settleApplied(session: LiveSession, job: Job, applied: SignalApplied): void;
  /** Runs the session's queue on the general path (an async loop): what the lane does not take. */
  slowLoop(session: LiveSession): Promise<void>;
}

/**
 * A session's state on the fast lane: what it waits on, and its callbacks, made once per session
 * (a signal makes no closure, no async frame, no race promise). @internal
 */
export class LaneState {
  readonly session: LiveSession;
  /** A slot is held (granted, or free at the lane's start: then after one hop, as a signal never starts inside the dispatch() that queued it). */
  readonly granted: () => void;
  /** What the lane waits on settled. */
  readonly ok: (value: unknown) => void;
  readonly err: (error: unknown) => void;
  /** The job's stop fired while the lane waits on its engine turn. */
  readonly stop: () => void;
  /** The job running. */
  job: Job | undefined = undefined;
  /** What the lane waits on now: a step's `wait`, or an application's end. */
  step: SignalStep | Promise<SignalApplied> | undefined = undefined;
  /** Whether the current wait has `ok` / `err` attached (not callbacks of its own). */
  shared = false;
  /**
   * A wait abandoned (its engine turn stopped) still has `ok` / `err` attached: until they fire
   * (ignored), each wait gets callbacks of its own, which know their step.
   */
  zombie = false;
  /** `whenDone`'s promise and its resolve, once asked for (by `close()`). */
  done: Promise<void> | undefined = undefined;
  resolveDone: (() => void) | undefined = undefined;

  constructor(lane: FastLane, session: LiveSession) {
    this.session = session;
    this.granted = () => {
      if (lane.take(session, this)) lane.pump(session, this);
    };
    this.ok = (value) => {
      if (this.zombie) this.zombie = false;
      else lane.settled(session, this, true, value);
    };
    this.err = (error) => {
      if (this.zombie) this.zombie = false;
      else lane.settled(session, this, false, error);
    };
    this.stop = () => {
      lane.stopped(session, this);
    };
  }
}

/**
 * The session queue's fast lane, for a runner with no lock and no durable inbox: a session's
 * signals applied one at a time with callbacks instead of an async loop — per signal, one hop to
 * start, one per wait (a slot, the engine's turn, an asynchronous save), and no promise, closure
 * or async frame of the lane's own. The engine's turn is raced with the job's stop by the stopper
 * itself (`setOnStop`). Tasks, batches (`whenBusy` collect / interrupt) and a runner not started
 * yet go to the queue's general path, which takes over the session's queue from there.
 * @internal
 */
export class FastLane {
  readonly #h: LaneHost;

  constructor(host: LaneHost) {
    this.#h = host;
  }

  /**
   * Starts the lane for `session` (its `loop` set to {@link LANE} by the caller) once it holds a
   * slot: after one hop when one is free, else when one is granted (that wait is the hop: one
   * promise, not two).
   */
  start(session: LiveSession): void {
    const made = session.lane;
    const lane = made instanceof LaneState ? made : new LaneState(this, session);
    session.lane = lane;
    void (this.#h.slots.acquire() ?? SETTLED).then(lane.granted);
  }

  /** A promise that settles once the session's lane ends (or the general path it handed over to does). */
  whenDone(session: LiveSession): Promise<void> {
    const lane = session.lane;
    if (!(lane instanceof LaneState)) return SETTLED;
    return (lane.done ??= new Promise<void>((resolve) => {
      lane.resolveDone = resolve;
    }));
  }

  /** Takes the session's signals in turn, each once it holds a slot, until one waits or none is left. */
  pump(session: LiveSession, lane: LaneState): void {
    while (session.hasNext()) {
      const wait = this.#h.slots.acquire();
      if (wait !== undefined) {
        void wait.then(lane.granted);
        return;
      }
      if (!this.take(session, lane)) return;
    }
    this.#end(session, lane, undefined);
  }

  /**
   * With a slot held: takes the next job and applies it. `true` when it ended at once (the lane
   * goes on); `false` when the lane waits, ended, or handed the session over to the general path.
   */
  take(session: LiveSession, lane: LaneState): boolean {
    const h = this.#h;
    const job = session.next();
    if (job === undefined) {
      h.slots.release();
      this.#end(session, lane, undefined);
      return false;
    }
    if (job.kind === 'task' || job.entry !== undefined || isBatchLead(session, job)) {
      session.requeue(job);
      h.slots.release();
      this.#end(session, lane, h.slowLoop(session));
      return false;
    }
    if (h.closing()) {
      h.settle(job, stoppedOutcome(session.ctx));
      h.slots.release();
      return true;
    }
    session.running = job;
    lane.job = job;
    let step: Step;
    try {
      step = h.applier.begin(session, job);
    } catch (error) {
      step = thrown(session, job, error);
    }
    return this.#advance(session, lane, job, step);
  }

  /** What the lane waited on settled (`ok` with `value`, else rejected with it): the job goes on. */
  settled(session: LiveSession, lane: LaneState, ok: boolean, value: unknown): void {
    const step = lane.step;
    const job = lane.job as Job;
    lane.step = undefined;
    let next: Step;
    if (step instanceof SignalStep) {
      if (step.waitsForEngine) job.stop.setOnStop(undefined);
      next = this.#resume(session, job, step, ok, value);
    } else next = ok ? (value as SignalApplied) : thrown(session, job, value);
    if (this.#advance(session, lane, job, next)) this.pump(session, lane);
  }

  /** The job's stop fired while the lane waits on its engine turn: the wait is abandoned, the turn ends stopped (after a hop). */
  stopped(session: LiveSession, lane: LaneState): void {
    const step = lane.step;
    if (!(step instanceof SignalStep)) return;
    lane.step = undefined;
    if (lane.shared) lane.zombie = true;
    void SETTLED.then(() => {
      const job = lane.job as Job;
      const next = this.#resume(session, job, step, false, turnStopped());
      if (this.#advance(session, lane, job, next)) this.pump(session, lane);
    });
  }

  /** Follows `step` until the job ends (`true`: settled, its slot released) or waits (`false`). */
  #advance(session: LiveSession, lane: LaneState, job: Job, first: Step): boolean {
    let step = first;
    while (step instanceof SignalStep) {
      const wait = step.wait as Promise<unknown>;
      if (step.waitsForEngine) {
        if (job.stop.aborted) {
          // Stopped already: the race would reject at once. The engine's own end is ignored.
          wait.then(undefined, ignore);
          step = this.#resume(session, job, step, false, turnStopped());
          continue;
        }
        job.stop.setOnStop(lane.stop);
      }
      this.#wait(lane, wait, step);
      return false;
    }
    if (step instanceof Promise) {
      this.#wait(lane, step, step);
      return false;
    }
    session.running = undefined;
    lane.job = undefined;
    this.#h.settleApplied(session, job, step);
    this.#h.slots.release();
    return true;
  }

  /** Waits on `wait` for `step`: with the shared callbacks, unless an abandoned wait still holds them. */
  #wait(lane: LaneState, wait: Promise<unknown>, step: SignalStep | Promise<SignalApplied>): void {
    lane.step = step;
    if (!lane.zombie) {
      lane.shared = true;
      void wait.then(lane.ok, lane.err);
      return;
    }
    lane.shared = false;
    void wait.then(
      (value) => {
        if (lane.step === step) this.settled(lane.session, lane, true, value);
      },
      (error: unknown) => {
        if (lane.step === step) this.settled(lane.session, lane, false, error);
      },
    );
  }

  /** `applier.resume`, what it throws as the signal's `ENGINE_FAILED` end. */
  #resume(session: LiveSession, job: Job, step: SignalStep, ok: boolean, value: unknown): Step {
    try {
      return this.#h.applier.resume(step, ok, value);
    } catch (error) {
      return thrown(session, job, error);
    }
  }

  /** The lane ends: the session's `loop` is the general path's (`next`) or none. */
  #end(session: LiveSession, lane: LaneState, next: Promise<void> | undefined): void {
    session.loop = next;
    const resolve = lane.resolveDone;
    if (resolve === undefined) return;
    lane.done = lane.resolveDone = undefined;
    if (next === undefined) resolve();
    else void next.then(resolve, resolve);
  }
}

/** Whether `job` starts a batch of user messages (`whenBusy` collect / interrupt): the general path's. */
function isBatchLead(session: LiveSession, job: Job): boolean {
  return job.signal.kind === 'user_message' && session.agent.whenBusy !== 'queue';
}

function thrown(session: LiveSession, job: Job, error: unknown): SignalApplied {
  return { outcome: thrownOutcome(session, job.stop, error, 'ENGINE_FAILED'), stopQueued: false };
}

const ignore = (): void => undefined;
