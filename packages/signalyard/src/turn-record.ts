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
  /** The visible reply, once the turn has ended (see {@link replyOf}). */
  reply: string | undefined = undefined;
  partial: SessionCause['partial'] = undefined;

  /** Whether it holds anything a summary shows. */
  get empty(): boolean {
    return (
      this.handoffs === undefined &&
      this.toolCalls === undefined &&
      this.approvals === undefined &&
      this.reply === undefined &&
      this.partial === undefined
    );
  }

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
 * A final save's cause with its summary completed: what the turn did (`record`) and the FSM state
 * after it (from the strategy `snapshot` saved). A cause without a summary (a commit) is returned
 * as it is, as is one with nothing to add. @internal
 */
export function completedCause(
  cause: SessionCause,
  record: TurnRecord | undefined,
  snapshot: { readonly [k: string]: unknown },
): SessionCause {
  const summary = cause.summary;
  if (summary === undefined) return cause;
  const state = snapshot.current_state;
  const fsmState = typeof state === 'string' ? state : undefined;
  if (fsmState === undefined && (record === undefined || record.empty)) return cause;
  const done: { -readonly [K in keyof RunSummary]: RunSummary[K] } = { ...summary };
  if (record !== undefined) {
    if (record.handoffs !== undefined) done.handoffs = record.handoffs;
    if (record.toolCalls !== undefined) done.toolCalls = record.toolCalls;
    if (record.approvals !== undefined) done.approvals = record.approvals;
    if (record.reply !== undefined) done.reply = record.reply;
  }
  if (fsmState !== undefined) done.fsmState = fsmState;
  return record?.partial === undefined ? { ...cause, summary: done } : { ...cause, summary: done, partial: record.partial };
}
