import type {
  ApprovalDecision,
  ChatRequest,
  Clock,
  PendingApproval,
  SignalyardError,
  ToolCall,
} from '@signalyard/core';
import type { CrewState } from './crew-state.js';
import type { CrewRunError } from './errors/crew-run-error.js';

/**
 * Why a run ended without an error (`CrewResponse.reason`):
 *
 * - `terminated_by_signal`: the agent's reply matched one of its signals with target `""`;
 * - `terminal_agent`: no signal routed the reply of an agent with `is_terminal`;
 * - `paused`: no signal routed the reply of an agent with `wait_for_signal`: the next run with
 *   the returned `state` starts at that agent;
 * - `max_handoffs`: a handoff would have brought the count to `max_handoffs`;
 * - `max_rounds`: another model call would have been needed beyond `max_rounds`;
 * - `no_next_agent`: nothing routed the reply and the fallback found no other agent;
 * - `awaiting_approval`: a tool call of the last reply is held for a person's decision
 *   (`pendingApprovals`); the next run with the returned `state` and `approvals` continues it.
 *
 * @example
 * ```ts
 * const { reason } = await executor.execute(input);
 * if (reason === 'max_handoffs' || reason === 'max_rounds') console.warn('the crew hit a limit');
 * ```
 */
export type CrewEndReason =
  | 'terminated_by_signal'
  | 'terminal_agent'
  | 'paused'
  | 'max_handoffs'
  | 'max_rounds'
  | 'no_next_agent'
  | 'awaiting_approval';

/**
 * How a successful run ended: the last reply, why the run stopped, and the state to keep.
 *
 * @example
 * ```ts
 * const response = await executor.execute('Start the exam');
 * console.log(`${response.agentId}: ${response.content} (${response.reason}, ${response.handoffs} handoffs)`);
 * if (response.reason === 'paused') askUser(response.pausedAgentId);
 * ```
 */
export interface CrewResponse {
  /** The agent whose reply `content` is (after a parallel group: the agent that started it). */
  agentId: string;
  /** The last reply of the run (after a parallel group: the aggregated results), raw: markers included. */
  content: string;
  /**
   * `content` as the user sees it: with `hideSignals` (the default), every span that a signal
   * configured anywhere in the crew matches is removed together with the whitespace right before
   * it, and the result is trimmed; for a streamed run it equals the concatenated `text_delta`s of
   * the last reply. Equal to `content` when `hideSignals` is false.
   */
  visibleContent: string;
  /** Why the run ended, e.g. `'terminated_by_signal'` or `'paused'`: see {@link CrewEndReason}. */
  reason: CrewEndReason;
  /** True for `terminated_by_signal` and `terminal_agent`: the conversation is over. */
  isTerminal: boolean;
  /** Set when `reason` is `'paused'` (the same as `state.pausedAgentId`). */
  pausedAgentId?: string;
  /**
   * The signal (target `""`) that ended the run, e.g. `'[DONE]'`: set when `reason` is
   * `'terminated_by_signal'`, whether its marker matched or its transfer tool (`finish`) was called.
   */
  signal?: string;
  /**
   * Set when `reason` is `'awaiting_approval'`: every held call of the batch the run paused on
   * (not only those requested by this run). Answer them by `id` with `opts.approvals`.
   */
  pendingApprovals?: readonly PendingApproval[];
  /** Handoffs made during this run (signal, parallel `next_agent` and fallback handoffs alike). */
  handoffs: number;
  /** The state to pass to the next run. */
  state: CrewState;
}

/**
 * How a parallel-group member ended (`parallel_member_end.status`): `succeeded`; `failed` (its
 * model threw, its tool rounds looped, or `max_rounds` stopped it: see `error`); `timed_out` (the
 * group's deadline passed); `cancelled` (`wait_for_all: false` and another member succeeded).
 *
 * @example
 * ```ts
 * if (event.type === 'parallel_member_end' && event.status !== 'succeeded') console.warn(event.agentId, event.status, event.error?.message);
 * ```
 */
export type ParallelMemberStatus = 'succeeded' | 'failed' | 'timed_out' | 'cancelled';

/**
 * One event of a crew run, as `CrewExecutor.executeStream` yields them (discriminated by
 * `type`). Events of parallel-group members (`agent_start`, `text_delta`, `agent_response`,
 * `tool_start`, `tool_result`) carry the `group` they belong to; those of the main loop have no
 * `group`.
 *
 * `text_delta`: a piece of an agent's reply as its model streams it, before that reply's
 * `agent_response`. With `hideSignals` (the default) routing markers never show: the deltas of
 * one reply concatenate to its visible text (markers and the whitespace before them removed,
 * trimmed), so some model deltas release nothing and text may be held back until a marker is
 * ruled out. `path` is the chain of agent ids of this run from its first agent to `agentId`
 * (one entry per handoff); a parallel member's path is that of the agent whose reply started
 * the group, plus the member. Parallel members' deltas may interleave.
 *
 * `approval_requested`: the run pauses because calls of `agentId`'s reply are held for a
 * person's decision; emitted once per approval, by the run that holds it (a run that applies
 * only some decisions ends `awaiting_approval` without repeating it). `approval_resolved`: a
 * decision of `opts.approvals` was applied (`reason` is the decider's). A decision for an id
 * already decided is ignored with a `warning`.
 *
 * A stream always ends with exactly one `end` (carrying the response) or `error` (carrying the
 * `CrewRunError` and the state up to the failure) event.
 *
 * @example
 * ```ts
 * for await (const event of executor.executeStream('Start the exam')) {
 *   if (event.type === 'agent_response') console.log(`${event.agentId}: ${event.content}`);
 *   else if (event.type === 'handoff') console.log(`${event.from} -> ${event.to} (${event.via})`);
 *   else if (event.type === 'end') save(event.response.state);
 *   else if (event.type === 'error') console.error(event.error.code, event.error.message);
 * }
 * ```
 */
export type CrewEvent =
  | {
      /** An agent's turn starts: its model is about to be called. */
      type: 'agent_start';
      /** The agent whose turn starts. */
      agentId: string;
      /** The parallel group this member event belongs to; absent for an event of the main loop. */
      group?: string;
    }
  | {
      /** A piece of an agent's reply as its model streams it (`executeStream` with `textDeltas`, the default). */
      type: 'text_delta';
      /** The agent whose reply this is. */
      agentId: string;
      /** The new visible text, in order: concatenated, the deltas of one reply give its visible text. Never empty. */
      delta: string;
      /** The agent ids of this run from its first agent to `agentId`, one entry per handoff, e.g. `['teacher', 'student']`. */
      path: readonly string[];
      /** The parallel group this member event belongs to; absent for an event of the main loop. */
      group?: string;
    }
  | {
      /** An agent's model replied (one event per model call, tool rounds included). */
      type: 'agent_response';
      /** The agent that replied. */
      agentId: string;
      /** The reply's text, raw: routing markers such as `[ANSWER]` included. May be `''` when the reply only calls tools. */
      content: string;
      /**
       * The request the model answered (messages, agent id, tools), exactly as it was sent. Set
       * non-enumerably: a listener that records calls (`@signalyard/replay`'s `cassetteRecorder`
       * hashes it) reads it; serialized events (JSON, an inbox stream) leave it out. Read it, never change it.
       */
      readonly request?: ChatRequest;
      /**
       * The tool calls the reply asks for, in order; absent when it asks for none. Calls to
       * transfer tools are not here but in `transferCalls`: they are handoffs, not tools.
       */
      toolCalls?: readonly ToolCall[];
      /**
       * The reply's calls to transfer tools (`handoffMode` `tool` / `both`), in order; absent
       * when it makes none. The one that decides is reported by the `handoff` (or `terminate`,
       * `parallel_start`) event that follows; the others by a `warning`.
       */
      transferCalls?: readonly ToolCall[];
      /** The parallel group this member event belongs to; absent for an event of the main loop. */
      group?: string;
    }
  | {
      /** A tool call is about to run (a call refused by policy or a person has no `tool_start`, only a `tool_result`). */
      type: 'tool_start';
      /** The agent whose reply asked for the call. */
      agentId: string;
      /** The call: its `id`, tool `name` and parsed `arguments`. */
      call: ToolCall;
      /** The MCP server and tool name there, when the tool comes from an MCP server (`Tool.mcp`). */
      mcp?: {
        /** The server's name. */
        readonly server: string;
        /** The tool's name on the server. */
        readonly tool: string;
      };
      /** The parallel group this member event belongs to; absent for an event of the main loop. */
      group?: string;
    }
  | {
      /**
       * A running tool reported progress through `ToolContext.progress` (an MCP server's
       * `notifications/progress`, for one), between the call's `tool_start` and `tool_result`.
       */
      type: 'tool_progress';
      /** The agent whose reply asked for the call. */
      agentId: string;
      /** The call's `id` (as in its `tool_start`). */
      toolCallId: string;
      /** The tool's name. */
      toolName: string;
      /** How far it got (increases with each report). */
      progress: number;
      /** The total `progress` will reach, when the tool knows it. */
      total?: number;
      /** What the tool is doing, when it says. */
      message?: string;
      /** The parallel group this member event belongs to; absent for an event of the main loop. */
      group?: string;
    }
  | {
      /** A tool call was answered: run, failed, or refused. */
      type: 'tool_result';
      /** The agent whose reply asked for the call. */
      agentId: string;
      /** The call answered (the same `id` as its `tool_start`, when it had one). */
      call: ToolCall;
      /**
       * What the tool's `execute` returned; with `isError`, what it threw (or a `CrewToolError`:
       * `CREW_UNKNOWN_TOOL`, `CREW_TOOL_RESULT_INVALID`), or for a refused call the text the model
       * is sent, `'denied'` or `'denied: <reason>'`.
       */
      result: unknown;
      /** True when the call failed or was refused: the model is told so and the run goes on. */
      isError: boolean;
      /** The MCP server and tool name there, when the tool comes from an MCP server (`Tool.mcp`). */
      mcp?: {
        /** The server's name. */
        readonly server: string;
        /** The tool's name on the server. */
        readonly tool: string;
      };
      /** The parallel group this member event belongs to; absent for an event of the main loop. */
      group?: string;
    }
  | {
      /** The run moves on from one agent to another. */
      type: 'handoff';
      /** The agent handing off. */
      from: string;
      /** The agent taking over. */
      to: string;
      /**
       * Why: `signal` (the reply matched one of `from`'s routing signals, or called its transfer
       * tool), `parallel` (a member of a parallel group starting, with `group`; or the group's
       * `next_agent` afterwards), `fallback` (nothing routed the reply:
       * `handoff_targets`, then the crew's order).
       */
      via: 'signal' | 'parallel' | 'fallback';
      /**
       * The parallel group, for the handoff from the agent that started a group to one of its
       * members (`via: 'parallel'`, emitted for every member right after `parallel_start`, not
       * counted in `handoffs`); absent for every other handoff.
       */
      group?: string;
      /** The routing signal, e.g. `'[TO_STUDENT]'`; only with `via: 'signal'` (also when its transfer tool was called). */
      signal?: string;
      /** The transfer tool the model called, e.g. `'transfer_to_student'`; only for a handoff made by a tool call. */
      tool?: string;
      /** The `reason` the model gave in its transfer call; only when it gave one. */
      reason?: string;
      /** Handoffs made in this run so far, this one included (compare with `settings.maxHandoffs`). */
      handoffs: number;
    }
  | {
      /** A parallel group starts: its members run concurrently on copies of the history. */
      type: 'parallel_start';
      /** The group's name (crew.yaml `routing.parallel_groups` key). */
      group: string;
      /** The members' agent ids, in declaration order. */
      agents: readonly string[];
    }
  | {
      /** One member of a parallel group ended. */
      type: 'parallel_member_end';
      /** The group's name. */
      group: string;
      /** The member that ended. */
      agentId: string;
      /** How it ended: `succeeded`, `failed`, `timed_out` or `cancelled`. */
      status: ParallelMemberStatus;
      /** The member's last reply, raw; only with status `succeeded`. */
      content?: string;
      /**
       * Why it did not succeed: `CREW_PARALLEL_TIMEOUT` with `timed_out`, the model's error or
       * `CREW_MAX_ROUNDS` with `failed`; absent with `succeeded` and `cancelled`.
       */
      error?: SignalyardError;
    }
  | {
      /** A parallel group ended; its results are aggregated in declaration order. */
      type: 'parallel_end';
      /** The group's name. */
      group: string;
      /** The members that succeeded, in declaration order (possibly none). */
      succeeded: readonly string[];
    }
  | {
      /** The run ends (not paused and not waiting for approval); followed by `end`. */
      type: 'terminate';
      /** The agent whose reply ended the run. */
      agentId: string;
      /** Why the run ended: one of {@link CrewEndReason} other than `paused` and `awaiting_approval`. */
      reason: CrewEndReason;
      /** The signal with target `""` that ended it; only with reason `terminated_by_signal`. */
      signal?: string;
      /** The transfer tool the model called to end it (e.g. `'finish'`); only when a tool call ended it. */
      tool?: string;
    }
  | {
      /** The run pauses at an agent with `wait_for_signal` (reason `paused`); followed by `end`. */
      type: 'pause';
      /** The agent the next run with the returned state resumes at (`CrewResponse.pausedAgentId`). */
      agentId: string;
    }
  | {
      /** Something was ignored rather than failing the run, e.g. a second decision for an approval already decided. */
      type: 'warning';
      /** The agent the warning is about. */
      agentId: string;
      /** What was ignored and why, for a person to read. */
      message: string;
    }
  | {
      /**
       * The approvals policy decided a tool call of `agentId`'s reply (crew.yaml `approvals:`, or
       * the tool's `needsApproval`), before anything ran: `allow` runs it, `ask` holds it for a
       * person (an `approval_requested` follows), `deny` refuses it. Emitted for every call of a
       * reply the decide step looked at — not for transfer calls, nor calls naming no tool.
       */
      type: 'approval_decided';
      /** The agent whose reply made the call. */
      agentId: string;
      /** The model's id for the call. */
      toolCallId: string;
      /** The tool the call names. */
      toolName: string;
      /** What was decided. */
      decision: 'allow' | 'ask' | 'deny';
      /** The deciding rule's `reason`, when it has one (or why a check that failed denied the call). */
      reason?: string;
      /** The index of the deciding rule in `approvals.rules`; absent when no rule matched. */
      rule?: number;
      /** The deciding rule's `name`, when it has one. */
      ruleName?: string;
      /** The parallel group, for a member's call. */
      group?: string;
    }
  | {
      /** The run pauses: calls of `agentId`'s reply wait for a person's decision (reason `awaiting_approval`); followed by `end`. */
      type: 'approval_requested';
      /** The agent whose reply asked for the held calls. */
      agentId: string;
      /** The calls held for a person's decision. */
      approvals: readonly PendingApproval[];
    }
  | {
      /** A decision of `opts.approvals` was applied to a held call. */
      type: 'approval_resolved';
      /** The agent whose reply asked for the call. */
      agentId: string;
      /** The approval id the decision was for. */
      id: string;
      /** Whether the call was approved (it runs) or denied (answered `denied`). */
      approved: boolean;
      /** The decider's reason, as given in the decision; absent when none was given. */
      reason?: string;
    }
  | {
      /** The run failed; the stream's last event. */
      type: 'error';
      /** What failed (`error.code`, e.g. `CREW_AGENT_FAILED`, `CREW_TOOL_LOOP`). */
      error: CrewRunError;
      /** The state up to the failure: pass it to a next run to carry on from there. */
      state: CrewState;
    }
  | {
      /** The run ended without an error; the stream's last event. */
      type: 'end';
      /** The run's result, as `execute` returns it. */
      response: CrewResponse;
    };

/**
 * Options of one run (`CrewExecutor.execute` / `executeStream`). Unknown keys are rejected
 * (`CREW_ARGUMENT_INVALID`), so a misspelt `signal` does not pass silently.
 *
 * @example
 * ```ts
 * const controller = new AbortController();
 * await executor.execute('go on', { state, resumeAgentId: 'reviewer', abortSignal: controller.signal });
 * ```
 */
export interface CrewRunOptions {
  /** The state a previous run returned; default: a fresh conversation. Never modified. */
  state?: CrewState;
  /** Start at this agent (wins over `state.pausedAgentId` and the entry point). */
  resumeAgentId?: string;
  /** Stops the run: the model call or tool in flight is abandoned and the run fails with `ABORTED`. */
  abortSignal?: AbortSignal;
  /**
   * Ends the run at its next **safe point** — before a model call, or before a tool call starts —
   * never inside a call: a tool in flight finishes (its own abort signal is not fired) and its
   * result is recorded. The run then fails with `ABORTED`, and the error's `state` holds everything
   * completed up to the safe point (replies with their tool calls and those calls' results; calls
   * of a reply not started yet are answered `Error: not run: the run was interrupted`). A Runner
   * passes it for `whenBusy: 'interrupt'`, so the merged turn's model sees that a tool already ran.
   */
  interruptSignal?: AbortSignal;
  /**
   * `executeStream` only: read each model reply as a stream (`streamChat`) and emit `text_delta`
   * events. Default `true`; `false` calls `generate` and emits no `text_delta`, as `execute`
   * does (for a consumer that wants the run's events but shows no text as it arrives).
   * `execute` ignores it.
   */
  textDeltas?: boolean;
  /**
   * Decisions on held tool calls (`CrewResponse.pendingApprovals`), by approval `id`. With a
   * `state` whose batch is pending, approved calls run, denied ones are answered
   * `denied: <reason>`, and once every call of the batch is answered the agent's turn
   * continues with its next model call (the same run: `max_rounds`, `max_handoffs`,
   * `max_tool_rounds` and the agent path go on). Decisions for some calls only: those are
   * applied and the run ends `awaiting_approval` again. While a batch is pending, `input` is
   * ignored (not appended to the history).
   *
   * An id that was never issued (or is no longer remembered) fails the run with
   * `CREW_APPROVAL_UNKNOWN` and nothing is applied; a second decision for an id already decided
   * is ignored with a `warning` event.
   */
  approvals?: readonly ApprovalDecision[];
  /**
   * Makes a state durable before an approved tool call runs (the durable claim). The executor
   * records the call as `started` in the state, then awaits `commit(state)`, and only then calls
   * the tool: a call recorded as `started` never runs again, whatever happens afterwards (a
   * `started` call without a recorded result is answered `outcome unknown: not retried`). In a
   * run that resumes after approval, the calls of later replies that need no approval are
   * claimed the same way before they run (the reply is held in the state's batch meanwhile), so
   * resuming from a commit never runs a call twice. Under a
   * Runner, `crewEngine` passes the turn's `ctx.commit`, which saves the session
   * (compare-and-set).
   *
   * If `commit` rejects (or throws), the tool does not run and the run fails with
   * `CREW_COMMIT_FAILED`, the rejection as `cause`; the error's `state` has the call approved but
   * not started.
   */
  commit?: (state: CrewState) => Promise<void>;
  /**
   * Where this run reads the time: each `PendingApproval.requestedAt` it issues. Default: the
   * executor's `clock` (`CrewExecutorOptions.clock`). For an engine that runs the crew for
   * another component with a clock of its own (a Runner's), so both write one time.
   */
  clock?: Clock;
  /**
   * The base of the run's tool-call keys: tool call n (from 0, in the order the run starts its
   * calls, or holds them for approval) gets `ToolContext.idempotencyKey` =
   * `<idempotencyKey>:<n>`, for downstream APIs that deduplicate (payments, email). A call held
   * for approval keeps its key (stored in its `PendingApproval.idempotencyKey`) when a later run
   * resumes it. Under a Runner, `crewEngine` passes `ctx.idempotencyKey('tool')`, so calls get
   * `<receiptId>:tool:<n>`, the same on every redelivery of the signal. Absent: tools get no
   * key. A non-string or empty value fails the run with `CREW_ARGUMENT_INVALID`.
   */
  idempotencyKey?: string;
}
