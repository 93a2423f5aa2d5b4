import { describeValue } from '@signalyard/core';
import { unstorableTextIndex } from '@signalyard/core/internal';
import { canonicalId, isAsciiSpace, isCanonicalAgentId, isCanonicalChannel, normalizeAgentId } from './normalize.js';
import { SessionKeyError } from './errors/session-key-error.js';
import type { PeerKind, SessionKeyShape as SessionKey, TaskType } from './session-key-types.js';

/** The longest formatted session key, in characters. */
export const MAX_SESSION_KEY_LENGTH = 1024;

/** How many subagent levels may sit above a root key (a 9th is rejected). */
export const MAX_SUBAGENT_DEPTH = 8;

const HEX = '0123456789abcdef';

const count = (n: number): string => n.toLocaleString('en-US');

/**
 * True when `s` can be part of a session key: no NUL (U+0000) and no lone surrogate — the rule
 * of the checkpoint stores and session locks (`unstorableTextIndex`), which key by the formatted
 * session key, so an id they would refuse is refused here, where it comes in.
 */
function isStorableId(s: string): boolean {
  return unstorableTextIndex(s) === -1;
}

/** Why `s` cannot be part of a session key (see {@link isStorableId}), or `undefined` when it can. */
export function unstorableIdProblem(s: string): string | undefined {
  const at = unstorableTextIndex(s);
  if (at === -1) return undefined;
  return s.charCodeAt(at) === 0
    ? `contains a NUL character (U+0000) at index ${at}`
    : `contains a lone surrogate at index ${at} (not well-formed Unicode)`;
}

function pushUtf8Escapes(out: string[], cp: number): void {
  const bytes: number[] =
    cp < 0x80
      ? [cp]
      : cp < 0x800
        ? [0xc0 | (cp >> 6), 0x80 | (cp & 0x3f)]
        : cp < 0x10000
          ? [0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)]
          : [0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 0x3f), 0x80 | ((cp >> 6) & 0x3f), 0x80 | (cp & 0x3f)];
  for (const b of bytes) out.push('%', HEX.charAt(b >> 4), HEX.charAt(b & 15));
}

/**
 * Escapes one id segment for a key string, or returns `undefined` when `s` is not a canonical id
 * (`canonicalId(s, caseSensitive) === s`, non-empty, well-formed). `%` → `%25`, `:` → `%3a`,
 * and every character that lowercasing would change → its UTF-8 bytes as lowercase `%xx`.
 * A segment needing no escape is returned as it is.
 */
function escapeSegment(s: unknown, caseSensitive: boolean): string | undefined {
  if (typeof s !== 'string' || s.length === 0) return undefined;
  const n = s.length;
  let escapes = false;
  let ascii = true;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x80) {
      ascii = false;
      break;
    }
    if (c === 0x25 || c === 0x3a) escapes = true;
    else if (c === 0)
      return undefined; // NUL: no store can hold it (see isStorableId)
    else if (c >= 0x41 && c <= 0x5a) {
      if (!caseSensitive) return undefined;
      escapes = true;
    }
  }
  if (ascii) {
    if (isAsciiSpace(s.charCodeAt(0)) || isAsciiSpace(s.charCodeAt(n - 1))) return undefined;
    if (!escapes) return s;
  } else if (canonicalId(s, caseSensitive) !== s || !isStorableId(s)) {
    return undefined;
  }
  const out: string[] = [];
  for (const ch of s) {
    if (ch === '%') out.push('%25');
    else if (ch === ':') out.push('%3a');
    else if (ch.toLowerCase() !== ch) pushUtf8Escapes(out, ch.codePointAt(0) as number);
    else out.push(ch);
  }
  return out.join('');
}

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
    const unstorable = typeof value === 'string' ? unstorableIdProblem(value) : undefined;
    badKey(
      key,
      unstorable === undefined
        ? `${field} ${describeValue(value)} is not a canonical id (non-empty, trimmed, NFC${caseSensitive ? '' : ', lowercase'})`
        : `${field} ${describeValue(value)} ${unstorable}: ids cannot contain NUL or lone surrogates`,
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

// ------------------------------------------------------------------------------------ parse

function parseError(text: string, problem: string): never {
  throw new SessionKeyError({
    problem,
    input: text,
    message: `Invalid session key ${describeValue(text.length > 200 ? `${text.slice(0, 200)}…` : text)}: ${problem}`,
  });
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  return -1;
}

/** Decodes one escaped segment, rejecting malformed and unnecessary escapes. */
function decodeSegment(text: string, raw: string, what: string, caseSensitive: boolean): string {
  let value = raw;
  if (raw.includes('%')) {
    const out: string[] = [];
    let i = 0;
    while (i < raw.length) {
      if (raw.charCodeAt(i) !== 0x25) {
        const ch = String.fromCodePoint(raw.codePointAt(i) as number);
        out.push(ch);
        i += ch.length;
        continue;
      }
      const { ch, len } = decodeEscape(text, raw, i, what);
      out.push(ch);
      i += 3 * len;
    }
    value = out.join('');
  }
  if (value.includes('\u0000')) {
    parseError(text, `the ${what} ${describeValue(value)} contains a NUL character (U+0000): ids cannot contain NUL`);
  }
  if (canonicalId(value, caseSensitive) !== value || !isStorableId(value)) {
    parseError(
      text,
      `the ${what} ${describeValue(value)} is not in canonical form (trimmed, NFC${caseSensitive ? '' : ', lowercase'})`,
    );
  }
  return value;
}

/** The byte a `%XX` escape at `at` stands for, or -1 when there is none. */
function escapedByte(raw: string, at: number): number {
  if (raw.charCodeAt(at) !== 0x25) return -1;
  const hi = hexValue(raw.charCodeAt(at + 1));
  const lo = hexValue(raw.charCodeAt(at + 2));
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

/** The UTF-8 lead byte's value bits and sequence length, or `undefined` for a byte that cannot lead. */
function utf8Lead(b0: number): { cp: number; len: number } | undefined {
  if (b0 < 0x80) return { cp: b0, len: 1 };
  if (b0 >= 0xc2 && b0 <= 0xdf) return { cp: b0 & 0x1f, len: 2 };
  if (b0 >= 0xe0 && b0 <= 0xef) return { cp: b0 & 0x0f, len: 3 };
  if (b0 >= 0xf0 && b0 <= 0xf4) return { cp: b0 & 0x07, len: 4 };
  return undefined;
}

/** Decodes the UTF-8 escape sequence (`%XX`, one to four of them) at `i`: the character and its byte count. */
function decodeEscape(text: string, raw: string, i: number, what: string): { ch: string; len: number } {
  const b0 = escapedByte(raw, i);
  if (b0 < 0)
    parseError(text, `bad escape ${describeValue(raw.slice(i, i + 3))} in the ${what} (expected % and two hex digits)`);
  const lead = utf8Lead(b0);
  if (lead === undefined) {
    return parseError(text, `bad escape ${describeValue(raw.slice(i, i + 3))} in the ${what} (not a UTF-8 lead byte)`);
  }
  let { cp } = lead;
  const { len } = lead;
  for (let j = 1; j < len; j++) {
    const b = escapedByte(raw, i + 3 * j);
    if (b < 0x80 || b > 0xbf) {
      parseError(
        text,
        `bad escape ${describeValue(raw.slice(i, i + 3 * len))} in the ${what} (truncated UTF-8 sequence)`,
      );
    }
    cp = (cp << 6) | (b & 0x3f);
  }
  const minimum = len === 2 ? 0x80 : len === 3 ? 0x800 : 0x10000;
  if ((len > 1 && cp < minimum) || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
    parseError(text, `bad escape ${describeValue(raw.slice(i, i + 3 * len))} in the ${what} (invalid UTF-8 sequence)`);
  }
  if (cp === 0) {
    parseError(text, `escape "%00" in the ${what} stands for a NUL character (U+0000): ids cannot contain NUL`);
  }
  const ch = String.fromCodePoint(cp);
  if (ch !== '%' && ch !== ':' && ch.toLowerCase() === ch) {
    parseError(
      text,
      `unnecessary escape ${describeValue(raw.slice(i, i + 3 * len))} in the ${what} (only %, : and characters that lowercasing would change are escaped)`,
    );
  }
  return { ch, len };
}

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
