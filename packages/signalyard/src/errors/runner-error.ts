import { SignalyardError, hasErrorMarker } from '@signalyard/core';

const marker = Symbol.for('signalyard.error.RunnerError');

/**
 * An error of the Runner, with one of these codes:
 *
 * - `RUNNER_CLOSED` — `handle` / `dispatch` after `close()` began (the call rejects).
 * - `RUNNER_INPUT_INVALID` — a malformed message, session key or signal (the call rejects).
 * - `CHECKPOINT_FORMAT_UNSUPPORTED` — a checkpoint with an unknown format version `v` (outcome `failed`; the checkpoint is untouched).
 * - `ENGINE_FAILED` — an engine threw something that is not a `SignalyardError` (outcome `failed`, original as `cause`).
 * - `CUSTOM_ACTION_UNHANDLED` / `CUSTOM_ACTION_FAILED` — `custom(name)` with no handler, or a handler that threw.
 * - `TURN_RESULT_INVALID` — an engine returned something that is not a `TurnResult`, or an action a turn cannot take.
 * - `SESSION_AGENT_MISMATCH` — a signal for a session that belongs to another agent.
 * - `STRATEGY_FACTORY_FAILED` — an agent's strategy factory threw or returned something that is not an `ExecutionStrategy`.
 * - `CHECKPOINT_LOAD_FAILED` / `CHECKPOINT_SAVE_FAILED` — the store failed to load or save a checkpoint (original as `cause`).
 * - `SESSION_LOCK_FAILED` — the `SessionLock` failed (original as `cause`).
 * - `RUNNER_START_FAILED` — plugin setup failed, so the runner cannot serve.
 */
export class RunnerError extends SignalyardError {
  private readonly [marker] = true;

  /** True when `error` is a `RunnerError`, from any installed copy of the package. */
  static override isInstance(error: unknown): error is RunnerError {
    return hasErrorMarker(error, marker);
  }
}
