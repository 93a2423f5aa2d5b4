import { SignalyardError, hasErrorMarker } from '@signalyard/core';
import type { CrewState } from '../crew-state.js';

const marker = Symbol.for('signalyard.error.CrewRunError');

/**
 * The codes a {@link CrewRunError} carries.
 *
 * @example
 * ```ts
 * if (CrewRunError.isInstance(error) && error.code === 'CREW_PARALLEL_FAILED') console.error(error.group, error.cause);
 * ```
 */
export type CrewRunErrorCode =
  /** An agent's model threw (the error is the `cause`) or returned something that is not a `ChatResponse` — for a streamed call also a stream that broke the `ChatModel.stream` rules (the `cause` is a `ModelStreamError`); the error's `state` keeps the history up to the failure. (A parallel group member's failure is its `CrewAgentError`, `CREW_MEMBER_FAILED`.) Fix: check the model (provider, key, rate limits); retry from `error.state` with `resumeAgentId`. */
  | 'CREW_AGENT_FAILED'
  /** The run's `abortSignal` fired (or a stream's consumer stopped reading); the `AbortedError` is the `cause`. Fix: nothing, when you aborted on purpose; the error's `state` holds the history so far. */
  | 'ABORTED'
  /** An agent asked for one more tool round than `max_tool_rounds` allows in one turn; its last calls were answered "not run". (A parallel group member's is its `CrewAgentError`, `CREW_MEMBER_TOOL_LOOP`.) Fix: raise `settings.max_tool_rounds`, or tell the agent (system prompt) to answer once it has the tool results. */
  | 'CREW_TOOL_LOOP'
  /** No member of a parallel group succeeded (each failed or timed out); `group` names the group. Fix: look at the members' errors (`cause`), raise `timeout_seconds`, or set `wait_for_all: false`. */
  | 'CREW_PARALLEL_FAILED'
  /** `resumeAgentId` (or `state.pausedAgentId`) names no agent of the crew, e.g. a state saved with another crew.yaml. Fix: resume with an agent id the crew has, or start without state. */
  | 'CREW_UNKNOWN_AGENT'
  /** The input or the run options of `execute` / `executeStream` are malformed (a non-string input, a state that is not a `CrewState`). Fix: pass the input text and the `state` a previous run returned, as the message describes. */
  | 'CREW_ARGUMENT_INVALID'
  /** `opts.approvals` holds a decision for an approval id that was never issued for this state, or is too old to be remembered (only the last 256 decided ids are); nothing of the decisions was applied and the error's `state` is the one given. Fix: answer the ids of `CrewResponse.pendingApprovals`, with the state that response returned. */
  | 'CREW_APPROVAL_UNKNOWN'
  /** The `commit` hook of the run options rejected (its error is the `cause`) when the executor made the claim of an approved tool call durable, so the tool did not run; the error's `state` holds the call approved but not started. Fix: under a Runner the turn is retried from the saved session (a compare-and-set conflict); otherwise make `commit` succeed and run again with the error's `state`. */
  | 'CREW_COMMIT_FAILED'
  /** The executor's `mcp` source (`McpToolSource`) rejected when the run resolved an agent's crew.yaml `mcp:` views with an error that is not an MCP one (an unknown server and clashing names carry their own codes, `MCP_SERVER_UNKNOWN` and `MCP_CONFIG_INVALID`); its error is the `cause`; nothing ran. Fix: check the MCP client's state and the error in `cause`. */
  | 'CREW_MCP_FAILED'
  /** An agent's crew.yaml `mcp:` views name a server the executor's MCP client was not given: the client's `McpError` with this code is the `cause` (its `server` names the server); nothing ran. Fix: use one of the names of `connectMcp({ servers })`. */
  | 'MCP_SERVER_UNKNOWN'
  /** The tools one agent sees clash or break the name rules: two MCP tools named alike (the client's `McpError` with this code is the `cause`, its message names both servers), a prefixed name that is not a valid tool name (likewise), or an MCP tool named like one of the agent's own or transfer tools (the message names the server and the tool; no `cause`); nothing ran. Fix: give a view a `prefix`, or filter the tool out with `deny`. */
  | 'MCP_CONFIG_INVALID';

/**
 * Why a crew run failed: what `CrewExecutor.execute` rejects with and the `error` of a stream's
 * final `error` event. It carries the run's {@link CrewState} up to the failure, so the caller
 * can keep the conversation (and, say, retry the failed agent with `resumeAgentId`).
 *
 * A run stopped by its `abortSignal` fails with code `ABORTED`, and its `cause` is core's
 * `AbortedError` (whose own `cause` is the abort reason): test `error.code === 'ABORTED'`.
 * An agent's failure outside a parallel group is the run's (`CREW_AGENT_FAILED`, with the
 * model's error as `cause`; `CREW_TOOL_LOOP`); a group member's failure is a `CrewAgentError`
 * in its `parallel_member_end` event (`CREW_MEMBER_FAILED`, `CREW_MEMBER_TOOL_LOOP`), and the
 * run fails only when no member succeeded (`CREW_PARALLEL_FAILED`, the members' errors in its
 * `cause`).
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
export class CrewRunError extends SignalyardError<CrewRunErrorCode> {
  private readonly [marker] = true;
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
  }

  /** True when `error` is a `CrewRunError` (or a subclass), from any installed copy of the crew package. */
  static override isInstance(error: unknown): error is CrewRunError {
    return hasErrorMarker(error, marker);
  }
}
