import { SignalyardError, hasErrorMarker } from '@signalyard/core';

const marker = Symbol.for('signalyard.error.ModelRequestError');

/** The code of {@link ModelRequestError}. */
export type ModelRequestErrorCode =
  /** A `ChatRequest` cannot be sent as it is: no messages, a malformed message, tool call or tool spec, a `tool` message answering an unknown call id, or a tool call left unanswered; nothing was sent. Fix: correct the request at the `path` the error names (engines built into Signalyard always send valid requests). */
  'MODEL_REQUEST_INVALID';

/**
 * A `ChatRequest` cannot be sent to the model as it is (code `MODEL_REQUEST_INVALID`): it is not
 * an object, has no messages, holds a malformed message, tool call or tool spec, a `tool`
 * message answers a call id no earlier assistant message made, or an assistant's tool call is
 * left unanswered before the next `user` or `system` message (or the end of the list).
 *
 * Thrown (as a rejection of `generate`) before anything is sent: no provider call is made.
 *
 * @example
 * ```ts
 * try {
 *   await model.generate({ messages: [{ role: 'tool', content: '42', toolCallId: 'nope' }] });
 * } catch (error) {
 *   if (ModelRequestError.isInstance(error)) console.error(error.path, error.message);   // 'messages[0].toolCallId'
 * }
 * ```
 */
export class ModelRequestError extends SignalyardError<ModelRequestErrorCode> {
  private readonly [marker] = true;
  /** Where in the request the problem is, e.g. `messages[3].toolCallId` or `tools[1].name` (`''` for the request itself). */
  readonly path: string;

  constructor(options: { path: string; problem: string }) {
    super({
      code: 'MODEL_REQUEST_INVALID',
      message: `Invalid model request${options.path === '' ? '' : ` at ${options.path}`}: ${options.problem}`,
    });
    this.path = options.path;
  }

  /** True when `error` is a `ModelRequestError` (or a subclass), from any installed copy of the package. */
  static override isInstance(error: unknown): error is ModelRequestError {
    return hasErrorMarker(error, marker);
  }
}
