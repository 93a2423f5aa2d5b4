import { SignalyardError, hasErrorMarker } from '@signalyard/core';

const marker = Symbol.for('signalyard.error.RunnerError');

/** The codes of {@link RunnerError}. */
export type RunnerErrorCode =
  /** `handle`, `dispatch` or `start` was called after `close()` began; the call rejects. Fix: create a new runner to serve more signals; close a runner only when shutting down. */
  | 'RUNNER_CLOSED'
  /** `handle` or `dispatch` was given a malformed message, session key, signal or option (or a message the routing config cannot resolve); the call rejects and nothing is queued. Fix: pass `{ channel, text, … }` to `handle`, a `Signal` made with `signal()` and a session key made by `@signalyard/sessions` to `dispatch`, as the message names. */
  | 'RUNNER_INPUT_INVALID'
  /** A plugin's `setup` threw (or two plugins claimed one custom action), so the runner cannot serve; every signal fails with this code. Fix: fix the plugin named in the message (the original error is the `cause`), then create a new runner. */
  | 'RUNNER_START_FAILED'
  /** A stored checkpoint has a format version `v` this release does not know (written by a newer release); the outcome is `failed` and the checkpoint is left untouched. Fix: run the newer release, or migrate the checkpoint. */
  | 'CHECKPOINT_FORMAT_UNSUPPORTED'
  /** The store failed to load a session's checkpoint, or the checkpoint is malformed; the outcome is `failed` (the original error is the `cause`). Fix: check the store (connection, permissions) and the checkpoint named in the message. */
  | 'CHECKPOINT_LOAD_FAILED'
  /** The store failed to save a session's checkpoint; the outcome is `failed` and the session keeps its last saved state (the original error is the `cause`). Fix: check the store; the signal can be sent again. */
  | 'CHECKPOINT_SAVE_FAILED'
  /** An engine threw something that is not a `SignalyardError` (or an agent has no engine); the outcome is `failed` with the original error as `cause`, and the session keeps its last good state. Fix: fix the engine (the `cause` has its stack). */
  | 'ENGINE_FAILED'
  /** A `custom(name)` action was applied but no plugin registered a handler for `name`; the outcome is `failed`. Fix: register one with `PluginContext.handleCustomAction(name, handler)` in a plugin's `setup`, or route to another action. */
  | 'CUSTOM_ACTION_UNHANDLED'
  /** A custom action handler threw; the outcome is `failed` with the original error as `cause`. Fix: fix the handler of the plugin named in the message. */
  | 'CUSTOM_ACTION_FAILED'
  /** An engine returned something that is not a `TurnResult`, or an action a turn cannot take (`continue` in `TurnResult.actions`); the outcome is `failed` and nothing from the turn is saved. Fix: return `{ messages?, state?, output?, status?, actions? }` as the message describes. */
  | 'TURN_RESULT_INVALID'
  /** A signal was dispatched to a session that belongs to another agent (its checkpoint or live session says so); the outcome is `failed`. Fix: dispatch with the session's own agent id, or use a new session key. */
  | 'SESSION_AGENT_MISMATCH'
  /** An agent's strategy factory threw, or returned something that is not an `ExecutionStrategy`; the outcome is `failed`. Fix: make `strategy` a function returning a new strategy (for an FSM: `() => definition.create()`). */
  | 'STRATEGY_FACTORY_FAILED'
  /** The `SessionLock` failed to acquire the session's lock, or lost it while the signal was applied (the turn is then aborted and nothing more is written for it); the outcome is `failed` (the lock's error is the `cause`). Fix: check the lock's backend (for PostgreSQL, its connection); the signal can be sent again. */
  | 'SESSION_LOCK_FAILED'
  /** `fork` was asked to create a session that already exists (it has a checkpoint); nothing is written. Fix: fork into a new session key, or `deleteSession` the target first. */
  | 'SESSION_EXISTS'
  /** `sessionAt`, `fork` or `rewind` asked for a version the store no longer keeps (pruned beyond `keepVersions`, or a store without history); the message names the oldest version still kept. Fix: ask for a kept version (`runner.history(key)` lists them), or raise the store's `keepVersions`. */
  | 'VERSION_UNAVAILABLE'
  /** `fork` or `rewind` named a session that has no checkpoint; nothing is written. Fix: check the session key (`runner.listSessions()` lists the stored ones). */
  | 'SESSION_NOT_FOUND'
  /** An engine called `ctx.commit` after its turn had ended (after it returned its `TurnResult`, or after it failed); nothing is saved. Fix: await every `ctx.commit` before returning from the turn. */
  | 'COMMIT_REFUSED';

/**
 * An error of the Runner. `handle` / `dispatch` reject with it only for misuse (`RUNNER_CLOSED`,
 * `RUNNER_INPUT_INVALID`); every other code reaches you as an `Outcome` with status `failed` and
 * this error in `outcome.error`. See {@link RunnerErrorCode} (and docs/errors.md) for each code.
 *
 * @example
 * ```ts
 * const outcome = await runner.handle({ channel: 'cli', text: 'hi' });
 * if (outcome.status === 'failed' && RunnerError.isInstance(outcome.error)) {
 *   if (outcome.error.code === 'ENGINE_FAILED') console.error(outcome.error.cause);
 * }
 * ```
 */
export class RunnerError extends SignalyardError<RunnerErrorCode> {
  private readonly [marker] = true;

  /** True when `error` is a `RunnerError`, from any installed copy of the package. */
  static override isInstance(error: unknown): error is RunnerError {
    return hasErrorMarker(error, marker);
  }
}
