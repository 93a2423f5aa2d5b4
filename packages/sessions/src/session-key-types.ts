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
  | {
      /** The agent's main session (`agent:<id>:<mainKey>`). */
      readonly kind: 'main';
      /** The agent the session belongs to. */
      readonly agentId: string;
      /** The main session's name (`main` by default). */
      readonly mainKey: string;
    }
  | {
      /** A direct-message session with one person. */
      readonly kind: 'direct_message';
      /** The agent the session belongs to. */
      readonly agentId: string;
      /** The person: their canonical name when identity links join their ids, else their id. */
      readonly peerId: string;
      /** `per-peer`: one session per person; `per-channel-peer`: one per channel and person. */
      readonly dmScope: 'per-peer' | 'per-channel-peer';
      /** With `per-channel-peer`: the channel. */
      readonly channel?: string;
    }
  | {
      /** A group, channel or thread session. */
      readonly kind: 'group';
      /** The agent the session belongs to. */
      readonly agentId: string;
      /** The channel the group is on. */
      readonly channel: string;
      /** `group`, `channel` or `thread`. */
      readonly peerKind: PeerKind;
      /** The group's id on its channel. */
      readonly peerId: string;
      /** The thread inside the group, for threaded sessions. */
      readonly threadId?: string;
    }
  | {
      /** A task's session (`agent:<id>:<taskType>:<taskId>`). */
      readonly kind: 'task';
      /** The agent the session belongs to. */
      readonly agentId: string;
      /** What kind of task. */
      readonly taskType: TaskType;
      /** The task's id. */
      readonly taskId: string;
    }
  | {
      /** A sub-agent's session under a parent session. */
      readonly kind: 'subagent';
      /** The parent session's key. */
      readonly parent: SessionKeyShape;
      /** The sub-agent's id. */
      readonly subagentId: string;
    }
  | {
      /** A throwaway session. */
      readonly kind: 'ephemeral';
      /** The agent the session belongs to. */
      readonly agentId: string;
      /** Its id. */
      readonly ephemeralId: string;
    };
