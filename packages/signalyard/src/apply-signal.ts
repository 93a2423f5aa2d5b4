import {
  Action,
  SignalyardError,
  isTransitionRefusal,
  type ConsideredRoute,
  type ExecutionStrategy,
  type Outcome,
  type RunnerEvent,
  type Signal,
  type TransitionAttempt,
} from '@signalyard/core';
import { errorText, type EventChannel } from '@signalyard/core/internal';
import type { RouteMatch } from '@signalyard/router';
import { NO_PENDING_APPROVAL, decidesNothingPending } from './approval-checks.js';
import { appendHistory, userMessageOf } from './history.js';
import { RunnerError } from './errors/runner-error.js';
import { UNLOADED, type Job, type LiveSession, type LoadedState } from './live-session.js';
import { asSignalyardError, failedOutcome, outcomeOf, type Applied, type SessionSave } from './outcomes.js';
import type { PluginHost } from './plugin-host.js';
import { isConflict, isUnstorable, type SessionPersistence } from './session-persistence.js';
import { signalCause } from './session-cause.js';
import { routeExplained, type ExplainedDecision } from './route-decision.js';
import { runTurn } from './turn.js';

/** Re-applications after a version conflict before the signal fails. @internal */
export const MAX_CONFLICT_RETRIES = 3;

/** What {@link SignalApplier} works with. @internal */
export interface ApplierDeps {
  readonly hub: EventChannel<RunnerEvent>;
  readonly plugins: PluginHost;
  readonly persistence: SessionPersistence;
  readonly maxHistoryMessages: number;
  /** Resolves every signal queued in `session` as `stopped` (a stop action was applied and saved). */
  readonly stopQueued: (session: LiveSession) => void;
  /** Whether route decisions carry the router's `explain()` list now. */
  readonly explaining: () => boolean;
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
 * Applies one signal to its session: load → route → apply the action → save (compare-and-set),
 * re-applied after a conflict with another writer (at most three times).
 * @internal
 */
export class SignalApplier {
  readonly #d: ApplierDeps;

  constructor(deps: ApplierDeps) {
    this.#d = deps;
  }

  /** Load → route → apply → save. `reload`: load from the store first (a lock was just taken). */
  async apply(session: LiveSession, job: Job, reload: boolean): Promise<Outcome> {
    const { hub, persistence } = this.#d;
    for (let attempt = 0; ; attempt++) {
      if (!job.announced) {
        job.announced = true;
        if (hub.hasListeners)
          hub.emit({ type: 'signal_received', sessionKey: session.key, agentId: session.agent.id, signal: job.signal });
      }
      let loaded = session.state;
      // An approval is decided against the store, not this runner's copy: another runner may have
      // moved the session on, and a refusal (or a failed resume) saves nothing that would notice.
      const fresh = reload || attempt > 0 || job.signal.kind === 'tool_approval';
      try {
        if (fresh || loaded.kind !== 'loaded' || session.loading !== undefined)
          loaded = await persistence.loadShared(session, fresh);
      } catch (error) {
        return failedOutcome(session.ctx, asSignalyardError(error, 'CHECKPOINT_LOAD_FAILED'));
      }
      let applied: Applied;
      try {
        applied = await this.#applyOnce(session, loaded, job);
      } catch (error) {
        return this.#escaped(session, job, error);
      }
      // The engine's commit lost to another writer: nothing of this attempt is kept beyond it.
      if (applied.conflict !== undefined) {
        if (attempt < MAX_CONFLICT_RETRIES && !job.lockLost) continue;
        return {
          ...applied.outcome,
          status: 'failed',
          error: asSignalyardError(applied.conflict, 'CHECKPOINT_SAVE_FAILED'),
        };
      }
      // Without the lock, another process may own the session now: save nothing, retry nothing.
      if (applied.save === undefined || job.lockLost) return applied.outcome;
      try {
        await persistence.save(session, loaded, applied.save, signalCause(job.signal, applied.outcome));
      } catch (error) {
        if (applied.rollback !== undefined) loaded.strategy.restore(applied.rollback);
        if (isConflict(error) && attempt < MAX_CONFLICT_RETRIES) continue;
        if (isUnstorable(error) && applied.outcome.status !== 'failed' && job.committed !== true) {
          // The turn's effects cannot be stored; what arrived still is.
          await persistence.saveArrival(
            session,
            job.signal,
            signalCause(job.signal, { ...applied.outcome, status: 'failed' }),
          );
        }
        return { ...applied.outcome, status: 'failed', error: asSignalyardError(error, 'CHECKPOINT_SAVE_FAILED') };
      }
      for (const result of applied.transitions ?? []) hub.emit({ type: 'transition_applied', ...session.ctx, result });
      if (applied.stopQueued === true) this.#d.stopQueued(session);
      return applied.outcome;
    }
  }

  /**
   * Something escaped the action's own handling (a strategy's `snapshot()` throwing, an engine
   * result with a throwing getter): the session's live state may be half-changed, so it is
   * dropped (reloaded from the store next time), what arrived is saved, and the outcome is
   * `failed` with `ENGINE_FAILED` (or the escaped error itself, when it is a Signalyard error).
   */
  async #escaped(session: LiveSession, job: Job, error: unknown): Promise<Outcome> {
    const before = session.state;
    session.state = UNLOADED;
    const failure = SignalyardError.isInstance(error)
      ? error
      : new RunnerError({
          code: 'ENGINE_FAILED',
          message: `Applying a ${job.signal.kind} signal to session ${JSON.stringify(session.key)} failed: ${errorText(error)}`,
          cause: error,
        });
    const outcome = failedOutcome(session.ctx, failure);
    // After a commit, what arrived is saved already.
    if (job.committed !== true) {
      const initial = before.kind === 'loaded' ? before.savedStrategy : undefined;
      await this.#d.persistence.saveArrival(session, job.signal, signalCause(job.signal, outcome), initial);
    }
    return outcome;
  }

  /**
   * Routes the signal and applies its action to the live session state (nothing saved yet).
   * Not `async`: most actions apply synchronously, and a turn's promise is passed on as it is
   * (like {@link SignalApplier.applyAction}, it may throw synchronously).
   */
  #applyOnce(session: LiveSession, loaded: LoadedState, job: Job): Applied | Promise<Applied> {
    const { signal } = job;
    // Applied again after its engine committed: the user message is saved already.
    const user = job.committed === true ? undefined : userMessageOf(signal);
    const history =
      user === undefined ? loaded.history : appendHistory(loaded.history, user, this.#d.maxHistoryMessages);
    const arrival = user === undefined ? undefined : { history, engineState: loaded.engineState };
    const keepArrival = arrival === undefined ? {} : { save: arrival };
    let match: RouteMatch | undefined;
    let explained: ExplainedDecision | undefined;
    try {
      explained = this.#d.explaining() ? routeExplained(loaded.router, signal, session.ctx) : undefined;
      match = explained === undefined ? loaded.router.match(signal, session.ctx) : explained.match;
    } catch (error) {
      this.#d.hub.emit({ type: 'route_decided', ...session.ctx, signal, action: undefined });
      return { outcome: failedOutcome(session.ctx, error), ...keepArrival };
    }
    const action = match?.action ?? defaultAction(signal, loaded);
    emitDecision(this.#d.hub, session, job, action, match, explained?.considered);
    if (action === undefined) {
      this.#d.hub.emit({ type: 'unrouted', ...session.ctx, signal });
      return { outcome: outcomeOf(session.ctx, { status: 'unrouted' }) };
    }
    return this.applyAction({ session, loaded, job, history, arrival }, action, match);
  }

  /**
   * Applies a routed signal's action to the live session state (nothing saved yet): synchronously,
   * except for a turn (`continue`) and a custom action. Not `async`: what escapes the action's own
   * handling (a strategy's `snapshot()` throwing) may throw synchronously, so call it inside a
   * `try` around an `await`, as {@link SignalApplier.apply} and the batch do.
   */
  applyAction(a: Application, action: Action, match: RouteMatch | undefined): Applied | Promise<Applied> {
    const { session, loaded, history, arrival } = a;
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

const AWAITING_APPROVAL = Action.reject('awaiting_approval');

/** The runner default for an unrouted `user_message`: continue, or `reject('awaiting_approval')` while approvals are pending. @internal */
export function userMessageDefault(loaded: LoadedState): Action {
  return loaded.pendingApprovals.length > 0 ? AWAITING_APPROVAL : Action.Continue;
}

/**
 * Runner defaults for unrouted signals: `user_message` → continue (`reject('awaiting_approval')`
 * while approvals are pending), `tool_approval` → continue when a decision names a pending approval, else
 * `reject('no_pending_approval')`, `stop` → graceful_stop. @internal
 */
function defaultAction(signal: Signal, loaded: LoadedState): Action | undefined {
  switch (signal.kind) {
    case 'user_message':
      return userMessageDefault(loaded);
    case 'tool_approval':
      return decidesNothingPending(signal, loaded.pendingApprovals) ? NO_PENDING_APPROVAL : Action.Continue;
    case 'stop':
      return Action.GracefulStop;
    default:
      return undefined;
  }
}

/**
 * Emits `route_decided` (when anyone listens; with `considered` when the decision was explained),
 * and `routed` to the job's stream. @internal
 */
export function emitDecision(
  hub: EventChannel<RunnerEvent>,
  session: LiveSession,
  job: Job,
  action: Action | undefined,
  match: RouteMatch | undefined,
  considered?: readonly ConsideredRoute[],
): void {
  job.sink?.({
    type: 'routed',
    ...session.ctx,
    action,
    ...(match !== undefined && { tier: match.tier }),
    ...(match?.route.name !== undefined && { routeName: match.route.name }),
  });
  if (!hub.hasListeners) return;
  // Built field by field (no spreads): one per signal whenever a plugin listens.
  const event: { -readonly [K in keyof RouteDecided]: RouteDecided[K] } = {
    type: 'route_decided',
    sessionKey: session.key,
    agentId: session.agent.id,
    signal: job.signal,
    action,
  };
  if (match !== undefined) event.tier = match.tier;
  if (match?.route.name !== undefined) event.routeName = match.route.name;
  if (considered !== undefined) event.considered = considered;
  hub.emit(event);
}

type RouteDecided = Extract<RunnerEvent, { type: 'route_decided' }>;

/**
 * A `transition` action through `tryExecute` when the strategy offers it (a refusal is then a
 * value: no exception is thrown and caught), else through `execute`, whose refusals throw.
 */
function attemptTransition(strategy: ExecutionStrategy, target: string, payload: unknown): TransitionAttempt {
  if (strategy.tryExecute !== undefined) return strategy.tryExecute(target, payload);
  return { ok: true, result: strategy.execute(target, payload) };
}
