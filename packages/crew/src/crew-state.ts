import type { ChatMessage, PendingApproval } from '@signalyard/core';

/**
 * What a crew remembers between runs: the shared history, after a `paused` run the agent the
 * next run starts at (and, with `resumeAt: 'last_agent'`, the agent whose reply ended the run),
 * and the approval bookkeeping. Plain JSON (as long as the tool-call
 * arguments and results are): store it anywhere (a checkpoint store, a session) and pass it back
 * as `opts.state`; `JSON.parse(JSON.stringify(state))` resumes identically.
 *
 * The executor never changes a state it is given: every run returns a new one.
 *
 * @example
 * ```ts
 * const saved = JSON.stringify(response.state);                        // e.g. into a checkpoint store
 * const state: CrewState = JSON.parse(saved);
 * await executor.execute('next message', { state });                   // resumes at state.pausedAgentId, if set
 * ```
 */
export interface CrewState {
  /**
   * Every message of the conversation so far, untrimmed (trimming applies to model requests
   * only). While approvals are pending, the assistant message carrying the held calls and the
   * results of its calls are not here but in `approvals.batch`: they join the history as one
   * block when the batch completes.
   */
  history: ChatMessage[];
  /** Set when the run ended `paused`: the agent the next run with this state starts at. */
  pausedAgentId?: string;
  /**
   * With `settings.resumeAt: 'last_agent'`: the agent whose reply ended the run, where the next
   * run with this state starts (unless it is paused elsewhere or holds an approval batch). Absent
   * when the next run starts at the entry point: the run ended at a terminal agent
   * (`is_terminal`) or at a `max_*` limit — and always with `resumeAt: 'entry'`.
   */
  lastAgentId?: string;
  /** Approval ids issued and decided, and the tool-call batch a run paused on. Absent until a call is held. */
  approvals?: CrewApprovalState;
}

/**
 * The approval bookkeeping of a {@link CrewState} (JSON). Written by the executor; a caller
 * only stores it and passes it back.
 */
export interface CrewApprovalState {
  /** How many approval ids the executor has issued in this conversation; the next is `ap-<issued + 1>`. */
  issued: number;
  /**
   * The most recently decided approval ids (at most 256, oldest first): a decision for one of
   * them is ignored with a `warning` event; an id neither here nor held is `CREW_APPROVAL_UNKNOWN`.
   */
  decided: string[];
  /** The tool calls of the model reply the run paused on, until every one of them is answered. */
  batch?: CrewToolBatch;
}

/**
 * One model reply's tool calls, held out of the history until every call is answered (then the
 * reply and its results are appended as one block, so a tool call is never separated from its
 * results), with what the run needs to continue across the pause.
 */
export interface CrewToolBatch {
  /** The agent whose reply this is. */
  agentId: string;
  /** The assistant message carrying the calls (`toolCalls` set). */
  message: ChatMessage;
  /** One entry per call of `message.toolCalls`, in the same order. */
  calls: CrewBatchCall[];
  /** `history.length` when the run paused: the block goes there; messages added later move after it. */
  at: number;
  /** The run's counts and agent path, continued by the resuming run (limits span the pause). */
  run: CrewRunProgress;
}

/**
 * One call of a {@link CrewToolBatch}:
 *
 * - `held`: waiting for a person's decision (`approval` is the request);
 * - `approved`: approved, not yet started;
 * - `started`: claimed — the tool may have run; never run again (without a result it is
 *   answered `outcome unknown: not retried`);
 * - `done`: answered; `content` is the `tool` message text (`isError` for an error, a denial, an
 *   unknown outcome).
 */
export interface CrewBatchCall {
  /** Where the call stands (see above). */
  status: 'held' | 'approved' | 'started' | 'done';
  /** Set for a call that was held for approval (whatever happened to it since). */
  approval?: PendingApproval;
  /** The `tool` message content, once `done`. */
  content?: string;
  /** Whether `content` reports an error (once `done`). */
  isError?: boolean;
}

/** How far a run had got when it paused for approval (see {@link CrewToolBatch}). */
export interface CrewRunProgress {
  /** Model calls made so far (against `max_rounds`). */
  modelCalls: number;
  /** Handoffs made so far (against `max_handoffs`). */
  handoffs: number;
  /** Tool rounds of the current agent turn, the paused one included (against `max_tool_rounds`). */
  toolRounds: number;
  /** The run's agent path from its first agent to the paused one (see the `text_delta` event). */
  path: string[];
}
