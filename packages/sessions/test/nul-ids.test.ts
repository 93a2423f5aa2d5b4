// NUL (U+0000) in ids: the checkpoint stores and the session locks refuse a key holding one, so a
// peer whose id held NUL failed on every message, deep in the store. The rule, end to end: ids
// must not contain NUL; every boundary refuses one with SessionKeyError (SESSION_KEY_INVALID).
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { unstorableTextIndex } from '@signalyard/core/internal';
import {
  RouteResolver,
  SessionKey,
  SessionKeyError,
  formatSessionKey,
  parseRoutingConfig,
  parseSessionKey,
  resolveLinkedPeerId,
  type InboundRoute,
  type ResolvedRoute,
} from '@signalyard/sessions';
import { configProblems, keyError, problemAt } from './support.js';

const NUL = '\u0000';

describe('ids with NUL are refused at every boundary', () => {
  it('RouteResolver.resolve refuses a DM peer id with NUL, naming the field', () => {
    const resolver = new RouteResolver({});
    const error = keyError(() => resolver.resolve({ channel: 'telegram', peer: { kind: 'dm', id: `eve${NUL}` } }));
    expect(error.problem).toBe('peer id contains a NUL character (U+0000) at index 3');
    expect(error.input).toBe(`eve${NUL}`);
    expect(error.message).toContain('Cannot route inbound message: peer id "eve\\u0000" contains a NUL character');
  });

  it('RouteResolver.resolve refuses NUL in every id of the inbound message, whatever the DM scope', () => {
    const inputs: [string, InboundRoute][] = [
      ['peer id', { channel: 'slack', peer: { kind: 'group', id: `${NUL}room` } }],
      ['thread id', { channel: 'slack', peer: { kind: 'channel', id: 'c1' }, threadId: `t${NUL}1` }],
      ['account id', { channel: 'slack', accountId: `acc${NUL}` }],
      ['guild id', { channel: 'discord', guildId: `g${NUL}` }],
      ['team id', { channel: 'slack', teamId: NUL }],
    ];
    for (const dmScope of ['main', 'per-peer', 'per-channel-peer'] as const) {
      const resolver = new RouteResolver({ session: { dmScope } });
      for (const [field, input] of inputs) {
        expect(keyError(() => resolver.resolve(input)).problem).toMatch(
          new RegExp(`^${field} contains a NUL character`),
        );
      }
      expect(keyError(() => resolver.resolve({ channel: 'x', peer: { kind: 'dm', id: NUL } })).problem).toMatch(
        /^peer id contains a NUL/,
      );
    }
  });

  it('every key the resolver does return can be stored: formatted, it holds no NUL', () => {
    const resolver = new RouteResolver({});
    for (const id of ['eve', ' eve ', '\teve\n', 'ève']) {
      const key = formatSessionKey(resolver.resolve({ channel: 'telegram', peer: { kind: 'dm', id } }).sessionKey);
      expect(unstorableTextIndex(key)).toBe(-1);
      expect(parseSessionKey(key)).toBeDefined();
    }
  });

  it('the SessionKey factories refuse NUL in every id', () => {
    const cases: [string, () => unknown][] = [
      ['main key', () => SessionKey.main('main', `m${NUL}`)],
      ['peer id', () => SessionKey.directMessage('main', 'telegram', `eve${NUL}`)],
      [
        'peer id',
        () => SessionKey.directMessage('main', 'matrix', `@E${NUL}`, 'per-channel-peer', { caseSensitive: true }),
      ],
      ['peer id', () => SessionKey.group('main', 'slack', 'group', `g${NUL}`)],
      ['thread id', () => SessionKey.group('main', 'slack', 'group', 'g', { threadId: NUL })],
      ['task id', () => SessionKey.task('main', 'cron', `daily${NUL}`)],
      ['subagent id', () => SessionKey.subagent(SessionKey.main('main'), `${NUL}x`)],
      ['ephemeral id', () => SessionKey.ephemeral('main', `e${NUL}`)],
    ];
    for (const [field, build] of cases) {
      expect(keyError(build).problem).toMatch(new RegExp(`^${field} contains a NUL character \\(U\\+0000\\)`));
    }
  });

  it('formatSessionKey refuses a hand-built key object whose id holds NUL', () => {
    const error = keyError(() =>
      formatSessionKey({ kind: 'direct_message', agentId: 'main', peerId: `eve${NUL}`, dmScope: 'per-peer' }),
    );
    expect(error.message).toContain('peerId "eve\\u0000" contains a NUL character (U+0000) at index 3');
    expect(() =>
      formatSessionKey({ kind: 'group', agentId: 'main', channel: 'x', peerKind: 'group', peerId: 'G', threadId: NUL }),
    ).toThrow(expect.objectContaining({ code: 'SESSION_KEY_INVALID' }));
  });

  it('parseSessionKey refuses NUL, raw or escaped as %00, in any id', () => {
    expect(keyError(() => parseSessionKey(`agent:main:dm:eve${NUL}`)).problem).toBe(
      'the peer id "eve\\u0000" contains a NUL character (U+0000): ids cannot contain NUL',
    );
    expect(keyError(() => parseSessionKey('agent:main:dm:eve%00')).problem).toBe(
      'escape "%00" in the peer id stands for a NUL character (U+0000): ids cannot contain NUL',
    );
    for (const text of [
      `agent:main:m${NUL}`,
      `agent:main:cron:${NUL}`,
      'agent:main:main:subagent:a%00',
      `agent:main:telegram:group:g:thread:${NUL}t`,
      `agent:main:ephemeral:%00`,
    ]) {
      expect(keyError(() => parseSessionKey(text)).problem).toContain('NUL character (U+0000)');
    }
  });

  it('a routing config refuses NUL in binding ids, identity-link names and entries, each with its path', () => {
    const problems = configProblems(
      () =>
        new RouteResolver({
          session: { identityLinks: { [`jo${NUL}hn`]: ['telegram:1'], mary: [`telegram:2${NUL}`] } },
          bindings: [
            { agentId: 'a', match: { channel: 'telegram', peer: { kind: 'dm', id: `eve${NUL}` } } },
            { agentId: 'b', match: { guildId: NUL } },
          ],
        }),
    );
    expect(problemAt(problems, 'session.identityLinks["jo\\u0000hn"]').message).toContain('contains a NUL character');
    expect(problemAt(problems, 'session.identityLinks.mary[0]').message).toContain('contains a NUL character');
    expect(problemAt(problems, 'bindings[0].match.peer.id').message).toContain('contains a NUL character');
    expect(problemAt(problems, 'bindings[1].match.guildId').message).toContain('contains a NUL character');
  });

  it('the routing TOML refuses a NUL peer id, with its line', () => {
    const toml = [
      '[routing]',
      '[[routing.bindings]]',
      'agent_id = "a"',
      'match = { channel = "telegram", peer = { kind = "dm", id = "eve\\u0000" } }',
    ].join('\n');
    const problem = problemAt(
      configProblems(() => parseRoutingConfig(toml)),
      'routing.bindings[0].match.peer.id',
    );
    expect(problem.message).toContain('contains a NUL character');
    expect(problem.line).toBe(4);
  });

  it('resolveLinkedPeerId refuses a NUL peer id', () => {
    expect(keyError(() => resolveLinkedPeerId({ john: ['telegram:1'] }, 'telegram', `1${NUL}`)).problem).toBe(
      'peer id contains a NUL character (U+0000) at index 1',
    );
  });

  it('resolve on arbitrary ids either refuses with SessionKeyError or returns a key every store can hold', () => {
    const id = fc.oneof(
      fc.string({ unit: 'binary', minLength: 1, maxLength: 8 }),
      fc.constantFrom(NUL, `a${NUL}`, '\ud800', 'a\udc00b', 'eve'),
    );
    const resolvers = [new RouteResolver({}), new RouteResolver({ session: { dmScope: 'per-channel-peer' } })];
    fc.assert(
      fc.property(
        id,
        fc.option(id, { nil: undefined }),
        fc.constantFrom('dm', 'group'),
        fc.nat(1),
        (peer, thread, kind, r) => {
          let route: ResolvedRoute;
          try {
            route = (resolvers[r] as RouteResolver).resolve({
              channel: 'telegram',
              peer: { kind, id: peer },
              ...(thread === undefined ? {} : { threadId: thread }),
            });
          } catch (error) {
            expect(SessionKeyError.isInstance(error)).toBe(true);
            return;
          }
          const key = formatSessionKey(route.sessionKey); // a returned key always formats
          expect(unstorableTextIndex(key)).toBe(-1);
          expect(formatSessionKey(parseSessionKey(key))).toBe(key);
        },
      ),
      { numRuns: 1000 },
    );
  });
});
