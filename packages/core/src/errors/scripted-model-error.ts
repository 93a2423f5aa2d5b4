import { SignalyardError, hasErrorMarker } from './signalyard-error.js';

const marker = Symbol.for('signalyard.error.ScriptedModelError');

/** The codes of {@link ScriptedModelError} (from `@signalyard/core/testing`). */
export type ScriptedModelErrorCode =
  /** `scriptedModel` was given a script that is not a list, a record of lists or a function, or a step that is not a string, a `ChatResponse` or a function. Fix: pass steps as the message describes. */
  | 'SCRIPT_INVALID'
  /** A scripted model was called more times than its script has steps (for that agent), or for an agent its record has no script for. Fix: add the missing replies to the script; the message names the agent and the call number. */
  | 'SCRIPT_EXHAUSTED'
  /** A function step returned something that is not a string or a `ChatResponse`. Fix: return a string or `{ content, toolCalls? }` from the step. */
  | 'SCRIPT_STEP_INVALID';

/**
 * A scripted test model was misconfigured or ran out of script. Thrown (as a rejection) by the
 * model's `generate`, so a test sees which agent asked for a reply the script did not have.
 */
export class ScriptedModelError extends SignalyardError<ScriptedModelErrorCode> {
  private readonly [marker] = true;

  /** True when `error` is a `ScriptedModelError`, from any installed copy of core. */
  static override isInstance(error: unknown): error is ScriptedModelError {
    return hasErrorMarker(error, marker);
  }
}
