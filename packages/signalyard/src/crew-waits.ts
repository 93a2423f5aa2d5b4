import type { ChatMessage } from '@signalyard/core';
import type { CrewApprovalState } from '@signalyard/crew';

/**
 * A held reply that resumed after messages arrived during the wait. The session's history is
 * append-only for an engine, so the reply and its tool results were appended after those
 * messages (history may be out of order, for the model); the transcript puts them back where the
 * reply was produced (decisions-wave3.md §3). `call`: the id of the reply's first tool call;
 * `messages`: how many messages came in while it was held.
 * @internal
 */
export interface CrewWait {
  readonly call: string;
  readonly messages: number;
}

/** How many waits a crew session remembers (older held replies long since scrolled away). */
const WAITS_KEPT = 64;

/**
 * The waits of a crew engine state after a turn that resumed a held batch: `waits` plus this
 * one when the batch was appended (`after` holds no batch any more) after `waited` messages.
 * @internal
 */
export function waitsAfter(
  waits: readonly CrewWait[] | undefined,
  before: CrewApprovalState | undefined,
  after: CrewApprovalState | undefined,
  waited: number,
): readonly CrewWait[] | undefined {
  const call = before?.batch?.message.toolCalls?.[0]?.id;
  if (call === undefined || after?.batch !== undefined || waited <= 0) return waits;
  const next = [...(waits ?? []), { call, messages: waited }];
  return next.length > WAITS_KEPT ? next.slice(next.length - WAITS_KEPT) : next;
}

/** Whether `value` is a list of {@link CrewWait}s (a stored state is read defensively). */
function isWaits(value: unknown): value is readonly CrewWait[] {
  return (
    Array.isArray(value) &&
    value.every(
      (w: unknown) =>
        typeof w === 'object' &&
        w !== null &&
        typeof (w as CrewWait).call === 'string' &&
        Number.isSafeInteger((w as CrewWait).messages) &&
        (w as CrewWait).messages > 0,
    )
  );
}

/**
 * `history` in the order things happened: each resumed reply (with its tool results) moved back
 * before the messages that arrived while it was held. A wait whose reply is no longer in the
 * history (trimmed), or not after enough messages, changes nothing.
 * @internal
 */
export function chronologicalHistory(history: readonly ChatMessage[], waits: unknown): readonly ChatMessage[] {
  if (!isWaits(waits) || waits.length === 0) return history;
  const out = [...history];
  for (const wait of waits) {
    const at = out.findLastIndex((m) => m.role === 'assistant' && m.toolCalls?.[0]?.id === wait.call);
    if (at < wait.messages) continue;
    let end = at + 1;
    while (out[end]?.role === 'tool') end++;
    const moved = out.splice(at - wait.messages, wait.messages);
    out.splice(end - wait.messages, 0, ...moved);
  }
  return out;
}
