import { describeValue } from '@signalyard/core';
import { canonicalId } from '@signalyard/core/internal';
import { SessionKeyError } from './errors/session-key-error.js';

// The canonical form of an id and the ASCII spaces trim removes: core's, shared with @signalyard/mcp's session keys.
export { canonicalId, isAsciiSpace } from '@signalyard/core/internal';

/** Longest agent id `normalizeAgentId` produces. */
export const MAX_AGENT_ID_LENGTH = 64;

const CANONICAL_AGENT_ID = /^[a-z0-9_](?:[a-z0-9_-]*[a-z0-9_])?$/;
const CHANNEL = /^[a-z0-9][a-z0-9_.-]*$/;
const INVALID_AGENT_RUN = /[^a-z0-9_-]+/g;

/**
 * Normalises an agent id: NFC, trim, lowercase, each **run** of characters outside
 * `[a-z0-9_-]` becomes one `-`, leading and trailing `-` are stripped, the result is cut to 64
 * characters (and a trailing `-` stripped again). An empty result becomes `'main'`.
 *
 * Session-key factories use the same rule but reject ids whose normalisation comes out empty
 * (`''`, `'!!!'`, `'---'`) instead of falling back to `'main'`: silently routing misconfigured
 * traffic to the default agent would hide the mistake.
 *
 * @example
 * ```ts
 * normalizeAgentId(' Work_Bot ');  // 'work_bot'
 * normalizeAgentId('My Agent!');   // 'my-agent'
 * normalizeAgentId('a  b');        // 'a-b'
 * normalizeAgentId('!!!');         // 'main'
 * ```
 * @throws SessionKeyError (`SESSION_KEY_INVALID`) when `input` is not a string.
 */
export function normalizeAgentId(input: string): string {
  if (typeof input !== 'string') {
    throw new SessionKeyError({
      problem: 'agent id',
      input,
      message: `normalizeAgentId: agent id ${describeValue(input)} is not a string`,
    });
  }
  const id = agentIdOrEmpty(input);
  return id === '' ? 'main' : id;
}

/** `normalizeAgentId` without the `'main'` fallback: `''` when nothing valid is left. */
export function agentIdOrEmpty(input: string): string {
  if (isCanonicalAgentId(input)) return input; // the common case: already canonical
  let id = input.normalize('NFC').trim().toLowerCase().replace(INVALID_AGENT_RUN, '-');
  id = stripDashes(id);
  if (id.length > MAX_AGENT_ID_LENGTH) id = stripDashes(id.slice(0, MAX_AGENT_ID_LENGTH));
  return id;
}

function stripDashes(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && s.charCodeAt(start) === 0x2d) start++;
  while (end > start && s.charCodeAt(end - 1) === 0x2d) end--;
  return start === 0 && end === s.length ? s : s.slice(start, end);
}

/** True when `id` is a non-empty agent id that `normalizeAgentId` leaves unchanged. */
export function isCanonicalAgentId(id: string): boolean {
  return id.length <= MAX_AGENT_ID_LENGTH && CANONICAL_AGENT_ID.test(id);
}

/** True when `channel` is a canonical channel name (`[a-z0-9][a-z0-9_.-]*`). */
export function isCanonicalChannel(channel: string): boolean {
  return CHANNEL.test(channel);
}

/** A channel name trimmed and lowercased, or `undefined` when it is not a valid channel. */
export function normalizeChannel(channel: string): string | undefined {
  if (CHANNEL.test(channel)) return channel;
  const c = channel.trim().toLowerCase();
  return CHANNEL.test(c) ? c : undefined;
}

/**
 * Folds an id for case-insensitive comparison (account, guild and team ids; peer ids on
 * channels that are not case-sensitive): trim, NFC, lowercase.
 */
export function foldId(input: string): string {
  return canonicalId(input, false);
}
