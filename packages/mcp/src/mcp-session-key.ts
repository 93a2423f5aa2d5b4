import { describeValue } from '@signalyard/core';
import { ID_CHARACTERS, canonicalId, escapeIdChars, idCharacterProblem } from '@signalyard/core/internal';

// The session key of an `ask_<agent>` / `approve_<agent>` call, exactly as
// `formatSessionKey(SessionKey.directMessage(agentId, 'mcp', session, 'per-channel-peer'))` of
// @signalyard/sessions builds it: the same canonical form, character rule and escaping (core's,
// which the sessions package uses too); the parity test checks both give the same keys and
// refuse the same ids.

/** The longest formatted session key (`MAX_SESSION_KEY_LENGTH` of @signalyard/sessions). */
const MAX_KEY_LENGTH = 1024;

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
  const id = canonicalId(session, false);
  if (id === '') return { problem: `Invalid session ${describeValue(session)}: expected a non-empty id` };
  const forbidden = idCharacterProblem(id);
  if (forbidden !== undefined) {
    return {
      problem: `Invalid session ${describeValue(session)}: it ${forbidden}; expected ${ID_CHARACTERS}`,
    };
  }
  const key = `agent:${agentId}:mcp:dm:${escapeIdChars(id)}`;
  if (key.length > MAX_KEY_LENGTH) {
    return {
      problem: `Invalid session ${describeValue(session.length > 200 ? `${session.slice(0, 200)}…` : session)}: its session key would be ${key.length.toLocaleString('en-US')} characters, over the ${MAX_KEY_LENGTH.toLocaleString('en-US')}-character cap; expected a shorter id`,
    };
  }
  return { key };
}
