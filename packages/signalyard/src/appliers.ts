import type { Batch } from './busy-batch.js';
import type { Job, LiveSession } from './live-session.js';
import type { SignalApplied, SignalStep, Step } from './signal-step.js';

/** Applies one signal (the session queue holds one; `SignalApplier` is it). @internal */
export interface SignalApply {
  /** Load → route → apply → save. `reload`: load from the store first (a lock was just taken). */
  apply(session: LiveSession, job: Job, reload: boolean): Promise<SignalApplied>;
  /**
   * `apply(session, job, false)` in steps, for a caller that awaits each in its own frame: a
   * step's `wait` awaited, then `resume` with how it settled, until the application's end.
   */
  begin(session: LiveSession, job: Job): Step;
  /** The step after `step`, whose `wait` settled (`ok` with `value`, else rejected with it). */
  resume(step: SignalStep, ok: boolean, value: unknown): Step;
}

/** Applies a batch of user messages, settling its members (the session queue holds one; `BatchApplier` is it). @internal */
export interface BatchApply {
  /** Load → (route → apply → save)* → one merged turn → save. `reload`: load from the store first. */
  run(batch: Batch, reload: boolean): Promise<void>;
}
