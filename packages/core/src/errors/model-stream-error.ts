import { SignalyardError, hasErrorMarker } from './signalyard-error.js';

const marker = Symbol.for('signalyard.error.ModelStreamError');

/** The code of {@link ModelStreamError}. */
export type ModelStreamErrorCode =
  /** A model's stream (read through `streamChat`) broke the stream rules: a part that is not a `text-delta` with a string delta, a `tool-call` with a `{ id, name, arguments }` call, or a `finish` with a `ChatResponse`; text deltas that do not concatenate to `finish.response.content`; `tool-call` parts that differ from `finish.response.toolCalls`; a part after `finish`; or a stream that ended without `finish`. For a model without `stream`, its `generate` resolved something that is not a `ChatResponse`. Fix: fix the model adapter so its stream follows the rules the message names (a `ChatModel.stream` ends with exactly one `finish` carrying the whole response). */
  'MODEL_STREAM_INVALID';

/**
 * A model's streamed reply broke the rules of `ChatModel.stream` (code `MODEL_STREAM_INVALID`).
 * Thrown by `streamChat` when it reads the offending part (or the end of a stream without a
 * `finish`); the parts before it were already yielded. The message names the bad part and what
 * was expected.
 *
 * @example
 * ```ts
 * try {
 *   for await (const part of streamChat(model, request)) render(part);
 * } catch (error) {
 *   if (ModelStreamError.isInstance(error)) console.error('broken model adapter:', error.message);
 *   else throw error;
 * }
 * ```
 */
export class ModelStreamError extends SignalyardError<ModelStreamErrorCode> {
  private readonly [marker] = true;
  /** The `agentId` of the request whose stream broke the rules, when it had one. */
  readonly agentId?: string;

  constructor(options: { message: string; agentId?: string; cause?: unknown }) {
    super({ code: 'MODEL_STREAM_INVALID', message: options.message, cause: options.cause });
    if (options.agentId !== undefined) this.agentId = options.agentId;
  }

  /** True when `error` is a `ModelStreamError`, from any installed copy of core. */
  static override isInstance(error: unknown): error is ModelStreamError {
    return hasErrorMarker(error, marker);
  }
}
