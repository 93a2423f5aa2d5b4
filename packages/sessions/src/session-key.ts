import { randomUUID } from 'node:crypto';
import { describeValue } from '@signalyard/core';
import { agentIdOrEmpty, canonicalId, normalizeChannel } from './normalize.js';
import { SessionKeyError } from './errors/session-key-error.js';
import type { DmScope, PeerKind, SessionKeyShape, TaskType } from './session-key-types.js';
import { formatSessionKey } from './session-key-format.js';
import { ID_CHARACTERS, idCharacterProblem } from '@signalyard/core/internal';
import { MAX_SESSION_KEY_LENGTH, MAX_SUBAGENT_DEPTH } from './session-key-limits.js';

export type { DmScope, PeerKind, TaskType } from './session-key-types.js';

/**
 * A channel-aware conversation identity, in one of six variants. Build keys with the
 * {@link SessionKey} factories (which normalise and validate), turn them into strings with
 * {@link formatSessionKey} and back with {@link parseSessionKey}. Keys are frozen plain objects.
 * See {@link SessionKeyShape} for the variants and their string forms.
 */
export type SessionKey = SessionKeyShape;

/** Options of {@link SessionKeyFactories.directMessage}. */
export interface DirectMessageOptions {
  /** Keep the peer id's case (channels whose user ids are case-sensitive, such as Matrix or Signal). */
  readonly caseSensitive?: boolean;
}

/** Options of {@link SessionKeyFactories.group}. */
export interface GroupOptions {
  /** The thread inside the group, for a threaded session (`…:thread:{threadId}`). */
  readonly threadId?: string;
  /** Keep the case of the peer and thread ids (channels with case-sensitive ids). */
  readonly caseSensitive?: boolean;
}

/**
 * The factories behind {@link SessionKey}. Each normalises its arguments (NFC first; agent ids
 * through `normalizeAgentId`; channels trimmed and lowercased; ids trimmed and lowercased unless
 * case-sensitive) and throws {@link SessionKeyError} (`SESSION_KEY_INVALID`) for anything it
 * cannot turn into a valid key.
 */
export interface SessionKeyFactories {
  /**
   * The agent's main session, `agent:{agent}:{mainKey}`.
   *
   * @param mainKey defaults to `'main'`.
   * @throws SessionKeyError for an agent id with no valid character or an empty main key.
   * @example
   * ```ts
   * formatSessionKey(SessionKey.main('Work Bot'));  // 'agent:work-bot:main'
   * ```
   */
  main(agentId: string, mainKey?: string): SessionKey;
  /**
   * A direct-message session. With `dmScope` `'main'` this returns the agent's main key (all
   * DMs share the main session); `'per-peer'` (the default) gives `agent:{agent}:dm:{peer}` with
   * the channel kept on the object only; `'per-channel-peer'` gives
   * `agent:{agent}:{channel}:dm:{peer}`.
   *
   * @throws SessionKeyError for a bad agent id, channel, peer id or scope.
   * @example
   * ```ts
   * formatSessionKey(SessionKey.directMessage('main', 'telegram', 'User123'));                       // 'agent:main:dm:user123'
   * formatSessionKey(SessionKey.directMessage('main', 'matrix', '@Ann:x.org', 'per-channel-peer', { caseSensitive: true }));
   * // 'agent:main:matrix:dm:@%41nn%3ax.org'
   * ```
   */
  directMessage(
    agentId: string,
    channel: string,
    peerId: string,
    dmScope?: DmScope,
    opts?: DirectMessageOptions,
  ): SessionKey;
  /**
   * A group, broadcast-channel or thread session, `agent:{agent}:{channel}:{kind}:{peer}`, with
   * `:thread:{threadId}` appended when `opts.threadId` is given.
   *
   * @throws SessionKeyError for a bad agent id, channel, peer kind, peer id or thread id.
   * @example
   * ```ts
   * formatSessionKey(SessionKey.group('main', 'telegram', 'group', 'chat789', { threadId: 't1' }));
   * // 'agent:main:telegram:group:chat789:thread:t1'
   * ```
   */
  group(agentId: string, channel: string, peerKind: PeerKind, peerId: string, opts?: GroupOptions): SessionKey;
  /**
   * A scheduled-task session, `agent:{agent}:{cron|webhook|scheduled}:{taskId}`.
   *
   * @throws SessionKeyError for an unknown task type (such as `'dm'`) or an empty task id.
   * @example
   * ```ts
   * formatSessionKey(SessionKey.task('main', 'cron', 'daily-summary'));  // 'agent:main:cron:daily-summary'
   * ```
   */
  task(agentId: string, taskType: TaskType, taskId: string): SessionKey;
  /**
   * A subagent session nested under `parent`, `{parent key}:subagent:{subagentId}`. Up to 8
   * subagent levels above the root key are valid; a 9th throws.
   *
   * @throws SessionKeyError for an invalid parent, an empty id, a 9th level, or a key over 1,024 characters.
   * @example
   * ```ts
   * formatSessionKey(SessionKey.subagent(SessionKey.main('main'), 'coding'));  // 'agent:main:main:subagent:coding'
   * ```
   */
  subagent(parent: SessionKey, subagentId: string): SessionKey;
  /**
   * A temporary session, `agent:{agent}:ephemeral:{id}`; the id defaults to `crypto.randomUUID()`.
   *
   * @example
   * ```ts
   * SessionKey.ephemeral('main');  // { kind: 'ephemeral', agentId: 'main', ephemeralId: '…uuid…' }
   * ```
   */
  ephemeral(agentId: string, ephemeralId?: string): SessionKey;
}

const DM_SCOPES: ReadonlySet<string> = new Set(['main', 'per-peer', 'per-channel-peer']);
const PEER_KINDS: ReadonlySet<string> = new Set(['group', 'channel', 'thread']);
const TASK_TYPES: ReadonlySet<string> = new Set(['cron', 'webhook', 'scheduled']);

function fail(problem: string, input: unknown, expected: string): never {
  throw new SessionKeyError({
    problem,
    input,
    message: `Invalid session key argument: ${problem} ${describeValue(input)}; expected ${expected}`,
  });
}

function agentArg(agentId: unknown): string {
  if (typeof agentId !== 'string') fail('agent id', agentId, 'a string');
  const id = agentIdOrEmpty(agentId);
  if (id === '') fail('agent id with no valid character', agentId, 'at least one character in [a-z0-9_-]');
  return id;
}

function channelArg(channel: unknown): string {
  if (typeof channel !== 'string') fail('channel', channel, 'a string');
  const c = normalizeChannel(channel);
  if (c === undefined) fail('channel', channel, 'a non-empty name matching [a-z0-9][a-z0-9_.-]*');
  return c;
}

function idArg(value: unknown, what: string, caseSensitive: boolean): string {
  if (typeof value !== 'string') fail(what, value, 'a string');
  const id = canonicalId(value, caseSensitive);
  if (id === '') fail(`empty ${what}`, value, 'a non-empty id');
  const forbidden = idCharacterProblem(id);
  if (forbidden !== undefined) {
    throw new SessionKeyError({
      problem: `${what} ${forbidden}`,
      input: value,
      message: `Invalid session key argument: ${what} ${describeValue(value)} ${forbidden}; expected ${ID_CHARACTERS}`,
    });
  }
  return id;
}

function caseSensitiveOpt(opts: { readonly caseSensitive?: boolean } | undefined): boolean {
  return opts?.caseSensitive === true;
}

/**
 * Checks the length cap without formatting when the key is obviously short enough: an escaped
 * character takes at most 9 characters, so 9 × the raw length bounds the formatted length.
 */
function checked<K extends SessionKey>(key: K, rawLength: number): K {
  if (rawLength * 9 + 64 > MAX_SESSION_KEY_LENGTH) formatSessionKey(key); // throws when over the cap
  return Object.freeze(key);
}

/** Builds a direct-message key from arguments that are already canonical (the resolver's hot path). */
export function directMessageKey(
  agentId: string,
  channel: string,
  peerId: string,
  dmScope: 'per-peer' | 'per-channel-peer',
): SessionKey {
  return checked(
    { kind: 'direct_message', agentId, peerId, dmScope, channel },
    agentId.length + channel.length + peerId.length,
  );
}

/** Builds a group key from arguments that are already canonical (the resolver's hot path). */
export function groupKey(
  agentId: string,
  channel: string,
  peerKind: PeerKind,
  peerId: string,
  threadId: string | undefined,
): SessionKey {
  if (threadId === undefined) {
    return checked(
      { kind: 'group', agentId, channel, peerKind, peerId },
      agentId.length + channel.length + peerId.length,
    );
  }
  return checked(
    { kind: 'group', agentId, channel, peerKind, peerId, threadId },
    agentId.length + channel.length + peerId.length + threadId.length,
  );
}

/** Builds a main key from arguments that are already canonical. */
export function mainKey(agentId: string, key = 'main'): SessionKey {
  return checked({ kind: 'main', agentId, mainKey: key }, agentId.length + key.length);
}

function subagentDepth(key: unknown): number {
  let depth = 0;
  let k = key;
  while (typeof k === 'object' && k !== null && (k as { kind?: unknown }).kind === 'subagent') {
    depth++;
    if (depth > MAX_SUBAGENT_DEPTH) break;
    k = (k as { parent?: unknown }).parent;
  }
  return depth;
}

/**
 * Builds validated, normalised {@link SessionKey}s: `main`, `directMessage`, `group`, `task`,
 * `subagent` and `ephemeral` (see {@link SessionKeyFactories}).
 *
 * @example
 * ```ts
 * const key = SessionKey.directMessage('Work Bot', 'Telegram', ' User123 ', 'per-channel-peer');
 * formatSessionKey(key);  // 'agent:work-bot:telegram:dm:user123'
 * ```
 */
export const SessionKey: SessionKeyFactories = Object.freeze({
  main(agentId: string, mainKeyArg = 'main'): SessionKey {
    return mainKey(agentArg(agentId), idArg(mainKeyArg, 'main key', false));
  },

  directMessage(
    agentId: string,
    channel: string,
    peerId: string,
    dmScope: DmScope = 'per-peer',
    opts?: DirectMessageOptions,
  ): SessionKey {
    const agent = agentArg(agentId);
    const ch = channelArg(channel);
    const peer = idArg(peerId, 'peer id', caseSensitiveOpt(opts));
    if (!DM_SCOPES.has(dmScope)) fail('DM scope', dmScope, '"main", "per-peer" or "per-channel-peer"');
    if (dmScope === 'main') return mainKey(agent);
    return directMessageKey(agent, ch, peer, dmScope);
  },

  group(agentId: string, channel: string, peerKind: PeerKind, peerId: string, opts?: GroupOptions): SessionKey {
    const agent = agentArg(agentId);
    const ch = channelArg(channel);
    if (!PEER_KINDS.has(peerKind)) fail('peer kind', peerKind, '"group", "channel" or "thread"');
    const cs = caseSensitiveOpt(opts);
    const peer = idArg(peerId, 'peer id', cs);
    const threadId = opts?.threadId;
    return groupKey(agent, ch, peerKind, peer, threadId === undefined ? undefined : idArg(threadId, 'thread id', cs));
  },

  task(agentId: string, taskType: TaskType, taskId: string): SessionKey {
    const agent = agentArg(agentId);
    if (!TASK_TYPES.has(taskType)) fail('task type', taskType, '"cron", "webhook" or "scheduled"');
    const id = idArg(taskId, 'task id', false);
    return checked({ kind: 'task', agentId: agent, taskType, taskId: id }, agent.length + id.length);
  },

  subagent(parent: SessionKey, subagentId: string): SessionKey {
    if (subagentDepth(parent) >= MAX_SUBAGENT_DEPTH) {
      fail(
        'subagent nesting',
        subagentDepth(parent) + 1,
        `at most ${MAX_SUBAGENT_DEPTH} subagent levels above the root key`,
      );
    }
    const id = idArg(subagentId, 'subagent id', false);
    const key: SessionKey = { kind: 'subagent', parent, subagentId: id };
    formatSessionKey(key); // validates the parent and the length cap
    return Object.freeze(key);
  },

  ephemeral(agentId: string, ephemeralId?: string): SessionKey {
    const agent = agentArg(agentId);
    const id = ephemeralId === undefined ? randomUUID() : idArg(ephemeralId, 'ephemeral id', false);
    return checked({ kind: 'ephemeral', agentId: agent, ephemeralId: id }, agent.length + id.length);
  },
});

/**
 * The agent a session belongs to. A subagent key's agent is its **root** parent's agent id
 * (subagents run on behalf of the agent whose session spawned them).
 *
 * @throws SessionKeyError when `key` is not a session key.
 * @example
 * ```ts
 * agentIdOf(SessionKey.subagent(SessionKey.main('work'), 'coder'));  // 'work'
 * ```
 */
export function agentIdOf(key: SessionKey): string {
  let k: unknown = key;
  for (let i = 0; i <= MAX_SUBAGENT_DEPTH && typeof k === 'object' && k !== null; i++) {
    const obj = k as { kind?: unknown; parent?: unknown; agentId?: unknown };
    if (obj.kind !== 'subagent') {
      if (typeof obj.agentId === 'string') return obj.agentId;
      break;
    }
    k = obj.parent;
  }
  throw new SessionKeyError({
    problem: 'not a session key',
    input: key,
    message: `agentIdOf: ${describeValue(key)} is not a session key (expected an object from the SessionKey factories or parseSessionKey)`,
  });
}
