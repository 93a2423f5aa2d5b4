import { describeValue } from '@signalyard/core';
import { SessionKeyError } from './errors/session-key-error.js';
import { isCanonicalAgentId, isCanonicalChannel } from './normalize.js';
import { escapeSegment } from './session-key-escape.js';
import { idCharacterProblem } from '@signalyard/core/internal';
import { MAX_SESSION_KEY_LENGTH, MAX_SUBAGENT_DEPTH, count } from './session-key-limits.js';
import type { SessionKeyShape as SessionKey } from './session-key-types.js';

function badKey(key: unknown, problem: string): never {
  throw new SessionKeyError({
    problem,
    input: key,
    message: `Invalid session key object: ${problem} (got ${describeValue(key)}); build keys with the SessionKey factories or parseSessionKey`,
  });
}

function agentSegment(key: object, value: unknown): string {
  if (typeof value !== 'string' || !isCanonicalAgentId(value)) {
    badKey(key, `agentId ${describeValue(value)} is not a canonical agent id`);
  }
  return value;
}

function channelSegment(key: object, value: unknown): string {
  if (typeof value !== 'string' || !isCanonicalChannel(value)) {
    badKey(key, `channel ${describeValue(value)} is not a canonical channel name ([a-z0-9][a-z0-9_.-]*)`);
  }
  return value;
}

function idSegment(key: object, field: string, value: unknown, caseSensitive: boolean): string {
  const escaped = escapeSegment(value, caseSensitive);
  if (escaped === undefined) {
    const forbidden = typeof value === 'string' ? idCharacterProblem(value) : undefined;
    badKey(
      key,
      forbidden === undefined
        ? `${field} ${describeValue(value)} is not a canonical id (non-empty, trimmed, NFC${caseSensitive ? '' : ', lowercase'})`
        : `${field} ${describeValue(value)} ${forbidden}: ids cannot contain control characters or lone surrogates`,
    );
  }
  return escaped;
}

function formatKey(key: unknown, depth: number): string {
  if (typeof key !== 'object' || key === null) badKey(key, 'not an object');
  const k = key as Record<string, unknown>;
  switch (k.kind) {
    case 'main':
      return `agent:${agentSegment(k, k.agentId)}:${idSegment(k, 'mainKey', k.mainKey, false)}`;
    case 'direct_message': {
      const agent = agentSegment(k, k.agentId);
      const peer = idSegment(k, 'peerId', k.peerId, true);
      if (k.dmScope === 'per-peer') {
        if (k.channel !== undefined) channelSegment(k, k.channel);
        return `agent:${agent}:dm:${peer}`;
      }
      if (k.dmScope === 'per-channel-peer') return `agent:${agent}:${channelSegment(k, k.channel)}:dm:${peer}`;
      return badKey(k, `dmScope ${describeValue(k.dmScope)} is not "per-peer" or "per-channel-peer"`);
    }
    case 'group': {
      const agent = agentSegment(k, k.agentId);
      const channel = channelSegment(k, k.channel);
      if (k.peerKind !== 'group' && k.peerKind !== 'channel' && k.peerKind !== 'thread') {
        badKey(k, `peerKind ${describeValue(k.peerKind)} is not "group", "channel" or "thread"`);
      }
      const base = `agent:${agent}:${channel}:${k.peerKind}:${idSegment(k, 'peerId', k.peerId, true)}`;
      return k.threadId === undefined ? base : `${base}:thread:${idSegment(k, 'threadId', k.threadId, true)}`;
    }
    case 'task': {
      const agent = agentSegment(k, k.agentId);
      if (k.taskType !== 'cron' && k.taskType !== 'webhook' && k.taskType !== 'scheduled') {
        badKey(k, `taskType ${describeValue(k.taskType)} is not "cron", "webhook" or "scheduled"`);
      }
      return `agent:${agent}:${k.taskType}:${idSegment(k, 'taskId', k.taskId, false)}`;
    }
    case 'subagent': {
      if (depth >= MAX_SUBAGENT_DEPTH) badKey(key, `more than ${MAX_SUBAGENT_DEPTH} levels of subagent nesting`);
      const id = idSegment(k, 'subagentId', k.subagentId, false);
      return `${formatKey(k.parent, depth + 1)}:subagent:${id}`;
    }
    case 'ephemeral':
      return `agent:${agentSegment(k, k.agentId)}:ephemeral:${idSegment(k, 'ephemeralId', k.ephemeralId, false)}`;
    default:
      return badKey(k, `unknown kind ${describeValue(k.kind)}`);
  }
}

/**
 * Formats a session key as its string: all lowercase, `:` only as delimiters, at most 1,024
 * characters. Injective: two different keys never give the same string (a per-peer DM's
 * channel is not part of its string).
 *
 * @throws SessionKeyError for an object that is not a valid key, or one over 1,024 characters.
 * @example
 * ```ts
 * formatSessionKey(SessionKey.group('main', 'telegram', 'group', 'chat:thread:t1'));
 * // 'agent:main:telegram:group:chat%3athread%3at1' — not the threaded key of group "chat"
 * ```
 */
export function formatSessionKey(key: SessionKey): string {
  const text = formatKey(key, 0);
  if (text.length > MAX_SESSION_KEY_LENGTH) {
    badKey(
      key,
      `formatted key is ${count(text.length)} characters, over the ${count(MAX_SESSION_KEY_LENGTH)}-character cap`,
    );
  }
  return text;
}
