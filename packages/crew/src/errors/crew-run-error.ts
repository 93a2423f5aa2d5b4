import { SignalyardError, hasErrorMarker } from '@signalyard/core';
import type { CrewState } from '../crew-events.js';

const marker = Symbol.for('signalyard.error.CrewRunError');
const abortedMarker = Symbol.for('signalyard.error.AbortedError');

/**
 * The codes a {@link CrewRunError} carries:
 *
 * - `CREW_AGENT_FAILED`: an agent's model threw (the error is the `cause`) or returned something
 *   that is not a `ChatResponse`;
 * - `ABORTED`: the run's `abortSignal` fired (or the stream's consumer stopped reading);
 * - `CREW_TOOL_LOOP`: an agent asked for one more tool round than `max_tool_rounds` allows;
 * - `CREW_PARALLEL_FAILED`: no member of a parallel group succeeded;
 * - `CREW_UNKNOWN_AGENT`: `resumeAgentId` (or `state.pausedAgentId`) names no agent of the crew;
 * - `CREW_ARGUMENT_INVALID`: the input or the run options are malformed.
 *
 * @example
 * ```ts
 * if (CrewRunError.isInstance(error) && error.code === 'CREW_PARALLEL_FAILED') console.error(error.group, error.cause);
 * ```
 */
export type CrewRunErrorCode =
  | 'CREW_AGENT_FAILED'
  | 'ABORTED'
  | 'CREW_TOOL_LOOP'
  | 'CREW_PARALLEL_FAILED'
  | 'CREW_UNKNOWN_AGENT'
  | 'CREW_ARGUMENT_INVALID';

/**
 * Why a crew run failed: what `CrewExecutor.execute` rejects with and the `error` of a stream's
 * final `error` event. It carries the run's {@link CrewState} up to the failure, so the caller
 * can keep the conversation (and, say, retry the failed agent with `resumeAgentId`).
 *
 * A run stopped by its `abortSignal` fails with code `ABORTED`; that error is also recognised
 * by core's `AbortedError.isInstance` (the abort reason is in `cause`'s chain).
 *
 * @example
 * ```ts
 * try {
 *   const response = await executor.execute(input, { state });
 *   state = response.state;
 * } catch (error) {
 *   if (!CrewRunError.isInstance(error)) throw error;
 *   state = error.state;                                 // keep the history up to the failure
 *   if (error.code === 'CREW_AGENT_FAILED') console.error(`${error.agentId} failed`, error.cause);
 * }
 * ```
 */
export class CrewRunError extends SignalyardError {
  private readonly [marker] = true;
  declare readonly code: CrewRunErrorCode;
  /** The state up to the failure (the history the run had built), to keep or retry from. */
  readonly state: CrewState;
  /** The agent concerned, when there is one (the failing agent, the unknown id, the agent running when aborted). */
  declare readonly agentId?: string;
  /** The parallel group concerned (`CREW_PARALLEL_FAILED`). */
  declare readonly group?: string;

  constructor(options: {
    code: CrewRunErrorCode;
    message: string;
    state: CrewState;
    agentId?: string;
    group?: string;
    cause?: unknown;
  }) {
    super({ code: options.code, message: options.message, cause: options.cause });
    this.state = options.state;
    if (options.agentId !== undefined) (this as { agentId?: string }).agentId = options.agentId;
    if (options.group !== undefined) (this as { group?: string }).group = options.group;
    if (options.code === 'ABORTED') Object.defineProperty(this, abortedMarker, { value: true });
  }

  /** True when `error` is a `CrewRunError` (or a subclass), from any installed copy of the crew package. */
  static override isInstance(error: unknown): error is CrewRunError {
    return hasErrorMarker(error, marker);
  }
}
