import {
  isTransitionRefusal,
  type Action,
  type ExecutionStrategy,
  type Outcome,
  type SessionCause,
  type StrategySnapshot,
  type TransitionAttempt,
} from '@signalyard/core';
import type { RouteMatch } from '@signalyard/router';
import {
  MAX_CONFLICT_RETRIES,
  commitFailed,
  commitSaved,
  savedAtOnce,
  committedApprovalConflict,
  escapedOutcome,
  startCommit,
  type CommitDeps,
  type CommitInput,
  type Committed,
} from './apply-commit.js';
import { decisionsOf } from './approval-checks.js';
import type { SignalApply } from './appliers.js';
import type { SignalApplied } from './signal-step.js';
import { appendHistory, userMessageOf } from './history.js';
import type { Job, LiveSession, LoadedState } from './live-session.js';
import { entrySettled, markCommitted, skipSettled } from './inbox-fields.js';
import { asSignalyardError, failedOutcome, outcomeOf, stoppedOutcome, type Applied } from './outcomes.js';
import type { SessionSave } from './session-save.js';
import type { PluginHost } from './plugin-host.js';
import { signalCause } from './session-cause.js';
import { readClock } from '@signalyard/core/internal';
import { decide, type DecideDeps } from './route-decision.js';
import { SignalStep, type Step } from './signal-step.js';
import { Turn, endTurn, runTurn, startTurn } from './turn.js';

/** What {@link SignalApplier} works with. @internal */
export interface ApplierDeps extends DecideDeps, CommitDeps {
  readonly plugins: PluginHost;
  readonly maxHistoryMessages: number;
}

/** One signal's application, from the route decision to what it changed. @internal */
export interface Application {
  readonly session: LiveSession;
  readonly loaded: LoadedState;
  readonly job: Job;
  /** The history with the signal's user message, if it carries one. */
  readonly history: LoadedState['history'];
  /** What to save when the action itself changes nothing: the arrival, or nothing. */
  readonly arrival: SessionSave | undefined;
}

/**
 * Applies one signal to its session: load → {@link decide} → apply the action →
 * {@link commitApplied} (compare-and-set), re-applied after a conflict with another writer (at
 * most three times). Its result tells the queue whether to stop the signals queued behind it.
 * @internal
 */
export class SignalApplier implements SignalApply {
  readonly #d: ApplierDeps;

  constructor(deps: ApplierDeps) {
    this.#d = deps;
  }

  /** Load → route → apply → save. `reload`: load from the store first (a lock was just taken). */
  apply(session: LiveSession, job: Job, reload: boolean): Promise<SignalApplied> {
    session.savedCause = undefined; // what an earlier save recorded is not this signal's
    return this.#drive(this.#attempt(session, job, reload, 0));
  }

  /**
   * {@link SignalApplier.apply} in steps, for a caller that awaits them in its own frame (the
   * session queue: one async frame per signal, or none on its fast lane): a {@link SignalStep} is
   * awaited (`step.raced()`, then {@link SignalApplier.resume} with how it settled) until the application's end, a
   * `SignalApplied` (or a promise of one, for what takes the async path: a load, a custom
   * action, a failed save). May throw, as `apply` rejects.
   */
  begin(session: LiveSession, job: Job): Step {
    session.savedCause = undefined; // what an earlier save recorded is not this signal's
    return this.#attempt(session, job, false, 0);
  }

  /** Every step of `first` awaited in turn: the application's end. */
  async #drive(first: Step): Promise<SignalApplied> {
    let step = first;
    while (step instanceof SignalStep) {
      let ok = true;
      let value: unknown;
      try {
        value = await step.raced();
      } catch (error) {
        ok = false;
        value = error;
      }
      step = this.resume(step, ok, value);
    }
    return step;
  }

  /** One attempt at applying the signal: the session loaded first when it must be. */
  #attempt(session: LiveSession, job: Job, reload: boolean, attempt: number): Step {
    if (!job.announced) {
      job.announced = true;
      const { hub } = this.#d;
      if (hub.hasListeners)
        hub.emit({ type: 'signal_received', sessionKey: session.key, agentId: session.agent.id, signal: job.signal });
    }
    const loaded = session.state;
    // An approval is decided against the store, not this runner's copy: another runner may have
    // moved the session on, and a refusal (or a failed resume) saves nothing that would notice.
    const fresh = reload || attempt > 0 || job.signal.kind === 'tool_approval';
    if (fresh || loaded.kind !== 'loaded' || session.loading !== undefined)
      return this.#loadThenAttempt(session, job, fresh, attempt);
    return this.#attemptLoaded(session, job, loaded, attempt);
  }

  async #loadThenAttempt(session: LiveSession, job: Job, fresh: boolean, attempt: number): Promise<SignalApplied> {
    let loaded: LoadedState;
    try {
      loaded = await this.#d.persistence.loadShared(session, fresh);
    } catch (error) {
      return done(failedOutcome(session.ctx, asSignalyardError(error, 'CHECKPOINT_LOAD_FAILED')));
    }
    return this.#drive(this.#attemptLoaded(session, job, loaded, attempt));
  }

  #attemptLoaded(session: LiveSession, job: Job, loaded: LoadedState, attempt: number): Step {
    // Another worker settled this inbox entry (a conflict reloaded it): never apply it twice.
    if (job.entry !== undefined && entrySettled(loaded.carried, job.entry)) {
      skipSettled(session, job, job.entry, loaded.carried);
      return done(stoppedOutcome(session.ctx));
    }
    // A commit of this entry's turn (another worker's, when a conflict reloaded it) saved its
    // user message already: never appended again.
    if (job.entry !== undefined && attempt > 0) markCommitted(session, job);
    let once: Applied | Promise<Applied> | Turn;
    try {
      once = this.#applyOnce(session, loaded, job);
    } catch (error) {
      return this.#escaped(session, job, error);
    }
    // The engine awaited by the caller, in its own frame (no async frame of the turn's own).
    if (once instanceof Turn) return new SignalStep(session, job, loaded, attempt, once);
    if (once instanceof Promise) return this.#awaitApplied(new SignalStep(session, job, loaded, attempt), once);
    return this.#applied(new SignalStep(session, job, loaded, attempt), once);
  }

  /**
   * The next step once `step.wait` settled (`ok` with `value`, else rejected with it): after the
   * engine, the turn's end and its save; after the save, the application's end.
   */
  resume(step: SignalStep, ok: boolean, value: unknown): Step {
    const { turn, pending } = step;
    if (pending !== undefined) {
      if (ok) return this.#committed(step, commitSaved(this.#d, pending, step.applied as Applied, value as number));
      pending.failed();
      return this.#saveFailed(step, value);
    }
    let ended: Applied | Promise<Applied>;
    try {
      ended = endTurn(turn as Turn, ok, value);
    } catch (error) {
      return this.#escaped(step.session, step.job, error);
    }
    return ended instanceof Promise ? this.#awaitApplied(step, ended) : this.#applied(step, ended);
  }

  /** An action that applies asynchronously (a custom action, a turn's actions): awaited, then saved. */
  async #awaitApplied(step: SignalStep, applying: Promise<Applied>): Promise<SignalApplied> {
    let applied: Applied;
    try {
      applied = await applying;
    } catch (error) {
      return this.#escaped(step.session, step.job, error);
    }
    return this.#drive(this.#applied(step, applied));
  }

  /** Something escaped the action's own handling: the arrival saved, the signal `failed` (see escapedOutcome). */
  async #escaped(session: LiveSession, job: Job, error: unknown): Promise<SignalApplied> {
    // The arrival is saved with the loaded strategy snapshot: the strategy may be what threw.
    const saveArrival = (failed: Outcome, initial?: StrategySnapshot): Promise<void> =>
      this.#saveArrival(session, job, failed, initial);
    return done(await escapedOutcome(session, `a ${job.signal.kind} signal`, error, saveArrival));
  }

  /** What an attempt applied: retried after a lost commit, else saved (its store's answer the next step). */
  #applied(step: SignalStep, applied: Applied): Step {
    const { session, job, loaded, attempt } = step;
    // The engine's commit lost to another writer: nothing of this attempt is kept beyond it.
    if (applied.conflict !== undefined) {
      if (attempt < MAX_CONFLICT_RETRIES && !job.lockLost) return this.#attempt(session, job, false, attempt + 1);
      const error = asSignalyardError(applied.conflict, 'CHECKPOINT_SAVE_FAILED');
      return done({ ...applied.outcome, status: 'failed', error });
    }
    // Without the lock, another process may own the session now: save nothing, retry nothing.
    const { save } = applied;
    if (save === undefined || job.lockLost) return done(applied.outcome);
    const { persistence } = this.#d;
    // One reading of the clock for the cause and (the memory store, on the same clock) the save.
    const at = readClock(persistence.causes.clock);
    const cause = signalCause(persistence.causes, job.signal, applied.outcome, undefined, at);
    step.applied = applied;
    step.cause = cause;
    // commitApplied's steps, its store awaited by the caller.
    let pending;
    try {
      pending = startCommit(this.#d, session, loaded, applied.outcome, save, cause, at);
    } catch (error) {
      return this.#saveFailed(step, error);
    }
    // Saved already (the memory store answers at once): the application ends here, no await.
    if (typeof pending === 'number') return this.#committed(step, savedAtOnce(this.#d, session, applied));
    step.pending = pending;
    const { version } = pending;
    if (typeof version === 'number') return this.#committed(step, commitSaved(this.#d, pending, applied, version));
    step.wait = version;
    return step;
  }

  /** A save that failed: {@link commitFailed}, then the application's end (or its next attempt). */
  async #saveFailed(step: SignalStep, error: unknown): Promise<SignalApplied> {
    const { session, job, loaded, attempt } = step;
    const input = this.#commitInput(session, job, loaded, step.applied as Applied, step.cause as SessionCause, attempt);
    return this.#drive(this.#committed(step, await commitFailed(input, error)));
  }

  /** How the application ends once its commit did: done, or applied again after a conflict. */
  #committed(step: SignalStep, committed: Committed): Step {
    const { session, job, attempt } = step;
    const applied = step.applied as Applied;
    if (committed.kind === 'conflict') {
      // An approval whose decisions were committed is not applied again (none would be pending).
      if (job.committed !== true || job.signal.kind !== 'tool_approval')
        return this.#attempt(session, job, false, attempt + 1);
      return done(committedApprovalConflict(session, applied.outcome, committed.error, decisionsOf(job.signal)));
    }
    if (committed.kind === 'failed') return done(committed.outcome);
    return applied; // its outcome and stopQueued: no object made per signal
  }

  /** What {@link commitFailed} needs of this application (made only when a save failed). */
  #commitInput(
    session: LiveSession,
    job: Job,
    loaded: LoadedState,
    applied: Applied,
    cause: SessionCause,
    attempt: number,
  ): CommitInput {
    return {
      session,
      loaded,
      applied,
      cause,
      attempt,
      saveArrivals: (failed) => this.#saveArrival(session, job, failed),
    };
  }

  /** Saves what `job` brought (after a commit, it is saved already), with `failed` as its cause. */
  #saveArrival(session: LiveSession, job: Job, failed: Outcome, initial?: StrategySnapshot): Promise<void> {
    if (job.committed === true) return Promise.resolve();
    const { persistence } = this.#d;
    return persistence.saveArrival(
      session,
      job.signal,
      signalCause(persistence.causes, job.signal, failed),
      initial,
      failed,
    );
  }

  /**
   * Routes the signal and applies its action to the live session state (nothing saved yet).
   * Not `async`: most actions apply synchronously, and a turn is returned started, for `apply`
   * to await its engine (like {@link SignalApplier.applyAction}, it may throw synchronously).
   */
  #applyOnce(session: LiveSession, loaded: LoadedState, job: Job): Applied | Promise<Applied> | Turn {
    const { signal } = job;
    // Applied again after its engine committed: the user message is saved already.
    const user = job.committed === true ? undefined : userMessageOf(signal);
    const history =
      user === undefined ? loaded.history : appendHistory(loaded.history, user, this.#d.maxHistoryMessages);
    const arrival = user === undefined ? undefined : { history, engineState: loaded.engineState };
    const decision = decide(this.#d, session, job, loaded);
    if (!decision.ok) {
      const outcome = failedOutcome(session.ctx, decision.error);
      return arrival === undefined ? { outcome } : { outcome, save: arrival };
    }
    const { action, match } = decision;
    // A turn is started here and awaited by `apply` itself (see startTurn).
    if (action?.type === 'continue')
      return startTurn(this.#d, { session, loaded, job, history, arrival, action, match });
    return this.applyAction({ session, loaded, job, history, arrival }, action, match);
  }

  /**
   * Applies a routed signal's action to the live session state (nothing saved yet; an unrouted
   * signal with no runner default, `action` `undefined`, emits `unrouted`): synchronously,
   * except for a turn (`continue`) and a custom action. Not `async`: what escapes the action's own
   * handling (a strategy's `snapshot()` throwing) may throw synchronously, so call it inside a
   * `try` around an `await`, as {@link SignalApplier.apply} and the batch do.
   */
  applyAction(a: Application, action: Action | undefined, match: RouteMatch | undefined): Applied | Promise<Applied> {
    const { session, loaded, history, arrival } = a;
    if (action === undefined) {
      this.#d.hub.emit({ type: 'unrouted', ...session.ctx, signal: a.job.signal });
      return { outcome: outcomeOf(session.ctx, { status: 'unrouted' }) };
    }
    const keepArrival = arrival === undefined ? {} : { save: arrival };
    switch (action.type) {
      case 'reject':
        return { outcome: outcomeOf(session.ctx, { status: 'rejected' }, action, match), ...keepArrival };
      case 'graceful_stop':
      case 'force_stop':
        return {
          outcome: outcomeOf(session.ctx, { status: 'completed' }, action, match),
          save: arrival ?? { history, engineState: loaded.engineState },
          stopQueued: true,
        };
      case 'transition': {
        const before = loaded.strategy.snapshot();
        try {
          const attempt = attemptTransition(loaded.strategy, action.target, a.job.signal.payload);
          if (!attempt.ok) {
            const error = attempt.refusal.toError();
            return { outcome: outcomeOf(session.ctx, { status: 'rejected', error }, action, match), ...keepArrival };
          }
          const result = attempt.result;
          return {
            outcome: outcomeOf(session.ctx, { status: 'completed', output: result }, action, match),
            save: { history, engineState: loaded.engineState },
            rollback: before,
            transitions: [result],
          };
        } catch (error) {
          const status = isTransitionRefusal(error) ? 'rejected' : 'failed';
          return { outcome: outcomeOf(session.ctx, { status, error }, action, match), ...keepArrival };
        }
      }
      case 'custom':
        return this.#applyCustom(a, action, match);
      case 'continue':
        return runTurn(this.#d, {
          session: a.session,
          loaded: a.loaded,
          job: a.job,
          history: a.history,
          arrival: a.arrival,
          action,
          match,
        });
    }
  }

  async #applyCustom(
    a: Application,
    action: Extract<Action, { type: 'custom' }>,
    match: RouteMatch | undefined,
  ): Promise<Applied> {
    const { session, job, history, arrival } = a;
    try {
      const call = { ...session.ctx, signal: job.signal, name: action.name, stop: job.stop };
      const output = await this.#d.plugins.runCustom(call);
      return {
        outcome: outcomeOf(session.ctx, { status: 'completed', output }, action, match),
        save: { history, engineState: a.loaded.engineState },
      };
    } catch (error) {
      const stopped = job.stop.aborted;
      return {
        outcome: stopped
          ? outcomeOf(session.ctx, { status: 'stopped' }, action, match)
          : outcomeOf(
              session.ctx,
              { status: 'failed', error: asSignalyardError(error, 'CUSTOM_ACTION_FAILED') },
              action,
              match,
            ),
        ...(arrival && { save: arrival }),
      };
    }
  }
}

/**
 * A `transition` action through `tryExecute` when the strategy offers it (a refusal is then a
 * value: no exception is thrown and caught), else through `execute`, whose refusals throw.
 */
function attemptTransition(strategy: ExecutionStrategy, target: string, payload: unknown): TransitionAttempt {
  if (strategy.tryExecute !== undefined) return strategy.tryExecute(target, payload);
  return { ok: true, result: strategy.execute(target, payload) };
}

/** A signal's application that stops nothing queued behind it. */
function done(outcome: Outcome): SignalApplied {
  return { outcome, stopQueued: false };
}
