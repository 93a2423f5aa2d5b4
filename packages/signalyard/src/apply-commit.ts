import {
  CheckpointConflictError,
  SignalyardError,
  type Outcome,
  type RunnerEvent,
  type SessionCause,
  type StrategySnapshot,
  type TransitionResult,
} from '@signalyard/core';
import { errorText, type EventChannel } from '@signalyard/core/internal';
import { RunnerError } from './errors/runner-error.js';
import { UNLOADED, type LiveSession, type LoadedState } from './live-session.js';
import { asSignalyardError, failedOutcome, type Applied } from './outcomes.js';
import type { SessionSave } from './session-save.js';
import { isConflict, isUnstorable, type PendingSave, type SessionPersistence } from './session-persistence.js';

/** Re-applications after a version conflict before the signal fails. @internal */
export const MAX_CONFLICT_RETRIES = 3;

/** What {@link commitApplied} works with. @internal */
export interface CommitDeps {
  readonly hub: EventChannel<RunnerEvent>;
  readonly persistence: SessionPersistence;
}

/** One application's save: what it produced, why, and how to keep what arrived when that fails. @internal */
export interface CommitInput {
  readonly session: LiveSession;
  readonly loaded: LoadedState;
  readonly applied: Applied;
  /** The saved version's `cause`. */
  readonly cause: SessionCause;
  /** The conflicts seen so far: at most {@link MAX_CONFLICT_RETRIES} re-applications. */
  readonly attempt: number;
  /**
   * Saves what arrived (the user messages not stored yet), each on the reloaded state, with the
   * given `failed` outcome as their cause — when the application's effects cannot be stored.
   */
  readonly saveArrivals: (failed: Outcome) => Promise<void>;
}

/**
 * How a commit ended: `saved` (its `transition_applied` events emitted), `unsaved` (the
 * application saves nothing), `conflict` (another writer saved first: reload and apply again), or
 * `failed` with the outcome to report.
 * @internal
 */
export type Committed =
  | { readonly kind: 'saved' | 'unsaved' }
  | { readonly kind: 'conflict'; readonly error: CheckpointConflictError }
  | { readonly kind: 'failed'; readonly outcome: Outcome };

const SAVED: Committed = { kind: 'saved' };
const UNSAVED: Committed = { kind: 'unsaved' };

/**
 * Saves an application with compare-and-set: on success emits its `transition_applied` events;
 * on failure restores the strategy's snapshot, asks for a re-application after a version conflict
 * (at most {@link MAX_CONFLICT_RETRIES} times), and otherwise fails — after saving what arrived
 * when the effects themselves cannot be stored (an unstorable value in them).
 * @internal
 */
export async function commitApplied(d: CommitDeps, c: CommitInput): Promise<Committed> {
  const { applied } = c;
  if (applied.save === undefined) return UNSAVED;
  let pending: PendingSave | number;
  let version: number;
  try {
    pending = startCommit(d, c.session, c.loaded, applied.outcome, applied.save, c.cause);
  } catch (error) {
    return commitFailed(c, error);
  }
  if (typeof pending === 'number') return savedAtOnce(d, c.session, applied);
  try {
    version = await pending.version;
  } catch (error) {
    pending.failed();
    return commitFailed(c, error);
  }
  return commitSaved(d, pending, applied, version);
}

/**
 * {@link commitApplied}'s save handed to the store (the settling save records the outcome too:
 * a worker dying before `putOutcome` loses nothing), for a caller that awaits `version` in its own
 * frame, then calls {@link commitSaved} — or `failed()` and {@link commitFailed} when it rejects;
 * the new version when the store saved it at once ({@link savedAtOnce} then).
 * `at`: the runner clock's reading `cause` was stamped with in this synchronous step, if the caller has it.
 * Throws what {@link commitFailed} handles (the session unloaded).
 * @internal
 */
export function startCommit(
  d: CommitDeps,
  session: LiveSession,
  loaded: LoadedState,
  outcome: Outcome,
  save: SessionSave,
  cause: SessionCause,
  at?: number,
): PendingSave | number {
  const mark = d.persistence.settling(session, outcome);
  return d.persistence.startSave(session, loaded, save, cause, undefined, mark, at);
}

/** A commit the store saved at once (the loaded state took it already): its `transition_applied` events emitted. @internal */
export function savedAtOnce(d: CommitDeps, session: LiveSession, applied: Applied): Committed {
  emitTransitions(d.hub, session, applied);
  return SAVED;
}

/** A commit the store saved as `version`: the loaded state takes it, its `transition_applied` events are emitted. @internal */
export function commitSaved(d: CommitDeps, pending: PendingSave, applied: Applied, version: number): Committed {
  pending.done(version);
  emitTransitions(d.hub, pending.session, applied);
  return SAVED;
}

/**
 * A commit whose save failed with `error`: the strategy's snapshot restored; a conflict asks for a
 * re-application (at most {@link MAX_CONFLICT_RETRIES} times); anything else fails the signal,
 * after saving what arrived when the effects cannot be stored.
 * @internal
 */
export async function commitFailed(c: CommitInput, error: unknown): Promise<Committed> {
  const { applied } = c;
  if (applied.rollback !== undefined) c.loaded.strategy.restore(applied.rollback);
  if (isConflict(error) && c.attempt < MAX_CONFLICT_RETRIES)
    return { kind: 'conflict', error: error as CheckpointConflictError };
  const failed: Outcome = {
    ...applied.outcome,
    status: 'failed',
    error: asSignalyardError(error, 'CHECKPOINT_SAVE_FAILED'),
  };
  // The effects cannot be stored; what arrived still is.
  if (isUnstorable(error) && applied.outcome.status !== 'failed') await c.saveArrivals(failed);
  return { kind: 'failed', outcome: failed };
}

/** Emits the `transition_applied` events of a saved application. @internal */
export function emitTransitions(hub: EventChannel<RunnerEvent>, session: LiveSession, applied: Applied): void {
  const { transitions } = applied;
  if (transitions === undefined) return;
  for (let i = 0; i < transitions.length; i++)
    hub.emit({ type: 'transition_applied', ...session.ctx, result: transitions[i] as TransitionResult });
}

/**
 * Something escaped the action's own handling (a strategy's `snapshot()` throwing, an engine
 * result with a throwing getter): the session's live state may be half-changed, so it is dropped
 * (reloaded from the store next time), what arrived is saved (`saveArrivals`), and the outcome
 * is `failed` with `ENGINE_FAILED` (or the escaped error itself, when it is a Signalyard error).
 * `what` names what was applied (`a user_message signal`, `a batch`). `saveArrivals` gets the
 * strategy snapshot taken when the session was loaded (`undefined` when it was not): the strategy
 * may be what threw, so a never-saved session's arrivals are saved with that one — the one path
 * for a single signal and a batch alike.
 * @internal
 */
export async function escapedOutcome(
  session: LiveSession,
  what: string,
  error: unknown,
  saveArrivals: (failed: Outcome, initial: StrategySnapshot | undefined) => Promise<void>,
): Promise<Outcome> {
  const before = session.state;
  const initial = before.kind === 'loaded' ? before.savedStrategy : undefined;
  session.state = UNLOADED;
  const failure = SignalyardError.isInstance(error)
    ? error
    : new RunnerError({
        code: 'ENGINE_FAILED',
        message: `Applying ${what} to session ${JSON.stringify(session.key)} failed: ${errorText(error)}`,
        cause: error,
      });
  const outcome = failedOutcome(session.ctx, failure);
  await saveArrivals(outcome, initial);
  return outcome;
}

/**
 * The outcome of a `tool_approval` whose turn committed its decisions (`ctx.commit`: the approved
 * calls claimed, so they ran or may have, and never run again) and whose final save then lost to
 * another writer. Applying the signal again would find none of its approvals pending and answer
 * `rejected` `no_pending_approval` — hiding that the tool ran. So it is not applied again: what
 * came after the commit is discarded, as for a failure after a commit (approvals.md), and the
 * approver gets `failed` with `CHECKPOINT_CONFLICT` saying so (the lost save is the `cause`).
 * @internal
 */
export function committedApprovalConflict(
  session: LiveSession,
  outcome: Outcome,
  conflict: CheckpointConflictError,
  decisions: readonly { readonly id: string; readonly approved: boolean }[],
): Outcome {
  const listed = decisions.map((d) => `${JSON.stringify(d.id)} (${d.approved ? 'approved' : 'denied'})`).join(', ');
  const ran = decisions.some((d) => d.approved)
    ? 'so the approved tool calls ran (at most once: they will not run again)'
    : 'and no call was approved';
  const error = new CheckpointConflictError({
    key: conflict.key,
    expected: conflict.expected,
    actual: conflict.actual,
    message:
      `The decisions on ${listed} of session ${JSON.stringify(session.key)} were committed, ${ran}, ` +
      `but the turn's final save lost to another writer (checkpoint ${JSON.stringify(conflict.key)} is at version ` +
      `${conflict.actual}, expected version ${conflict.expected}): what the turn did after the commit (tool results, ` +
      `its reply) was not saved. Reload the session (runner.session / runner.transcript) to see where it stands.`,
    cause: conflict,
  });
  return { ...outcome, status: 'failed', error };
}
