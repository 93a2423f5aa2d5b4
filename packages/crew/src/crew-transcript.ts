import { describeValue, type ChatMessage, type ToolCall, type TranscriptEntry } from '@signalyard/core';
import { isRecord } from '@signalyard/core/internal';
import type { CompiledAgent, CompiledCrew, CompiledGroup } from './compiled-crew.js';
import { messageProblem } from './crew-history.js';
import { CrewArgumentError } from './errors/crew-argument-error.js';
import { decideHandoff, type HandoffDecision } from './handoff-decision.js';
import { visibleText } from './signal-hider.js';

// A crew conversation as people saw it (core's TranscriptEntry list), from the history the crew
// keeps: what a chat page shows after a reload. The crew's internal messages — tool results,
// a parallel group's collected results, the answers to transfer calls — are not shown as text;
// a transfer call is shown as the handoff it made, never as a tool.

/** How the run moved on from one speaker to the next. */
type Via = 'signal' | 'parallel' | 'fallback';

/**
 * The visible conversation of a crew session (see `CrewExecutor.transcript`): `history` as the
 * crew keeps it, and `state`'s held approval batch (its reply and calls, not yet in the history).
 *
 * @throws CrewArgumentError `CREW_HISTORY_INVALID` when `history` is not a list of ChatMessages.
 * @internal
 */
export function crewTranscript(crew: CompiledCrew, history: unknown, state: unknown): TranscriptEntry[] {
  assertHistory(history);
  const visible = (content: string): string =>
    crew.settings.hideSignals ? visibleText(content, crew.markers) : content;
  const entries: TranscriptEntry[] = [];
  const results = new Map<string, ChatMessage>();
  for (const m of history) if (m.role === 'tool' && m.toolCallId !== undefined) results.set(m.toolCallId, m);
  let speaker: string | undefined;
  // How the run moves on after the last speaker's reply; `group`: the parallel group that reply
  // started, whose collected results (a user message) come next and are left out.
  let via: Via | undefined;
  let group: CompiledGroup | undefined;
  let afterGroup = false;
  for (const m of history) {
    if (m.role === 'user') {
      if (group !== undefined && isGroupResults(group, m.content)) {
        afterGroup = true;
      } else {
        entries.push({ type: 'user', text: m.content });
        speaker = undefined;
        via = undefined;
      }
      group = undefined;
    } else if (m.role === 'assistant') {
      const agentId = m.name ?? '';
      const agent = crew.agents.get(agentId);
      // After a group the run moves on even to the agent that started it.
      if (speaker !== undefined && (afterGroup || speaker !== agentId))
        entries.push({ type: 'handoff', from: speaker, to: agentId, via: via ?? 'signal' });
      speaker = agentId;
      afterGroup = false;
      const decision = agent === undefined ? undefined : decideHandoff(agent, m);
      via = decision === undefined ? undefined : viaOf(decision);
      group = decision?.kind === 'group' ? decision.group : undefined;
      const text = visible(m.content);
      if (text !== '') entries.push({ type: 'assistant', agentId, text });
      for (const call of toolCallsOf(agent, m.toolCalls)) {
        const result = results.get(call.id);
        const status = toolStatus(result?.content);
        entries.push({
          type: 'tool',
          call,
          status,
          ...(result !== undefined && { result: toolResult(status, result.content) }),
        });
      }
    }
  }
  return [...entries, ...heldBatchEntries(crew, state, visible)];
}

/**
 * How the run moved on after a reply that decided `decision`, as the crew moves on: a handoff by
 * a signal (marker or transfer tool), after a parallel group its `next_agent` (else the
 * fallback), or the fallback; `undefined` for a reply that did not end the agent's turn (a tool
 * round) or that ended the run.
 */
function viaOf(decision: HandoffDecision): Via | undefined {
  switch (decision.kind) {
    case 'handoff':
      return 'signal';
    case 'group':
      return decision.group.next === undefined ? 'fallback' : 'parallel';
    case 'unrouted':
      return 'fallback';
    default:
      return undefined;
  }
}

/** Whether `content` is `group`'s collected results: its members' replies, each labelled `<member>: `. */
function isGroupResults(group: CompiledGroup, content: string): boolean {
  return group.memberIds.some((id) => content.startsWith(`${id}: `));
}

/** The calls of a reply that a person sees as tool calls: all but the agent's transfer calls. */
function toolCallsOf(agent: CompiledAgent | undefined, calls: readonly ToolCall[] | undefined): readonly ToolCall[] {
  if (calls === undefined) return [];
  const transfers = agent?.transfers;
  return transfers === undefined ? calls : calls.filter((c) => !transfers.has(c.name));
}

/** How a tool call ended, from its result message's text (`undefined`: no result yet). */
function toolStatus(content: string | undefined): 'done' | 'error' | 'denied' | 'pending_approval' {
  if (content === undefined) return 'pending_approval';
  if (content === 'denied' || content.startsWith('denied: ')) return 'denied';
  return content.startsWith('Error:') || content.startsWith('outcome unknown') ? 'error' : 'done';
}

/**
 * What a tool returned, from its result message's text: the crew sends an object or array result
 * to the model as JSON, so a `done` call's JSON object or array text is parsed back — a reloaded
 * transcript then shows the same value the live stream showed. Any other text (a string result,
 * an error, a denial) stays as it is.
 */
function toolResult(status: string, content: string): unknown {
  if (status !== 'done' || !(content.startsWith('{') || content.startsWith('['))) return content;
  try {
    return JSON.parse(content) as unknown;
  } catch {
    return content; // a string result that only looks like JSON
  }
}

/**
 * The reply a crew paused on for approval (held in its state, not yet in the history): its text,
 * and each of its tool calls — answered, or pending with its approval id. Its transfer calls are
 * left out (the handoff shows once the run goes on). A state without a well-formed batch gives
 * nothing.
 */
function heldBatchEntries(crew: CompiledCrew, state: unknown, visible: (content: string) => string): TranscriptEntry[] {
  const approvals = isRecord(state) ? state.approvals : undefined;
  const batch = isRecord(approvals) ? approvals.batch : undefined;
  if (!isRecord(batch) || messageProblem(batch.message) !== undefined || typeof batch.agentId !== 'string') return [];
  const message = batch.message as ChatMessage;
  const calls = Array.isArray(batch.calls) ? (batch.calls as unknown[]) : [];
  const agentId = batch.agentId;
  const agent = crew.agents.get(agentId);
  const entries: TranscriptEntry[] = [];
  const text = visible(message.content);
  if (text !== '') entries.push({ type: 'assistant', agentId, text });
  message.toolCalls?.forEach((call, i) => {
    if (agent?.transfers?.has(call.name) === true) return;
    const held = isRecord(calls[i]) ? calls[i] : undefined;
    const done = held?.status === 'done';
    const answered = done && typeof held.content === 'string' ? held.content : undefined;
    const status = done ? (held.isError === true ? toolStatus(answered) : 'done') : 'pending_approval';
    const approval = held?.status === 'held' && isRecord(held.approval) ? held.approval.id : undefined;
    entries.push({
      type: 'tool',
      call,
      status,
      ...(answered !== undefined && { result: toolResult(status, answered) }),
      ...(typeof approval === 'string' && { approvalId: approval }),
    });
  });
  return entries;
}

function assertHistory(history: unknown): asserts history is readonly ChatMessage[] {
  if (!Array.isArray(history))
    throw new CrewArgumentError({
      code: 'CREW_HISTORY_INVALID',
      message: `Invalid history ${describeValue(history)}: expected a list of ChatMessages`,
      value: history,
    });
  for (let i = 0; i < history.length; i++) {
    const problem = messageProblem(history[i]);
    if (problem !== undefined)
      throw new CrewArgumentError({
        code: 'CREW_HISTORY_INVALID',
        message: `Invalid history[${i}]: ${problem}`,
        value: history[i],
      });
  }
}
