import { describeValue } from '@signalyard/core';
import { SessionKeyError } from './errors/session-key-error.js';
import { isCanonicalAgentId, isCanonicalChannel, normalizeAgentId } from './normalize.js';
import { decodeSegment, parseError } from './session-key-escape.js';
import { MAX_SESSION_KEY_LENGTH, MAX_SUBAGENT_DEPTH, count } from './session-key-limits.js';
import type { PeerKind, SessionKeyShape as SessionKey, TaskType } from './session-key-types.js';

function isPeerKind(s: string | undefined): s is PeerKind {
  return s === 'group' || s === 'channel' || s === 'thread';
}

function isTaskType(s: string | undefined): s is TaskType {
  return s === 'cron' || s === 'webhook' || s === 'scheduled';
}

function parseBase(text: string, segs: readonly string[], end: number): SessionKey {
  const rawAgent = segs[1] as string;
  if (!isCanonicalAgentId(rawAgent)) {
    parseError(
      text,
      `agent id ${describeValue(rawAgent)} is not canonical (normalizeAgentId gives ${describeValue(normalizeAgentId(rawAgent))})`,
    );
  }
  const agentId = rawAgent;
  const channel = (): string => {
    const c = segs[2] as string;
    if (!isCanonicalChannel(c))
      parseError(text, `channel ${describeValue(c)} is not a valid channel name ([a-z0-9][a-z0-9_.-]*)`);
    return c;
  };
  switch (end) {
    case 3:
      return Object.freeze({
        kind: 'main',
        agentId,
        mainKey: decodeSegment(text, segs[2] as string, 'main key', false),
      });
    case 4:
      return parseFourSegments(text, segs, agentId);
    case 5:
    case 7:
      return parsePeerKey(text, segs, end, agentId, channel);
    default:
      return parseError(
        text,
        `${end} segments do not form any key variant (expected 3, 4, 5 or 7 before any ":subagent:{id}" pairs)`,
      );
  }
}

/** `agent:{agent}:{dm|task type|ephemeral}:{id}`. */
function parseFourSegments(text: string, segs: readonly string[], agentId: string): SessionKey {
  const type = segs[2] as string;
  const raw = segs[3] as string;
  if (type === 'dm') {
    return Object.freeze({
      kind: 'direct_message',
      agentId,
      peerId: decodeSegment(text, raw, 'peer id', true),
      dmScope: 'per-peer',
    });
  }
  if (isTaskType(type)) {
    return Object.freeze({
      kind: 'task',
      agentId,
      taskType: type,
      taskId: decodeSegment(text, raw, 'task id', false),
    });
  }
  if (type === 'ephemeral') {
    return Object.freeze({
      kind: 'ephemeral',
      agentId,
      ephemeralId: decodeSegment(text, raw, 'ephemeral id', false),
    });
  }
  return parseError(
    text,
    `unknown key type ${describeValue(type)} in segment 3 (expected "dm", a task type "cron", "webhook" or "scheduled", or "ephemeral")`,
  );
}

/** `agent:{agent}:{channel}:{dm|peer kind}:{peer}`, plus `:thread:{id}` for 7 segments. */
function parsePeerKey(
  text: string,
  segs: readonly string[],
  end: number,
  agentId: string,
  channel: () => string,
): SessionKey {
  const kind = segs[3];
  if (end === 5 && kind === 'dm') {
    return Object.freeze({
      kind: 'direct_message',
      agentId,
      peerId: decodeSegment(text, segs[4] as string, 'peer id', true),
      dmScope: 'per-channel-peer',
      channel: channel(),
    });
  }
  if (!isPeerKind(kind)) {
    return parseError(
      text,
      `unknown peer kind ${describeValue(kind)} in segment 4 (expected "dm", "group", "channel" or "thread")`,
    );
  }
  const ch = channel();
  const peerId = decodeSegment(text, segs[4] as string, 'peer id', true);
  if (end === 5) return Object.freeze({ kind: 'group', agentId, channel: ch, peerKind: kind, peerId });
  if (segs[5] !== 'thread') {
    return parseError(text, `expected "thread" in segment 6, got ${describeValue(segs[5])}`);
  }
  const threadId = decodeSegment(text, segs[6] as string, 'thread id', true);
  return Object.freeze({ kind: 'group', agentId, channel: ch, peerKind: kind, peerId, threadId });
}

/**
 * Parses a session-key string: trims, lowercases, splits on `:` and unescapes. Accepts only
 * strings that `formatSessionKey` could have produced (after trimming and lowercasing), and
 * never returns a partial key. The result is frozen.
 *
 * A per-peer DM parses without its `channel` (the string does not carry it).
 *
 * @throws SessionKeyError naming the problem: a wrong prefix, an empty segment, an unknown key
 *   type or task type, a dangling `subagent`, a bad or unnecessary escape (`%61`), a
 *   non-canonical agent id or id, more than 8 subagent levels, more than 1,024 characters, or
 *   a value that is not a string.
 * @example
 * ```ts
 * parseSessionKey('agent:main:telegram:group:chat789:thread:t1');
 * // { kind: 'group', agentId: 'main', channel: 'telegram', peerKind: 'group', peerId: 'chat789', threadId: 't1' }
 * ```
 */
export function parseSessionKey(text: string): SessionKey {
  if (typeof text !== 'string') {
    throw new SessionKeyError({
      problem: 'not a string',
      input: text,
      message: `Invalid session key ${describeValue(text)}: expected a string such as "agent:main:main"`,
    });
  }
  const trimmed = text.trim();
  if (trimmed === '') parseError(text, 'empty key');
  if (trimmed.length > MAX_SESSION_KEY_LENGTH) {
    parseError(text, `${count(trimmed.length)} characters, over the ${count(MAX_SESSION_KEY_LENGTH)}-character cap`);
  }
  const s = trimmed.toLowerCase();
  if (s.length > MAX_SESSION_KEY_LENGTH)
    parseError(text, `${count(s.length)} characters, over the ${count(MAX_SESSION_KEY_LENGTH)}-character cap`);
  const segs = s.split(':');
  if (segs[0] !== 'agent') parseError(text, `wrong prefix ${describeValue(segs[0])} (expected "agent:")`);
  for (let i = 1; i < segs.length; i++) {
    if (segs[i] === '') {
      parseError(
        text,
        i === segs.length - 1 && segs[i - 1] === 'subagent'
          ? 'dangling "subagent" with no id'
          : `empty segment ${i + 1}`,
      );
    }
  }
  if (segs.length < 3) parseError(text, `only ${segs.length} segments (expected at least "agent:{agent}:{key}")`);
  let end = segs.length;
  let depth = 0;
  while (end - 2 >= 3 && segs[end - 2] === 'subagent') {
    end -= 2;
    depth++;
  }
  if (depth > MAX_SUBAGENT_DEPTH)
    parseError(text, `${depth} levels of subagent nesting (at most ${MAX_SUBAGENT_DEPTH})`);
  let key: SessionKey;
  try {
    key = parseBase(text, segs, end);
  } catch (error) {
    if (segs[segs.length - 1] === 'subagent' && SessionKeyError.isInstance(error)) {
      parseError(text, `dangling "subagent" with no id (${error.problem})`);
    }
    throw error;
  }
  for (let i = end; i < segs.length; i += 2) {
    key = Object.freeze({
      kind: 'subagent',
      parent: key,
      subagentId: decodeSegment(text, segs[i + 1] as string, 'subagent id', false),
    });
  }
  return key;
}
