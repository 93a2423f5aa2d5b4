// decisions-wave3 §12: ids refuse, besides NUL and lone surrogates, the C0 and C1 control
// characters (U+0001–U+001F, U+007F–U+009F) and the bidirectional controls (U+202A–U+202E,
// U+2066–U+2069), with SESSION_KEY_INVALID at every boundary that refuses NUL. Before, a peer id
// holding ESC, a line break or U+202E made a key that `signalyard sessions list` printed raw
// (terminal escape injection, fake table rows) and the inspector showed reversed.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  RouteResolver,
  SessionKey,
  formatSessionKey,
  parseRoutingConfig,
  parseSessionKey,
  resolveLinkedPeerId,
  type SessionKeyShape,
} from '@signalyard/sessions';
import { FORBIDDEN_ID_CHARACTER } from './arbitraries.js';
import { configProblems, keyError, problemAt } from './support.js';

const ESC = '\u001b';
const RLO = '\u202e';
/** One of each kind, each inside an id (not at its ends, where whitespace is trimmed). */
const FORBIDDEN: readonly (readonly [label: string, ch: string, code: string])[] = [
  ['ESC', ESC, 'U+001B'],
  ['a newline', '\n', 'U+000A'],
  ['a tab', '\t', 'U+0009'],
  ['U+0001', '\u0001', 'U+0001'],
  ['DEL', '\u007f', 'U+007F'],
  ['NEL (C1)', '\u0085', 'U+0085'],
  ['CSI (C1)', '\u009b', 'U+009B'],
  ['RLO', RLO, 'U+202E'],
  ['LRE', '\u202a', 'U+202A'],
  ['LRI', '\u2066', 'U+2066'],
  ['PDI', '\u2069', 'U+2069'],
];

/** How a problem names the character: `the control character U+001B`, `the bidirectional control U+202E`. */
const named = (code: string): string =>
  code.startsWith('U+20') ? `the bidirectional control ${code}` : `the control character ${code}`;

describe.each(FORBIDDEN)('an id holding %s is refused with SESSION_KEY_INVALID', (_label, ch, code) => {
  const id = `ev${ch}e`;

  it('by every SessionKey factory, naming the character and where it is', () => {
    const calls: [string, () => unknown][] = [
      ['main key', () => SessionKey.main('main', id)],
      ['peer id', () => SessionKey.directMessage('main', 'telegram', id)],
      ['peer id', () => SessionKey.directMessage('main', 'matrix', id, 'per-channel-peer', { caseSensitive: true })],
      ['peer id', () => SessionKey.group('main', 'slack', 'group', id)],
      ['thread id', () => SessionKey.group('main', 'slack', 'group', 'g', { threadId: id })],
      ['task id', () => SessionKey.task('main', 'cron', id)],
      ['subagent id', () => SessionKey.subagent(SessionKey.main('main'), id)],
      ['ephemeral id', () => SessionKey.ephemeral('main', id)],
    ];
    for (const [what, call] of calls) {
      const error = keyError(call);
      expect(error.code).toBe('SESSION_KEY_INVALID');
      expect(error.problem).toBe(`${what} contains ${named(code)} at index 2`);
      expect(error.message).toContain('expected an id without control characters');
    }
  });

  it('by formatSessionKey, for a key object built by hand', () => {
    const key = { kind: 'direct_message', agentId: 'main', peerId: id, dmScope: 'per-peer' } as SessionKeyShape;
    const error = keyError(() => formatSessionKey(key));
    expect(error.code).toBe('SESSION_KEY_INVALID');
    expect(error.problem).toContain(`contains ${named(code)} at index 2`);
  });

  it('by parseSessionKey, in every id segment', () => {
    for (const text of [
      `agent:main:${id}`,
      `agent:main:dm:${id}`,
      `agent:main:telegram:group:${id}`,
      `agent:main:telegram:group:g:thread:${id}`,
      `agent:main:cron:${id}`,
      `agent:main:main:subagent:${id}`,
      `agent:main:ephemeral:${id}`,
    ]) {
      const error = keyError(() => parseSessionKey(text));
      expect(error.code).toBe('SESSION_KEY_INVALID');
      expect(error.problem).toContain(code);
    }
  });

  it('by RouteResolver.resolve, in every id of the inbound message', () => {
    const resolver = new RouteResolver({});
    expect(keyError(() => resolver.resolve({ channel: 'telegram', peer: { kind: 'dm', id } })).problem).toBe(
      `peer id contains ${named(code)} at index 2`,
    );
    for (const input of [
      { channel: 'slack', peer: { kind: 'group' as const, id } },
      { channel: 'slack', peer: { kind: 'channel' as const, id: 'c' }, threadId: id },
      { channel: 'slack', accountId: id },
      { channel: 'discord', guildId: id },
      { channel: 'slack', teamId: id },
    ]) {
      expect(keyError(() => resolver.resolve(input)).problem).toContain(code);
    }
  });

  it('by resolveLinkedPeerId and by a routing config (binding ids, identity-link names and entries)', () => {
    expect(keyError(() => resolveLinkedPeerId({ john: ['telegram:1'] }, 'telegram', id)).problem).toContain(code);
    const problems = configProblems(
      () =>
        new RouteResolver({
          session: { identityLinks: { [id]: ['telegram:1'], mary: [`telegram:${id}`] } },
          bindings: [{ agentId: 'a', match: { channel: 'telegram', peer: { kind: 'dm', id } } }],
        }),
    );
    expect(problemAt(problems, 'bindings[0].match.peer.id').message).toContain(code);
    expect(problemAt(problems, 'session.identityLinks.mary[0]').message).toContain(code);
    expect(problems.some((p) => p.path.startsWith('session.identityLinks[') && p.message.includes(code))).toBe(true);
  });
});

describe('what stays as it was', () => {
  it('whitespace at the ends of an id is trimmed, as before: "\\teve\\n" is the peer "eve"', () => {
    expect(formatSessionKey(SessionKey.directMessage('main', 'telegram', '\teve\n'))).toBe('agent:main:dm:eve');
    const resolver = new RouteResolver({});
    expect(
      formatSessionKey(resolver.resolve({ channel: 'telegram', peer: { kind: 'dm', id: ' eve\r\n' } }).sessionKey),
    ).toBe('agent:main:dm:eve');
  });

  it('other Unicode, including format characters that are not bidirectional controls, is kept', () => {
    for (const id of ['émigré', 'зоя', '😀', 'a\u200db', 'a\u00a0b', 'a\u2027b', 'a\u206ab']) {
      const key = SessionKey.directMessage('main', 'telegram', id);
      expect(parseSessionKey(formatSessionKey(key))).toEqual({
        kind: 'direct_message',
        agentId: 'main',
        peerId: id,
        dmScope: 'per-peer',
      });
    }
  });

  it('a routing TOML with a control character in a peer id names it with its line', () => {
    const toml = [
      '[routing]',
      '[[routing.bindings]]',
      'agent_id = "a"',
      'match = { channel = "telegram", peer = { kind = "dm", id = "ev\\u001be" } }',
    ].join('\n');
    const problem = problemAt(
      configProblems(() => parseRoutingConfig(toml)),
      'routing.bindings[0].match.peer.id',
    );
    expect(problem.message).toContain('U+001B');
    expect(problem.line).toBe(4);
  });

  it('for any id: a factory either refuses it with SESSION_KEY_INVALID or makes a key free of every forbidden character', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', minLength: 1, maxLength: 8 }), (id) => {
        let text: string;
        try {
          text = formatSessionKey(
            SessionKey.directMessage('main', 'telegram', id, 'per-peer', { caseSensitive: true }),
          );
        } catch (error) {
          expect(
            keyError(() => {
              throw error;
            }).code,
          ).toBe('SESSION_KEY_INVALID');
          return;
        }
        expect(FORBIDDEN_ID_CHARACTER.test(text)).toBe(false);
        expect(formatSessionKey(parseSessionKey(text))).toBe(text);
      }),
      { numRuns: 2000 },
    );
  });
});
