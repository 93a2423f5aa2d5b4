import {
  SignalyardError,
  type Action,
  type Outcome,
  type StrategySnapshot,
  type TransitionResult,
} from '@signalyard/core';
import { errorText } from '@signalyard/core/internal';
import type { RouteMatch } from '@signalyard/router';
import { RunnerError, type RunnerErrorCode } from './errors/runner-error.js';
import type { OutcomeParts } from './outcome-parts.js';
import type { SessionSave } from './session-save.js';

/** Whose outcome it is: a session key and its agent. @internal */
export interface OutcomeOwner {
  readonly sessionKey: string;
  readonly agentId: string;
}

/**
 * Builds an {@link Outcome}; `action` and `match` default to the parts'. `action` and
 * `decidedBy` are always present (possibly `undefined`). No spreads: it is on every signal's path.
 * @internal
 */
export function outcomeOf(
  owner: OutcomeOwner,
  parts: OutcomeParts,
  action: Action | undefined = parts.action,
  match: RouteMatch | undefined = parts.match,
): Outcome {
  const outcome: { -readonly [K in keyof Outcome]: Outcome[K] } = {
    sessionKey: owner.sessionKey,
    agentId: owner.agentId,
    action,
    decidedBy: match === undefined ? undefined : { tier: match.tier, route: match.route },
    status: parts.status,
  };
  if ('error' in parts) outcome.error = asSignalyardError(parts.error, 'ENGINE_FAILED');
  if ('output' in parts) outcome.output = parts.output;
  if (parts.pendingApprovals !== undefined) outcome.pendingApprovals = parts.pendingApprovals;
  return outcome;
}

/** A `stopped` outcome of a signal that never ran (or was aborted). @internal */
export function stoppedOutcome(owner: OutcomeOwner): Outcome {
  return outcomeOf(owner, { status: 'stopped' });
}

/** A `failed` outcome with no action decided (the signal never reached routing, or routing threw). @internal */
export function failedOutcome(owner: OutcomeOwner, error: unknown): Outcome {
  return outcomeOf(owner, { status: 'failed', error });
}

/** What applying one signal produced, before its checkpoint is saved. @internal */
export interface Applied {
  readonly outcome: Outcome;
  /** What to save; undefined: nothing to save. */
  readonly save?: SessionSave;
  /** Strategy state to return to when the save fails. */
  readonly rollback?: StrategySnapshot;
  /** Stop the queued signals once saved (a stop action applied at its turn). */
  readonly stopQueued?: boolean;
  /** Events to emit once saved. */
  readonly transitions?: readonly TransitionResult[];
  /** A commit of the turn lost to another writer: reload and apply the signal again. */
  readonly conflict?: unknown;
}

/** `error` itself when it is a `SignalyardError`, else a `RunnerError` with `code` wrapping it. @internal */
export function asSignalyardError(error: unknown, code: RunnerErrorCode): SignalyardError {
  if (SignalyardError.isInstance(error)) return error;
  return new RunnerError({ code, message: errorText(error), cause: error });
}

/** `RUNNER_INPUT_INVALID`. @internal */
export function inputError(message: string, cause?: unknown): RunnerError {
  return new RunnerError({ code: 'RUNNER_INPUT_INVALID', message, ...(cause !== undefined && { cause }) });
}

/** `RUNNER_CLOSED`. @internal */
export function closedError(): RunnerError {
  return new RunnerError({
    code: 'RUNNER_CLOSED',
    message: 'The runner is closed (or closing): create a new runner to serve more signals',
  });
}

/** `RUNNER_START_FAILED`, wrapping what a plugin's `setup` threw. @internal */
export function startFailed(error: unknown): RunnerError {
  return new RunnerError({
    code: 'RUNNER_START_FAILED',
    message: `The runner could not start: ${errorText(error)}`,
    cause: error,
  });
}

/** `SESSION_AGENT_MISMATCH`. @internal */
export function agentMismatch(sessionKey: string, owner: string, requested: string): RunnerError {
  return new RunnerError({
    code: 'SESSION_AGENT_MISMATCH',
    message: `Session ${JSON.stringify(sessionKey)} belongs to agent ${JSON.stringify(owner)}, not ${JSON.stringify(requested)}`,
  });
}
