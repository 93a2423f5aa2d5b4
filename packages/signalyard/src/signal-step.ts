import type { Outcome, SessionCause } from '@signalyard/core';
import type { Job, LiveSession, LoadedState } from './live-session.js';
import type { Applied } from './outcomes.js';
import type { PendingSave } from './session-persistence.js';
import { raceEngine, type Turn } from './turn.js';

/** How one signal's application ended: its outcome, and whether the signals queued behind it stop. @internal */
export interface SignalApplied {
  readonly outcome: Outcome;
  /** A stop action was applied and saved: the signals waiting in the session's queue end `stopped` (absent: false). */
  readonly stopQueued?: boolean | undefined;
}

/**
 * One signal's application waiting on a promise (`wait`): its engine's turn (`turn`), then its
 * save (`pending`). The caller awaits `wait` in its own frame and hands the step back
 * (`SignalApplier.resume`): one object per signal instead of an async frame per step.
 * @internal
 */
export class SignalStep {
  readonly session: LiveSession;
  readonly job: Job;
  readonly loaded: LoadedState;
  /** The conflicts seen so far. */
  readonly attempt: number;
  /** The turn whose engine `wait` is, until its save starts. */
  readonly turn: Turn | undefined;
  /**
   * What to await now: the engine's turn (not raced with the job's stop: {@link SignalStep.raced}
   * is), then the store's answer.
   */
  wait: Promise<unknown> | undefined;
  /** What the attempt applied, once its save starts. */
  applied: Applied | undefined = undefined;
  /** The save's cause, once it starts. */
  cause: SessionCause | undefined = undefined;
  /** The save handed to the store (`wait` is its version). */
  pending: PendingSave | undefined = undefined;

  constructor(session: LiveSession, job: Job, loaded: LoadedState, attempt: number, turn?: Turn) {
    this.session = session;
    this.job = job;
    this.loaded = loaded;
    this.attempt = attempt;
    this.turn = turn;
    this.wait = turn?.engineDone;
  }

  /** Whether `wait` is the engine's turn (a stop must end the wait), not the store's answer. */
  get waitsForEngine(): boolean {
    return this.turn !== undefined && this.pending === undefined;
  }

  /** `wait` for a caller that awaits it: the engine's turn raced with the job's stop ({@link raceEngine}). */
  raced(): Promise<unknown> {
    return this.waitsForEngine ? raceEngine(this.turn as Turn) : (this.wait as Promise<unknown>);
  }
}

/** Where an application stands: ended (`SignalApplied`), ended later (a promise), or waiting on a step. @internal */
export type Step = SignalApplied | Promise<SignalApplied> | SignalStep;
