import { SignalyardError, hasErrorMarker } from './signalyard-error.js';

const marker = Symbol.for('signalyard.error.InvalidArgumentError');

/** The codes of {@link InvalidArgumentError}. */
export type InvalidArgumentErrorCode =
  /** `signal(kind)` or `SignalKind.custom(name)` was given a kind that is not `user_message`, `tool_result`, `stop`, `timer` or `custom:<name>` (or an empty custom name). Fix: use the `SignalKind` constants, or `SignalKind.custom('name')` with a non-empty name. */
  | 'SIGNAL_KIND_INVALID'
  /** `Action.transition`, `Action.custom` or `Action.reject` was given something other than a non-empty string, a strategy was asked to execute such an action, or `formatAction` was given something that is not an `Action`. Fix: pass the FSM action name, custom action name or reject reason as a non-empty string; build actions with `Action`. */
  | 'ACTION_INVALID'
  /** A strategy was asked to restore a snapshot it cannot take (another strategy's, or a malformed one). Fix: restore a snapshot this strategy's own `snapshot()` produced; check that the agent's strategy factory did not change. */
  | 'STRATEGY_SNAPSHOT_INVALID'
  /** `defineTool` was given a malformed definition (no name, a schema that is not a zod object, a missing `execute`). Fix: pass `{ name, input: z.object(...), execute }` as the message describes. */
  | 'TOOL_DEFINITION_INVALID'
  /** `streamChat` was given a model that is not a `ChatModel` (no `generate` function, or a `stream` that is not a function). Fix: pass a `ChatModel`, such as `aiSdkModel(...)` or `scriptedModel(...)`. */
  | 'CHAT_MODEL_INVALID'
  /** `streamChat` was given a request that is not a `ChatRequest`: not an object, `messages` not an array, `tools` not an array, `abortSignal` not an `AbortSignal`, or `agentId` not a string. Fix: pass `{ messages: [...], tools?, abortSignal?, agentId? }` as the message describes. */
  | 'CHAT_REQUEST_INVALID'
  /** `decideApproval` was given a tool call that is not `{ id, name, arguments }` (with string `id` and `name`), a tool that is not a `Tool` (or whose `name` differs from the call's, or whose `needsApproval` is neither a boolean nor a function), or a context that is not a `ToolContext` object (with a string `toolCallId`). Fix: pass the model's `ToolCall`, the `Tool` it names (or `undefined` for an unknown tool) and the `ToolContext` the tool would run with. */
  | 'APPROVAL_ARGUMENT_INVALID'
  /** A `Clock` (the `clock` option of a checkpoint store, a pipeline runtime or a kernel) returned something from `now()` that is not a time: not a finite number of milliseconds since the epoch within the range of a `Date`. Nothing was written with it. Fix: make `now()` return milliseconds since the epoch, as `Date.now()` does. */
  | 'CLOCK_INVALID';

/**
 * A core function was called with an argument it cannot take: a bad signal kind, an empty action
 * name, a snapshot from another strategy, a malformed tool definition, a model or request
 * `streamChat` cannot read, a malformed tool call given to `decideApproval`. The message names the bad
 * value and what was expected; nothing was changed.
 *
 * @example
 * ```ts
 * try {
 *   signal('usr_message' as SignalKind);
 * } catch (error) {
 *   if (InvalidArgumentError.isInstance(error)) console.error(error.code); // SIGNAL_KIND_INVALID
 * }
 * ```
 */
export class InvalidArgumentError extends SignalyardError<InvalidArgumentErrorCode> {
  private readonly [marker] = true;

  /** True when `error` is an `InvalidArgumentError`, from any installed copy of core. */
  static override isInstance(error: unknown): error is InvalidArgumentError {
    return hasErrorMarker(error, marker);
  }
}
