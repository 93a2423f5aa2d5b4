// The shapes of session keys, in a file of their own so that the codec (which formats and parses
// them) and the factories (which build and validate them with the codec) do not import each other.
/**
 * How direct messages are grouped into sessions.
 *
 * - `'main'`: every DM collapses into the agent's main session (single-user setups).
 * - `'per-peer'` (the default): one session per person, shared across channels
 *   (`agent:{agent}:dm:{peer}`).
 * - `'per-channel-peer'`: one session per person per channel (`agent:{agent}:{channel}:dm:{peer}`).
 */
export type DmScope = 'main' | 'per-peer' | 'per-channel-peer';

/** The kind of a group-like peer: a chat group, a broadcast channel, or a thread. */
export type PeerKind = 'group' | 'channel' | 'thread';

/** The kinds of task sessions. (`'dm'` is deliberately not one: it would collide with DM keys.) */
export type TaskType = 'cron' | 'webhook' | 'scheduled';

/**
 * A channel-aware conversation identity, in one of six variants. Build keys with the
 * {@link SessionKey} factories (which normalise and validate), turn them into strings with
 * {@link formatSessionKey} and back with {@link parseSessionKey}. Keys are frozen plain objects.
 *
 * | kind | string |
 * |---|---|
 * | `main` | `agent:{agent}:{mainKey}` |
 * | `direct_message`, per-peer | `agent:{agent}:dm:{peer}` (the channel is kept on the object only) |
 * | `direct_message`, per-channel-peer | `agent:{agent}:{channel}:dm:{peer}` |
 * | `group` | `agent:{agent}:{channel}:{group\|channel\|thread}:{peer}`, plus `:thread:{threadId}` |
 * | `task` | `agent:{agent}:{cron\|webhook\|scheduled}:{taskId}` |
 * | `subagent` | `{parent key}:subagent:{subagentId}` |
 * | `ephemeral` | `agent:{agent}:ephemeral:{id}` |
 */
export type SessionKeyShape =
  | { readonly kind: 'main'; readonly agentId: string; readonly mainKey: string }
  | {
      readonly kind: 'direct_message';
      readonly agentId: string;
      readonly peerId: string;
      readonly dmScope: 'per-peer' | 'per-channel-peer';
      readonly channel?: string;
    }
  | {
      readonly kind: 'group';
      readonly agentId: string;
      readonly channel: string;
      readonly peerKind: PeerKind;
      readonly peerId: string;
      readonly threadId?: string;
    }
  | { readonly kind: 'task'; readonly agentId: string; readonly taskType: TaskType; readonly taskId: string }
  | { readonly kind: 'subagent'; readonly parent: SessionKeyShape; readonly subagentId: string }
  | { readonly kind: 'ephemeral'; readonly agentId: string; readonly ephemeralId: string };
