import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SessionKey, SessionKeyError, formatSessionKey, parseSessionKey } from '@signalyard/sessions';
import { anyIdText, anyKey, idText, nearCollisionKey, withoutPerPeerChannel } from './arbitraries.js';

const RUNS = { numRuns: 1500 };

describe('session-key invariants (fast-check, ids from full Unicode with ":", "%", mixed case and NFD forms)', () => {
  it('parseSessionKey(formatSessionKey(k)) deep-equals k (per-peer DMs without channel)', () => {
    fc.assert(
      fc.property(anyKey(), (key) => {
        fc.pre(key !== null);
        expect(parseSessionKey(formatSessionKey(key))).toStrictEqual(withoutPerPeerChannel(key));
      }),
      RUNS,
    );
  });

  it('formatSessionKey is injective across all variants', () => {
    const same = (a: SessionKey, b: SessionKey): boolean =>
      JSON.stringify(withoutPerPeerChannel(a)) === JSON.stringify(withoutPerPeerChannel(b));
    fc.assert(
      fc.property(anyKey(), anyKey(), (a, b) => {
        fc.pre(a !== null && b !== null);
        expect(formatSessionKey(a) === formatSessionKey(b)).toBe(same(a, b));
      }),
      RUNS,
    );
    // Over a tiny alphabet of ":", "%", "3a", "thread", "subagent"…, collisions would be frequent if escaping were broken.
    fc.assert(
      fc.property(nearCollisionKey, nearCollisionKey, (a, b) => {
        fc.pre(a !== null && b !== null);
        expect(formatSessionKey(a) === formatSessionKey(b)).toBe(same(a, b));
      }),
      { numRuns: 5000 },
    );
  });

  it('formatted keys are lowercase, at most 1,024 characters, and their only ":" are delimiters', () => {
    fc.assert(
      fc.property(anyKey(), (key) => {
        fc.pre(key !== null);
        const text = formatSessionKey(key);
        expect(text).toBe(text.toLowerCase());
        expect(text.length).toBeLessThanOrEqual(1024);
        expect(text.split(':')).toHaveLength(expectedSegments(key));
      }),
      RUNS,
    );
  });

  it('the factories are idempotent on their own output (normalising a normalised id changes nothing)', () => {
    fc.assert(
      fc.property(idText, fc.boolean(), (id, caseSensitive) => {
        let key: SessionKey;
        try {
          key = SessionKey.directMessage('main', 'matrix', id, 'per-channel-peer', { caseSensitive });
        } catch (error) {
          expect(SessionKeyError.isInstance(error)).toBe(true);
          return;
        }
        if (key.kind !== 'direct_message') throw new Error('expected a DM key');
        expect(
          SessionKey.directMessage('main', 'matrix', key.peerId, 'per-channel-peer', { caseSensitive }),
        ).toStrictEqual(key);
      }),
      RUNS,
    );
  });

  it('composed and decomposed forms of an id give one key', () => {
    fc.assert(
      fc.property(idText, fc.boolean(), (id, caseSensitive) => {
        const a = SessionKey.group('main', 'telegram', 'group', id.normalize('NFC'), { caseSensitive });
        const b = SessionKey.group('main', 'telegram', 'group', id.normalize('NFD'), { caseSensitive });
        expect(formatSessionKey(b)).toBe(formatSessionKey(a));
      }),
      RUNS,
    );
  });

  it('parseSessionKey never throws anything but SessionKeyError, on arbitrary strings', () => {
    const arbitraryText = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 60 }),
      fc.string({ unit: 'binary-ascii', maxLength: 60 }),
      anyIdText.map((s) => `agent:${s}`),
      fc
        .array(
          fc.oneof(
            anyIdText,
            fc.constantFrom('agent', 'main', 'dm', 'subagent', 'thread', 'group', 'cron', '%', '%c3', '%zz', ''),
          ),
          {
            maxLength: 9,
          },
        )
        .map((parts) => parts.join(':')),
      // Valid keys with one character inserted, removed or replaced.
      fc
        .tuple(
          anyKey(),
          fc.nat(),
          fc.string({ unit: 'binary', minLength: 1, maxLength: 2 }),
          fc.constantFrom('insert', 'delete', 'replace'),
        )
        .map(([key, at, ch, op]) => {
          const text = key === null ? 'agent:main:main' : formatSessionKey(key);
          const i = at % (text.length + 1);
          if (op === 'insert') return text.slice(0, i) + ch + text.slice(i);
          if (op === 'delete') return text.slice(0, i) + text.slice(i + 1);
          return text.slice(0, i) + ch + text.slice(i + 1);
        }),
    );
    fc.assert(
      fc.property(arbitraryText, (text) => {
        let parsed: SessionKey;
        try {
          parsed = parseSessionKey(text);
        } catch (error) {
          expect(SessionKeyError.isInstance(error)).toBe(true);
          expect((error as SessionKeyError).code).toBe('SESSION_KEY_INVALID');
          return;
        }
        // Accepted only if it could have been formatted: formatting the result gives the input back.
        expect(formatSessionKey(parsed)).toBe(text.trim().toLowerCase());
      }),
      { numRuns: 5000 },
    );
  });
});

function expectedSegments(key: SessionKey): number {
  switch (key.kind) {
    case 'main':
      return 3;
    case 'direct_message':
      return key.dmScope === 'per-peer' ? 4 : 5;
    case 'group':
      return key.threadId === undefined ? 5 : 7;
    case 'task':
    case 'ephemeral':
      return 4;
    case 'subagent':
      return expectedSegments(key.parent) + 2;
  }
}
