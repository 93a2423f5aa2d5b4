import type { ChatMessage, TranscriptEntry } from '@signalyard/core';

/**
 * The transcript of an agent whose engine has no `transcript`: the user and assistant messages of
 * its history, as they are (an assistant message's `name` as its agent, else the session's).
 * @internal
 */
export function defaultTranscript(history: readonly ChatMessage[], agentId: string): TranscriptEntry[] {
  const entries: TranscriptEntry[] = [];
  for (const m of history) {
    if (m.role === 'user') entries.push({ type: 'user', text: m.content });
    else if (m.role === 'assistant' && m.content !== '')
      entries.push({ type: 'assistant', agentId: m.name ?? agentId, text: m.content });
  }
  return entries;
}
