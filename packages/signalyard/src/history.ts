import type { ChatMessage, Signal } from '@signalyard/core';

/**
 * The user message a signal adds to the history: a `user_message` whose payload is a string,
 * or has `text: string`. Other signals add nothing.
 */
export function userMessageOf(signal: Signal): ChatMessage | undefined {
  if (signal.kind !== 'user_message') return undefined;
  const payload = signal.payload;
  if (typeof payload === 'string') return { role: 'user', content: payload };
  if (typeof payload === 'object' && payload !== null && typeof (payload as { text?: unknown }).text === 'string') {
    return { role: 'user', content: (payload as { text: string }).text };
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
