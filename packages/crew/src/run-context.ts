import type { ChatMessage, Clock, PendingApproval } from '@signalyard/core';
import type { AgentTools } from './mcp-tools.js';
import type { CompiledAgent, CompiledCrew, CompiledTransfer } from './compiled-crew.js';
import type { CrewEvent, CrewResponse } from './crew-events.js';
import { abortedError, type AbortRace } from '@signalyard/core/internal';
import type { CrewApprovalState, CrewState, CrewToolBatch } from './crew-state.js';
import type { CrewRunError } from './errors/crew-run-error.js';

/** Where events go; `undefined` when nobody listens (`execute`), so no event is even built. @internal */
export type Emit = ((event: CrewEvent) => void) | undefined;

/** How a run ended: the final event's payload. @internal */
export type RunResult =
  { readonly ok: true; readonly response: CrewResponse } | { readonly ok: false; readonly error: CrewRunError };

/** A run's agent path (see the `text_delta` event); `undefined` when the run emits no text deltas. @internal */
export type Path = readonly string[] | undefined;

/** A turn that could not make the model call it needed: `max_rounds` is reached. @internal */
export const OUT_OF_ROUNDS: unique symbol = Symbol('out of rounds');

/** A turn that paused: calls of its last reply are held for approval (`run.approvals.batch`). @internal */
export const AWAITING: unique symbol = Symbol('awaiting approval');

/** The approval bookkeeping of a run (the mutable form of `CrewApprovalState`). @internal */
export interface ApprovalBook {
  issued: number;
  /** Decided approval ids, oldest first, at most {@link DECIDED_KEPT}. */
  readonly decided: string[];
  /** The batch the run paused on (or resumed), until every call of it is answered. */
  batch: CrewToolBatch | undefined;
}

/** How many decided approval ids a state remembers. @internal */
export const DECIDED_KEPT = 256;

/** The per-run state (never stored on the executor: one of these per run). @internal */
export interface Run {
  readonly crew: CompiledCrew;
  readonly emit: Emit;
  /**
   * The main loop's agent path (see the `text_delta` event), extended on every handoff;
   * `undefined` when models are not streamed (`execute`, or `textDeltas: false`).
   */
  path: Path;
  /** The main loop's agent path, always kept (the state carries it across an approval pause). */
  readonly chain: string[];
  readonly history: ChatMessage[];
  readonly abortSignal: AbortSignal;
  /** Races the main loop's model calls against `abortSignal` (one listener for the whole run). */
  readonly race: AbortRace;
  modelCalls: number;
  handoffs: number;
  /** The agent whose reply `lastContent` is (after a group: the agent that started it). */
  lastAgentId: string;
  lastContent: string;
  /** The main loop's current agent (the one a run error names). */
  agentId: string;
  /** `CrewState.lastAgentId` of the state this run returns: the given state's until the run ends (`resumeAt: 'last_agent'` only). */
  resumeAgentId: string | undefined;
  readonly approvals: ApprovalBook;
  /** The approvals this run requested (when it paused on a batch), for the `approval_requested` event. */
  requested: readonly PendingApproval[] | undefined;
  /**
   * Whether the run resumed a batch paused for approval: its tool calls — allowed ones too — are
   * then claimed with `commit` before they run.
   */
  readonly resumed: boolean;
  /** `opts.interruptSignal`: ends the run at its next safe point (see {@link checkInterrupt}). */
  readonly interruptSignal: AbortSignal | undefined;
  /** `opts.commit`: makes a claim durable before an approved call runs. */
  readonly commit: ((state: CrewState) => Promise<void>) | undefined;
  /** Where the run reads the time (`PendingApproval.requestedAt`). */
  readonly clock: Clock;
  /** `opts.idempotencyKey`: tool call n of the run gets `<idempotencyKey>:<n>`; `undefined`: no keys. */
  readonly idempotencyKey: string | undefined;
  /** How many tool calls took a key so far (the next call's `n`). */
  toolCalls: number;
  /** The tools of the agents with `mcp:` views, resolved at the start of the run; undefined when none. */
  mcpTools: ReadonlyMap<string, AgentTools> | undefined;
}

/**
 * Where one agent turn runs: the main loop's lane (the run's history, abort signal and agent
 * path) or a parallel group member's (its own copy of the history, its own signal, `group` set).
 * @internal
 */
export interface Lane {
  readonly agent: CompiledAgent;
  /** The history the turn's model calls see and its replies and tool results are appended to. */
  readonly history: ChatMessage[];
  readonly abortSignal: AbortSignal;
  /** The parallel group of a member's turn; `undefined` in the main loop. */
  readonly group: string | undefined;
  /** The agent path its `text_delta`s carry; `undefined` when models are not streamed. */
  readonly path: Path;
}

/** The main loop's lane for `agent`'s turn: the run's history, abort signal and agent path. @internal */
export function mainLane(run: Run, agent: CompiledAgent): Lane {
  return { agent, history: run.history, abortSignal: run.abortSignal, group: undefined, path: run.path };
}

/**
 * The transfer tools of `lane`'s turn: the agent's, in the main loop; none for a parallel member
 * (a member's reply hands off nothing: the group's `next_agent` does).
 * @internal
 */
export function laneTransfers(lane: Lane): ReadonlyMap<string, CompiledTransfer> | undefined {
  return lane.group === undefined ? lane.agent.transfers : undefined;
}

/** `path` with `id` appended (a new frozen list: events already emitted keep theirs). @internal */
export function extend(path: Path, id: string): Path {
  return path === undefined ? undefined : Object.freeze([...path, id]);
}

/**
 * A safe point of the main loop — before a model call, before a tool call starts: throws
 * `ABORTED` when the run's `interruptSignal` fired (never inside a call: the tool's own abort
 * signal is not fired). The error's state holds everything completed so far.
 * @internal
 */
export function checkInterrupt(run: Run): void {
  const signal = run.interruptSignal;
  if (signal?.aborted === true) throw abortedError(signal);
}

/** `signal.aborted`, read through a call: it changes across awaits, which narrowing does not see. @internal */
export function isAborted(signal: AbortSignal): boolean {
  return signal.aborted;
}

/**
 * The run's state as a {@link CrewState}: its history, the agent a `last_agent` crew resumes at,
 * and, once an approval was ever issued, the approval bookkeeping. With `copy`, nothing of it is shared with the run (for `commit`, which may
 * keep the object while the run goes on); otherwise the history array is the run's own (the run
 * is over).
 * @internal
 */
export function stateOf(run: Run, pausedAgentId?: string, copy = false): CrewState {
  const state: CrewState = { history: copy ? run.history.slice() : run.history };
  if (pausedAgentId !== undefined) state.pausedAgentId = pausedAgentId;
  if (run.resumeAgentId !== undefined) state.lastAgentId = run.resumeAgentId;
  const approvals = approvalStateOf(run.approvals);
  if (approvals !== undefined) state.approvals = approvals;
  return state;
}

/**
 * `book` as a `CrewApprovalState` sharing nothing mutable with it; `undefined` while no approval
 * was ever issued (a state without approvals stays as it was).
 * @internal
 */
export function approvalStateOf(book: ApprovalBook): CrewApprovalState | undefined {
  if (book.issued === 0 && book.decided.length === 0 && book.batch === undefined) return undefined;
  const approvals: CrewApprovalState = { issued: book.issued, decided: book.decided.slice() };
  if (book.batch !== undefined) approvals.batch = copyBatch(book.batch);
  return approvals;
}

/** A batch sharing nothing mutable with `batch` (its messages and approvals are never changed, so they are shared). */
function copyBatch(batch: CrewToolBatch): CrewToolBatch {
  return {
    agentId: batch.agentId,
    message: batch.message,
    calls: batch.calls.map((c) => ({ ...c })),
    at: batch.at,
    run: { ...batch.run, path: batch.run.path.slice() },
  };
}

/**
 * The next tool call's `ToolContext.idempotencyKey`, `<opts.idempotencyKey>:<n>` (n from 0, in the
 * order calls start or are held); `undefined` when the run has no key.
 * @internal
 */
export function nextIdempotencyKey(run: Run): string | undefined {
  if (run.idempotencyKey === undefined) return undefined;
  return `${run.idempotencyKey}:${String(run.toolCalls++)}`;
}
