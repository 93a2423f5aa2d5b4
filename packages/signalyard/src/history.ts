import { frozenJsonCopy, frozenJsonHistory, frozenJsonValue, isJsonRecord } from '@signalyard/core/internal';
import type { ChatMessage, Signal } from '@signalyard/core';

/**
 * A message as the history keeps it: a deeply frozen copy with JSON's semantics (core's
 * `frozenJsonCopy`; tool calls and their arguments included), or the message as it is when JSON
 * alone can say what it stores (a `toJSON`, a class instance, a value JSON cannot hold: the save
 * reports what cannot be stored). A store (the memory store) shares a frozen message between the
 * versions it keeps instead of copying it with every save while it stays in the history; the
 * copy also isolates the history from later changes to the engine's objects.
 */
function keptMessage(message: ChatMessage): ChatMessage {
  if (isJsonRecord(message)) return message;
  return frozenJsonCopy(message) ?? message;
}

/** An empty history, frozen and marked (a new session's). */
export const NO_HISTORY: readonly ChatMessage[] = frozenJsonValue<ChatMessage[]>([]);

/**
 * A stored history as a session keeps it: the newest `max` messages ({@link trimHistory}), each
 * kept ({@link keptMessage}), in a list frozen and marked like {@link appendHistory}'s when every
 * message is.
 */
export function keptHistory(messages: readonly ChatMessage[], max: number): readonly ChatMessage[] {
  const kept = keptMessages(trimHistory(messages, max));
  return shareable(NO_HISTORY, kept) ? frozenJsonValue(kept) : kept;
}

/** `messages` as the history keeps them ({@link keptMessage}). */
export function keptMessages(messages: readonly ChatMessage[]): ChatMessage[] {
  const kept = new Array<ChatMessage>(messages.length);
  for (let i = 0; i < messages.length; i++) kept[i] = keptMessage(messages[i] as ChatMessage);
  return kept;
}

/**
 * The user message a signal adds to the history: a `user_message` whose payload is a string,
 * or has `text: string` (frozen, see {@link keptMessage}). Other signals add nothing.
 */
export function userMessageOf(signal: Signal): ChatMessage | undefined {
  const text = userTextOf(signal);
  if (text === undefined) return undefined;
  // Filled in from `{}` (room for four fields in the object itself) rather than a two-field literal:
  // the mark frozenJsonValue adds then fits in the object too (no extra property store per message).
  const message: { role?: 'user'; content?: string } = {};
  message.role = 'user';
  message.content = text;
  return frozenJsonValue(message as ChatMessage);
}

/** The text of the user message a signal adds to the history ({@link userMessageOf}), or `undefined`. */
export function userTextOf(signal: Signal): string | undefined {
  if (signal.kind !== 'user_message') return undefined;
  const payload = signal.payload;
  if (typeof payload === 'string') return payload;
  if (typeof payload === 'object' && payload !== null) {
    const text = (payload as { text?: unknown }).text;
    if (typeof text === 'string') return text;
  }
  return undefined;
}

/**
 * Keeps the newest `max` messages, never separating tool results from the assistant message
 * that asked for them: a cut that would start the history with orphaned `tool` messages drops
 * those too — unless that would leave nothing, in which case the whole group (the assistant's
 * tool call and its results) is kept, a little over `max`.
 */
export function trimHistory(history: readonly ChatMessage[], max: number): readonly ChatMessage[] {
  if (history.length <= max) return history;
  const cut = history.length - max;
  let start = cut;
  while (start < history.length && (history[start] as ChatMessage).role === 'tool') start++;
  if (start === history.length) {
    start = cut;
    while (start > 0 && (history[start] as ChatMessage).role === 'tool') start--;
  }
  return history.slice(start);
}

/**
 * `trimHistory([...history, ...added], max)`, built as one array: the history a signal's user
 * message or a turn's messages extend. Frozen (and shared by the stores) when it holds frozen
 * JSON records only, as most histories do; then linked to `history` when that is frozen too
 * (core's `frozenJsonHistory`).
 */
export function appendHistory(
  history: readonly ChatMessage[],
  added: ChatMessage | readonly ChatMessage[],
  max: number,
): readonly ChatMessage[] {
  // One message (a user message) is not wrapped in a list: no array made for it.
  const one = Array.isArray(added) ? undefined : (added as ChatMessage);
  const more: readonly ChatMessage[] = one === undefined ? (added as readonly ChatMessage[]) : NO_HISTORY;
  const addedCount = one === undefined ? more.length : 1;
  const total = history.length + addedCount;
  const start = total > max ? keptFrom(history, one, more, total, total - max) : 0;
  // A plain loop: slice and concat take a slow path on frozen lists.
  const kept = new Array<ChatMessage>(total - start);
  let n = 0;
  for (let i = start; i < history.length; i++) kept[n++] = history[i] as ChatMessage;
  if (one !== undefined) {
    if (start <= history.length) kept[n] = one; // the last slot
  } else for (let i = Math.max(0, start - history.length); i < more.length; i++) kept[n++] = more[i] as ChatMessage;
  const shared = one === undefined ? shareable(history, more) : isJsonRecord(one) && shareable(history, NO_HISTORY);
  if (!shared) return kept;
  // Extending a frozen history: linked to it, so the memory store logs the new one without comparing them.
  return isJsonRecord(history) ? frozenJsonHistory(kept, history, start) : frozenJsonValue(kept);
}

/**
 * Where the kept part of `history` + the added messages (`one`, or else `more`) starts when
 * `cut` of their `total` must go: as trimHistory, never at orphaned tool results, unless
 * nothing would be left.
 */
function keptFrom(
  history: readonly ChatMessage[],
  one: ChatMessage | undefined,
  more: readonly ChatMessage[],
  total: number,
  cut: number,
): number {
  let start = cut;
  while (start < total && isToolAt(history, one, more, start)) start++;
  if (start === total) {
    start = cut;
    while (start > 0 && isToolAt(history, one, more, start)) start--;
  }
  return start;
}

/** Whether message `i` of `history` + the added messages is a tool result (no closure made per call). */
function isToolAt(
  history: readonly ChatMessage[],
  one: ChatMessage | undefined,
  more: readonly ChatMessage[],
  i: number,
): boolean {
  const message = i < history.length ? history[i] : (one ?? more[i - history.length]);
  return (message as ChatMessage).role === 'tool';
}

/**
 * Whether every message of `history` and `added` is a frozen JSON record: then the list they make
 * is frozen and marked too (core's `frozenJsonValue`), and a store shares it whole instead of
 * copying it message by message with every save. A marked `history` needs no look inside.
 */
function shareable(history: readonly ChatMessage[], added: readonly ChatMessage[]): boolean {
  // Indexed loops: no iterator object made per call.
  for (let i = 0; i < added.length; i++) if (!isJsonRecord(added[i] as ChatMessage)) return false;
  if (isJsonRecord(history)) return true;
  for (let i = 0; i < history.length; i++) if (!isJsonRecord(history[i] as ChatMessage)) return false;
  return true;
}
