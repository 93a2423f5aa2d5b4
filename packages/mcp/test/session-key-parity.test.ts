// serveMcp's session keys must be exactly what @signalyard/sessions builds:
// formatSessionKey(SessionKey.directMessage(agentId, 'mcp', session, 'per-channel-peer')). The mcp
// package may not import that sibling, so it reproduces the normalisation; this test (which sees
// both through the `signalyard` meta-package) keeps the two in step, and checks that what the
// factory refuses serveMcp refuses too.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SessionKey, formatSessionKey } from 'signalyard';
import { mcpSessionKey } from '../src/mcp-session-key.js';

/** What sessions builds, or `undefined` when it refuses the id. */
function sessionsKey(agentId: string, session: string): string | undefined {
  try {
    return formatSessionKey(SessionKey.directMessage(agentId, 'mcp', session, 'per-channel-peer'));
  } catch (error) {
    expect((error as { code?: string }).code).toBe('SESSION_KEY_INVALID');
    return undefined;
  }
}

function mcpKey(agentId: string, session: string): string | undefined {
  const built = mcpSessionKey(agentId, session);
  return 'key' in built ? built.key : undefined;
}

const awkward = [
  'desk-1',
  'User@Example.com',
  'Desk 1',
  '  padded  ',
  'a:b',
  'a%3ab',
  '100%',
  'é',
  'E\u0301', // decomposed: NFC makes it one character, lowercased
  'ÉCOLE',
  'İstanbul', // lowercasing adds a combining dot
  'ǅ', // titlecase digraph
  'straße',
  'ΣΊΣΥΦΟΣ',
  '日本語',
  '👩‍💻 emoji',
  '\u{1F600}',
  'tab\there',
  'x'.repeat(128),
  'y'.repeat(129),
  'z'.repeat(1000),
  'Z'.repeat(200), // escaped? no: lowercased, so 200 characters
  ':'.repeat(300), // each ':' is 3 characters escaped: over the cap
  '',
  '   ',
  'a\u0000b',
  'a\u001bb',
  'a\u0085b',
  'a\u202eb',
  'a\ud800b',
  '\udc00',
];

describe("serveMcp's session keys equal SessionKey.directMessage's", () => {
  it.each(awkward.map((s) => [JSON.stringify(s).slice(0, 60), s]))('%s', (_, session) => {
    for (const agent of ['support', 'a', 'billing_desk-2']) {
      expect(mcpKey(agent, session)).toBe(sessionsKey(agent, session));
    }
  });

  it('agrees on arbitrary strings (accepted or refused alike)', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'binary', maxLength: 400 })), (s) => {
        expect(mcpKey('support', s)).toBe(sessionsKey('support', s));
      }),
      { numRuns: 2000 },
    );
  });

  it('names the refused value and what was expected', () => {
    expect(mcpSessionKey('support', ' ')).toEqual({ problem: 'Invalid session " ": expected a non-empty id' });
    const control = mcpSessionKey('support', 'a\u0007');
    expect('problem' in control && control.problem).toMatch(
      /^Invalid session "a\\u0007": it contains the control character U\+0007 at index 1; expected/,
    );
    const long = mcpSessionKey('support', ':'.repeat(400));
    expect('problem' in long && long.problem).toMatch(/over the 1,024-character cap/);
  });
});
