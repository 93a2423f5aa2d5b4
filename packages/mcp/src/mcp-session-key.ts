import { describeValue } from '@signalyard/core';
import { pushUtf8Escapes, unstorableTextIndex } from '@signalyard/core/internal';

// The session key of an `ask_<agent>` / `approve_<agent>` call, exactly as
// `formatSessionKey(SessionKey.directMessage(agentId, 'mcp', session, 'per-channel-peer'))` of
// @signalyard/sessions builds it. This package may not import that sibling, so the peer id's
// normalisation and escaping are reproduced here; the `signalyard` meta-package's tests check
// that both give the same keys (and refuse the same ids).

/** The longest formatted session key (`MAX_SESSION_KEY_LENGTH` of @signalyard/sessions). */
const MAX_KEY_LENGTH = 1024;
/** The canonical peer id: NFC, trimmed, lowercased (then NFC again when lowercasing changed it). */
function canonicalPeer(input: string): string {
  const trimmed = input.normalize('NFC').trim();
  const lower = trimmed.toLowerCase();
  return lower === trimmed ? lower : lower.normalize('NFC');
}

/** Why no session id can hold `id` (a phrase following the id), or `undefined` when it can. */
function characterProblem(id: string): string | undefined {
  const unstorable = unstorableTextIndex(id);
  const end = unstorable === -1 ? id.length : unstorable;
  for (let i = 0; i < end; i++) {
    const c = id.charCodeAt(i);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || (c >= 0x202a && (c <= 0x202e || (c >= 0x2066 && c <= 0x2069)))) {
      const code = `U+${c.toString(16).toUpperCase().padStart(4, '0')}`;
      return c >= 0x202a
        ? `contains the bidirectional control ${code} at index ${i}`
        : `contains the control character ${code} at index ${i}`;
    }
  }
  if (unstorable === -1) return undefined;
  return id.charCodeAt(unstorable) === 0
    ? `contains a NUL character (U+0000) at index ${unstorable}`
    : `contains a lone surrogate at index ${unstorable} (not well-formed Unicode)`;
}

/** One id segment of a key string: `%` → `%25`, `:` → `%3a`, a character lowercasing would change → its UTF-8 bytes as `%xx`. */
function escapeSegment(id: string): string {
  const out: string[] = [];
  for (const ch of id) {
    if (ch === '%') out.push('%25');
    else if (ch === ':') out.push('%3a');
    else if (ch.toLowerCase() !== ch) pushUtf8Escapes(out, ch.codePointAt(0) as number);
    else out.push(ch);
  }
  return out.join('');
}

/** The session key of a call, or why the session id cannot be one. */
export type McpSessionKey = { readonly key: string } | { readonly problem: string };

/**
 * The session key `agent:<agentId>:mcp:dm:<session>` of a call to `ask_<agentId>`, as
 * `formatSessionKey(SessionKey.directMessage(agentId, 'mcp', session, 'per-channel-peer'))`
 * builds it (`agentId` is already canonical: `serveMcp` checks it), or the problem that makes
 * that factory refuse `session` (empty once trimmed, a control character, a key over 1,024
 * characters).
 */
export function mcpSessionKey(agentId: string, session: string): McpSessionKey {
  const id = canonicalPeer(session);
  if (id === '') return { problem: `Invalid session ${describeValue(session)}: expected a non-empty id` };
  const forbidden = characterProblem(id);
  if (forbidden !== undefined) {
    return {
      problem: `Invalid session ${describeValue(session)}: it ${forbidden}; expected an id without control characters (C0, C1, bidirectional controls) or lone surrogates`,
    };
  }
  const key = `agent:${agentId}:mcp:dm:${escapeSegment(id)}`;
  if (key.length > MAX_KEY_LENGTH) {
    return {
      problem: `Invalid session ${describeValue(session.length > 200 ? `${session.slice(0, 200)}…` : session)}: its session key would be ${key.length.toLocaleString('en-US')} characters, over the ${MAX_KEY_LENGTH.toLocaleString('en-US')}-character cap; expected a shorter id`,
    };
  }
  return { key };
}
