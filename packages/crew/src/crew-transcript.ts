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

/** The held reply of a paused batch, as the transcript places it (at `at` in the history). */
interface HeldReply {
  readonly agentId: string;
  readonly message: ChatMessage;
  readonly calls: readonly unknown[];
  readonly at: number;
}

/**
 * The visible conversation of a crew session (see `CrewExecutor.transcript`): `history` as the
 * crew keeps it, and `state`'s held approval batch (its reply and calls, not yet in the history),
 * in the order things happened: the held reply where it was produced (with the handoff that led
 * to it), messages sent during the wait after it; a parallel group's members each with a handoff
 * from the agent that started the group and their visible replies (`group` set).
 *
 * @throws CrewArgumentError `CREW_HISTORY_INVALID` when `history` is not a list of ChatMessages.
 * @internal
 */
export function crewTranscript(crew: CompiledCrew, history: unknown, state: unknown): TranscriptEntry[] {
  assertHistory(history);
  const writer = new TranscriptWriter(crew, history);
  const held = heldReply(crew, state);
  const heldAt = held === undefined ? -1 : Math.min(held.at, history.length);
  for (let i = 0; i <= history.length; i++) {
    if (i === heldAt) writer.held(held as HeldReply);
    const m = history[i];
    if (m !== undefined) writer.message(m);
  }
  return writer.entries;
}

/** Walks a crew history (and the held reply, where it goes), writing the transcript entries. */
class TranscriptWriter {
  readonly entries: TranscriptEntry[] = [];
  readonly #crew: CompiledCrew;
  readonly #results = new Map<string, ChatMessage>();
  /** The agent whose reply came last (`undefined` after a user message). */
  #speaker: string | undefined;
  /** How the run moves on after the last speaker's reply. */
  #via: Via | undefined;
  /** The parallel group the last reply started, whose collected results (a user message) come next. */
  #group: CompiledGroup | undefined;
  /** Whether a group's results came since the last reply: the run moves on even to the agent that started it. */
  #afterGroup = false;

  constructor(crew: CompiledCrew, history: readonly ChatMessage[]) {
    this.#crew = crew;
    for (const m of history) if (m.role === 'tool' && m.toolCallId !== undefined) this.#results.set(m.toolCallId, m);
  }

  #visible(content: string): string {
    return this.#crew.settings.hideSignals ? visibleText(content, this.#crew.markers) : content;
  }

  message(m: ChatMessage): void {
    if (m.role === 'user') {
      const group = this.#group;
      this.#group = undefined;
      if (group !== undefined && isGroupResults(group, m.content)) {
        this.#members(group, m.content);
        this.#afterGroup = true;
        return;
      }
      this.entries.push({ type: 'user', text: m.content });
      this.#speaker = undefined;
      this.#via = undefined;
    } else if (m.role === 'assistant') {
      const agent = this.#reply(m.name ?? '', m);
      for (const call of toolCallsOf(agent, m.toolCalls)) {
        const result = this.#results.get(call.id);
        const status = toolStatus(result?.content);
        this.entries.push({
          type: 'tool',
          call,
          status,
          ...(result !== undefined && { result: toolResult(status, result.content) }),
        });
      }
    }
  }

  /**
   * The reply a crew paused on for approval: its text, and each of its tool calls — answered, or
   * pending with its approval id. Its transfer calls are left out (the handoff shows once the
   * run goes on).
   */
  held(reply: HeldReply): void {
    const agent = this.#reply(reply.agentId, reply.message);
    reply.message.toolCalls?.forEach((call, i) => {
      if (agent?.transfers?.has(call.name) === true) return;
      const entry = isRecord(reply.calls[i]) ? reply.calls[i] : undefined;
      const done = entry?.status === 'done';
      const answered = done && typeof entry.content === 'string' ? entry.content : undefined;
      const status = done ? (entry.isError === true ? toolStatus(answered) : 'done') : 'pending_approval';
      const approval = entry?.status === 'held' && isRecord(entry.approval) ? entry.approval.id : undefined;
      this.entries.push({
        type: 'tool',
        call,
        status,
        ...(answered !== undefined && { result: toolResult(status, answered) }),
        ...(typeof approval === 'string' && { approvalId: approval }),
      });
    });
  }

  /** An agent's reply: the handoff that led to it, its visible text; returns the agent. */
  #reply(agentId: string, m: ChatMessage): CompiledAgent | undefined {
    const agent = this.#crew.agents.get(agentId);
    const speaker = this.#speaker;
    if (speaker !== undefined && (this.#afterGroup || speaker !== agentId))
      this.entries.push({ type: 'handoff', from: speaker, to: agentId, via: this.#via ?? 'signal' });
    this.#speaker = agentId;
    this.#afterGroup = false;
    const decision = agent === undefined ? undefined : decideHandoff(agent, m);
    this.#via = decision === undefined ? undefined : viaOf(decision);
    this.#group = decision?.kind === 'group' ? decision.group : undefined;
    const text = this.#visible(m.content);
    if (text !== '') this.entries.push({ type: 'assistant', agentId, text });
    return agent;
  }

  /**
   * A parallel group's members, as the live run showed them: a handoff from the agent that
   * started the group to each member (every member started), then each member's visible reply
   * from the collected results (the members that succeeded).
   */
  #members(group: CompiledGroup, content: string): void {
    const from = this.#speaker ?? '';
    for (const to of group.memberIds)
      this.entries.push({ type: 'handoff', from, to, via: 'parallel', group: group.name });
    for (const { agentId, reply } of memberReplies(group, content)) {
      const text = this.#visible(reply);
      if (text !== '') this.entries.push({ type: 'assistant', agentId, text, group: group.name });
    }
  }
}

/**
 * The members' replies in a group's collected results (`<member>: <reply>`, joined by a blank
 * line, in declaration order; see `aggregateResults`): each reply ends where the next member's
 * label starts. (A reply that itself holds a blank line followed by a later member's label is
 * cut there: the results message cannot tell them apart.)
 */
function memberReplies(group: CompiledGroup, content: string): { agentId: string; reply: string }[] {
  const ids = group.memberIds;
  const out: { agentId: string; reply: string }[] = [];
  let pos = 0;
  for (let i = 0; i < ids.length && pos < content.length; i++) {
    const id = ids[i] as string;
    const label = `${id}: `;
    if (!content.startsWith(label, pos)) continue;
    const start = pos + label.length;
    let end = content.length;
    for (let j = i + 1; j < ids.length; j++) {
      const next = content.indexOf(`\n\n${ids[j] as string}: `, start);
      if (next !== -1 && next < end) end = next;
    }
    out.push({ agentId: id, reply: content.slice(start, end) });
    pos = end + 2;
  }
  return out;
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

/** The reply a crew paused on for approval, from `state` (a state without a well-formed batch: none). */
function heldReply(crew: CompiledCrew, state: unknown): HeldReply | undefined {
  const approvals = isRecord(state) ? state.approvals : undefined;
  const batch = isRecord(approvals) ? approvals.batch : undefined;
  if (!isRecord(batch) || messageProblem(batch.message) !== undefined || typeof batch.agentId !== 'string')
    return undefined;
  if (!crew.agents.has(batch.agentId)) return undefined;
  const at = typeof batch.at === 'number' && Number.isSafeInteger(batch.at) && batch.at >= 0 ? batch.at : Infinity;
  const calls = Array.isArray(batch.calls) ? (batch.calls as unknown[]) : [];
  return { agentId: batch.agentId, message: batch.message as ChatMessage, calls, at };
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
