import { frozenJsonValue } from '@signalyard/core/internal';
import { sealedCause } from './session-cause.js';
import type {
  ApprovalSummary,
  ChatMessage,
  HandoffSummary,
  RunSummary,
  SessionCause,
  ToolCallSummary,
} from '@signalyard/core';

/**
 * What an engine turn did beyond its messages, gathered from the engine's own events as they
 * pass (`ctx.emit`): handoffs, tool calls, approval decisions, whether a parallel group or a
 * pipeline stage ran. Made on the first event worth keeping, so a turn that emits nothing pays
 * nothing. @internal
 */
export class TurnRecord {
  handoffs: HandoffSummary[] | undefined = undefined;
  toolCalls: ToolCallSummary[] | undefined = undefined;
  approvals: ApprovalSummary[] | undefined = undefined;
  partial: SessionCause['partial'] = undefined;

  /** Notes one engine event (any shape; unknown events are ignored). */
  note(event: { readonly type?: unknown } & Record<string, unknown>): void {
    switch (event.type) {
      case 'handoff':
        this.#handoff(event);
        return;
      case 'agent_response':
        this.#toolCalls(event);
        return;
      case 'parallel_start':
        this.partial = 'parallel_members';
        return;
      case 'stage_start':
        this.partial ??= 'pipeline_stage_calls';
        return;
      default:
        return;
    }
  }

  #handoff(e: Record<string, unknown>): void {
    const { from, to, signal, group, via } = e;
    if (typeof from !== 'string' || typeof to !== 'string') return;
    // A marker or transfer tool names its signal; a parallel member starting, its group; else how.
    const stands =
      typeof signal === 'string' ? signal : typeof group === 'string' ? group : typeof via === 'string' ? via : '';
    (this.handoffs ??= []).push({ from, to, signal: stands });
  }

  #toolCalls(e: Record<string, unknown>): void {
    const calls = e.toolCalls;
    if (!Array.isArray(calls)) return;
    const agentId = typeof e.agentId === 'string' ? e.agentId : undefined;
    for (const call of calls as unknown[]) {
      const c = call as { name?: unknown; arguments?: unknown } | null;
      if (typeof c?.name !== 'string') continue;
      const entry: ToolCallSummary =
        agentId === undefined
          ? { name: c.name, arguments: c.arguments }
          : { agentId, name: c.name, arguments: c.arguments };
      (this.toolCalls ??= []).push(entry);
    }
  }
}

/**
 * The visible reply of a turn's messages: `reply` when the engine said (a crew's reply with its
 * markers hidden), else the content of the last assistant message that asks for no tools.
 * @internal
 */
export function replyOf(reply: unknown, messages: readonly ChatMessage[] | undefined): string | undefined {
  if (typeof reply === 'string') return reply;
  if (messages === undefined) return undefined;
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i] as ChatMessage;
    if (m.role === 'assistant') return m.toolCalls !== undefined && m.toolCalls.length > 0 ? undefined : m.content;
  }
  return undefined;
}

/**
 * A final save's cause with its summary completed: what the turn did (`record`), its visible
 * `reply` and the FSM state after it (from the strategy `snapshot` saved). The cause is the
 * save's own (made for it by `signalCause`), so it is completed in place: no copies on the
 * Runner's hot path. A cause without a summary (a commit) is left as it is. @internal
 */
export function completeCause(
  cause: SessionCause,
  record: TurnRecord | undefined,
  reply: string | undefined,
  snapshot: Readonly<Record<string, unknown>>,
): SessionCause {
  const summary: { -readonly [K in keyof RunSummary]: RunSummary[K] } | undefined = cause.summary;
  // No summary (a commit), or completed already (the same cause saved again).
  if (summary === undefined || Object.isFrozen(summary)) return cause;
  const state = snapshot.current_state;
  if (typeof state === 'string') summary.fsmState = state;
  if (reply !== undefined) summary.reply = reply;
  if (record === undefined) {
    // Every member is a string or a marked value (the shared lists, the route): stores share it,
    // and the cause too when it is made of such values only.
    (cause as { summary?: RunSummary }).summary = frozenJsonValue(summary);
    return sealedCause(cause);
  }
  if (record.handoffs !== undefined) summary.handoffs = record.handoffs;
  if (record.toolCalls !== undefined) summary.toolCalls = record.toolCalls;
  if (record.approvals !== undefined) summary.approvals = record.approvals;
  if (record.partial !== undefined) (cause as { partial?: SessionCause['partial'] }).partial = record.partial;
  return cause;
}
