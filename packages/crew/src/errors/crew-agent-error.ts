import { SignalyardError, hasErrorMarker } from '@signalyard/core';

const marker = Symbol.for('signalyard.error.CrewAgentError');

/** The codes of {@link CrewAgentError}. */
export type CrewAgentErrorCode =
  /** A parallel group member's model threw (the model's error is the `cause`) or returned something that is not a `ChatResponse` — for a streamed call (`executeStream`) also a stream that broke the `ChatModel.stream` rules (the `cause` is a `ModelStreamError`). The member ends `failed` (its `parallel_member_end` event carries this error); the group goes on with the other members. The same failure outside a group ends the run with a `CrewRunError` coded `CREW_AGENT_FAILED`. Fix: check the member's model (provider, key, rate limits) and what it returns. */
  | 'CREW_MEMBER_FAILED'
  /** A parallel group member asked for one more tool round than `max_tool_rounds` allows in one turn; its last calls were answered "not run" and the member ends `failed`. The same outside a group ends the run with a `CrewRunError` coded `CREW_TOOL_LOOP`. Fix: raise `settings.max_tool_rounds`, or tell the agent (system prompt) to answer once it has the tool results. */
  | 'CREW_MEMBER_TOOL_LOOP'
  /** A parallel group member needed another model call, but the run had reached `max_rounds`; the member counts as failed, and when no member succeeded the run ends with reason `max_rounds`. Fix: raise `settings.max_rounds` (a group of n members needs at least n more calls), or give the members fewer tool rounds. */
  | 'CREW_MAX_ROUNDS'
  /** A parallel group member did not finish within the group's `timeout_seconds` (status `timed_out`). An error with this code (without `agentId`) is also the abort reason the members' model calls and tools see when the deadline passes. Fix: raise the group's `timeout_seconds` (or `settings.parallel_timeout_seconds`), or set `wait_for_all: false` so the first member to succeed completes the group. */
  | 'CREW_PARALLEL_TIMEOUT';

/**
 * A parallel group member's turn failed: its model threw or returned garbage, it looped on
 * tools, it ran out of rounds, or it missed the group's deadline.
 *
 * Members report this error as the `error` of their `parallel_member_end` event (and, when no
 * member succeeds, inside the `AggregateError` that is the `cause` of the run's
 * `CREW_PARALLEL_FAILED`). Outside a group, an agent's failure is the run's: `execute` rejects
 * with a {@link CrewRunError} (`CREW_AGENT_FAILED`, `CREW_TOOL_LOOP`), which carries the run's
 * state. Each code has one class: a member's codes are `CREW_MEMBER_…`.
 *
 * @example
 * ```ts
 * for await (const event of executor.executeStream(input)) {
 *   if (event.type === 'parallel_member_end' && CrewAgentError.isInstance(event.error))
 *     console.warn(`${event.agentId}: ${event.error.code}`); // e.g. CREW_PARALLEL_TIMEOUT
 * }
 * ```
 */
export class CrewAgentError extends SignalyardError<CrewAgentErrorCode> {
  private readonly [marker] = true;
  /** The agent whose turn failed (absent on a group's deadline, which concerns every member). */
  declare readonly agentId?: string;
  /** The parallel group the agent ran in, when it ran in one. */
  declare readonly group?: string;

  constructor(options: {
    code: CrewAgentErrorCode;
    message: string;
    agentId?: string;
    group?: string;
    cause?: unknown;
  }) {
    super({ code: options.code, message: options.message, cause: options.cause });
    if (options.agentId !== undefined) (this as { agentId?: string }).agentId = options.agentId;
    if (options.group !== undefined) (this as { group?: string }).group = options.group;
  }

  /** True when `error` is a `CrewAgentError`, from any installed copy of the crew package. */
  static override isInstance(error: unknown): error is CrewAgentError {
    return hasErrorMarker(error, marker);
  }
}
