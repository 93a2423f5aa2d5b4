// Sessions written straight into a store, as a Runner would have saved them: every version a
// `SessionCheckpointV1` with its `cause`.
import type { CheckpointStore, PendingApproval, SessionCheckpointV1 } from '@signalyard/core';

/** A pending approval, as a crew's tool policy leaves one. */
export const PENDING: PendingApproval = {
  id: 'ap-1',
  toolCallId: 'call-1',
  toolName: 'refund',
  arguments: { amount: 40 },
  agentId: 'support',
  requestedAt: '2025-03-01T10:00:03.000Z',
};

/** The four versions of `agent:support:main`, oldest first. */
export const SUPPORT_VERSIONS: readonly SessionCheckpointV1[] = [
  {
    v: 1,
    agentId: 'support',
    strategy: { type: 'fsm', current_state: 'open' },
    history: [
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: 'hi, how can I help?', name: 'support' },
    ],
    engine: null,
    cause: {
      at: '2025-03-01T10:00:01.000Z',
      signal: { kind: 'user_message', text: 'hello' },
      status: 'completed',
      tier: 'strategy',
      routeName: 'greet',
    },
  },
  {
    v: 1,
    agentId: 'support',
    strategy: { type: 'fsm', current_state: 'in_progress' },
    history: [
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: 'hi, how can I help?', name: 'support' },
      { role: 'user', content: 'refund my order\nplease' },
    ],
    engine: { step: 2 },
    pendingApprovals: [PENDING],
    cause: {
      at: '2025-03-01T10:00:02.000Z',
      signal: { kind: 'user_message', text: 'refund my order\nplease' },
      status: 'paused',
      tier: 'agent',
      routeName: 'refund',
    },
  },
  {
    v: 1,
    agentId: 'support',
    strategy: { type: 'fsm', current_state: 'in_progress' },
    history: [
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: 'hi, how can I help?', name: 'support' },
      { role: 'user', content: 'refund my order\nplease' },
      { role: 'tool', content: 'refunded', toolCallId: 'call-1' },
    ],
    engine: { step: 3 },
    cause: {
      at: '2025-03-01T10:00:03.000Z',
      signal: { kind: 'tool_approval' },
      approvals: [{ id: 'ap-1', approved: true, by: 'ann' }],
      status: 'completed',
      tier: 'plugin',
    },
  },
  {
    v: 1,
    agentId: 'support',
    strategy: { type: 'fsm', current_state: 'resolved' },
    history: [
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: 'hi, how can I help?', name: 'support' },
      { role: 'user', content: 'refund my order\nplease' },
      { role: 'tool', content: 'refunded', toolCallId: 'call-1' },
      { role: 'user', content: 'thanks' },
      { role: 'assistant', content: 'done: 40 refunded', name: 'support' },
    ],
    engine: { step: 4 },
    // A field a newer release writes: every fork and rewind must keep it.
    future: { note: 'kept' },
    cause: {
      at: '2025-03-01T10:00:04.000Z',
      signal: { kind: 'user_message', text: 'thanks' },
      merged: 2,
      status: 'completed',
      tier: 'strategy',
      routeName: 'close',
    },
  } as SessionCheckpointV1,
];

/** Saves `versions` of `key` one after the other; resolves with the last version number. */
export async function seed(
  store: CheckpointStore,
  key: string,
  versions: readonly SessionCheckpointV1[] = SUPPORT_VERSIONS,
): Promise<number> {
  let version = 0;
  for (const data of versions) version = await store.save(key, data, version);
  return version;
}

/** A one-version session of `agentId`. */
export function sessionOf(agentId: string, text = 'hi'): SessionCheckpointV1 {
  return {
    v: 1,
    agentId,
    strategy: { type: 'direct' },
    history: [{ role: 'user', content: text }],
    engine: null,
    cause: { at: '2025-03-01T09:00:00.000Z', signal: { kind: 'user_message', text }, status: 'completed' },
  };
}

/** Every ISO-8601 time in `text` replaced by a placeholder of the same width (tables stay aligned). */
export const withoutTimes = (text: string): string =>
  text.replace(/\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z/g, 'YYYY-MM-DDTHH:MM:SS.sssZ');
