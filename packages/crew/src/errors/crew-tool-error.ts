import { SignalyardError, hasErrorMarker } from '@signalyard/core';

const marker = Symbol.for('signalyard.error.CrewToolError');

/** The codes of {@link CrewToolError}. */
export type CrewToolErrorCode =
  /** A model called a tool its agent does not have (not in the agent's `tools` list). The run goes on: the call is answered with a tool error message naming the agent's tools, so the model can call again, and the `tool_result` event carries this error as its `result` (`isError: true`). Fix: usually nothing (the model corrects itself); if it keeps happening, add the tool to the agent's `tools` (and the executor's `tools`), or name the agent's tools in its system prompt. */
  | 'CREW_UNKNOWN_TOOL'
  /** A tool returned a result with no text to send to the model: an object JSON cannot serialize (a cycle, a BigInt inside it, a throwing `toJSON` or getter). The run goes on: the call is answered with a tool error message saying why, and the `tool_result` event carries this error as its `result` (`isError: true`). Fix: return a string or plain JSON data from the tool (convert BigInts to strings or numbers, break cycles). */
  | 'CREW_TOOL_RESULT_INVALID';

/**
 * A model called a tool its agent does not have (code `CREW_UNKNOWN_TOOL`), or a tool returned a
 * result that cannot be sent to the model as text (code `CREW_TOOL_RESULT_INVALID`).
 *
 * Not a run error: the crew executor answers the call with a `tool` message describing this
 * error (`isError: true`), so the model sees what went wrong and can call again; the
 * `tool_result` event carries the error as `result`.
 *
 * @example
 * ```ts
 * for await (const event of executor.executeStream(input)) {
 *   if (event.type === 'tool_result' && CrewToolError.isInstance(event.result))
 *     console.warn(`${event.result.agentId} called unknown tool ${event.result.toolName}`);
 * }
 * ```
 */
export class CrewToolError extends SignalyardError<CrewToolErrorCode> {
  private readonly [marker] = true;
  /** The agent whose model made the call. */
  readonly agentId: string;
  /** The tool name the model called. */
  readonly toolName: string;

  constructor(options: { code: CrewToolErrorCode; message: string; agentId: string; toolName: string }) {
    super({ code: options.code, message: options.message });
    this.agentId = options.agentId;
    this.toolName = options.toolName;
  }

  /** True when `error` is a `CrewToolError`, from any installed copy of the crew package. */
  static override isInstance(error: unknown): error is CrewToolError {
    return hasErrorMarker(error, marker);
  }
}
