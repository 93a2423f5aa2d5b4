// Named regression tests for the defects of the source system that the contract fixes:
// colliding keys, case-folding that merged different users' DMs, identity links that matched
// across channels, binding scopes that were not combined, dead or unscoped bindings, and
// prototype keys reaching objects.
import { describe, expect, it } from 'vitest';
import {
  RouteResolver,
  SessionKey,
  formatSessionKey,
  parseRoutingConfig,
  parseSessionKey,
  resolveLinkedPeerId,
  resolveRoute,
  type TaskType,
} from '@signalyard/sessions';
import { configProblems, keyError, problemAt } from './support.js';

describe('regression: colliding keys', () => {
  it('a group id "chat:thread:t1" and group "chat" thread "t1" are different sessions', () => {
    const odd = SessionKey.group('main', 'telegram', 'group', 'chat:thread:t1');
    const threaded = SessionKey.group('main', 'telegram', 'group', 'chat', { threadId: 't1' });
    expect(formatSessionKey(odd)).toBe('agent:main:telegram:group:chat%3athread%3at1');
    expect(formatSessionKey(threaded)).toBe('agent:main:telegram:group:chat:thread:t1');
    expect(parseSessionKey(formatSessionKey(odd))).toStrictEqual(odd);
    expect(parseSessionKey(formatSessionKey(threaded))).toStrictEqual(threaded);
  });

  it('the same collision through the resolver', () => {
    const a = resolveRoute({}, { channel: 'telegram', peer: { kind: 'group', id: 'chat:thread:t1' } });
    const b = resolveRoute({}, { channel: 'telegram', peer: { kind: 'group', id: 'chat' }, threadId: 't1' });
    expect(formatSessionKey(a.sessionKey)).not.toBe(formatSessionKey(b.sessionKey));
  });

  it('a DM peer "x:subagent:y" is not a subagent of the DM with x', () => {
    const dm = SessionKey.directMessage('main', 'telegram', 'x:subagent:y');
    const sub = SessionKey.subagent(SessionKey.directMessage('main', 'telegram', 'x'), 'y');
    expect(formatSessionKey(dm)).not.toBe(formatSessionKey(sub));
    expect(parseSessionKey(formatSessionKey(dm)).kind).toBe('direct_message');
  });

  it('a peer id that is itself an escape ("%3a") is not the peer ":"', () => {
    expect(formatSessionKey(SessionKey.directMessage('main', 'tg', '%3a'))).toBe('agent:main:dm:%253a');
    expect(formatSessionKey(SessionKey.directMessage('main', 'tg', ':'))).toBe('agent:main:dm:%3a');
  });

  it('a task of type "dm" is rejected: it would be the per-peer DM key', () => {
    const error = keyError(() => SessionKey.task('main', 'dm' as TaskType, 'user123'));
    expect(error.message).toContain('task type "dm"');
    keyError(() => formatSessionKey({ kind: 'task', agentId: 'main', taskType: 'dm' as TaskType, taskId: 'user123' }));
    expect(parseSessionKey('agent:main:dm:user123').kind).toBe('direct_message');
  });

  it('an agent id with no valid character is rejected instead of becoming "main"', () => {
    keyError(() => SessionKey.main('!!!'));
    expect(formatSessionKey(SessionKey.main('main'))).toBe('agent:main:main');
  });
});

describe('regression: case-folding merged different users', () => {
  it('"AbC" and "abc" on a case-sensitive channel are different sessions', () => {
    const resolver = new RouteResolver({ session: { caseSensitiveChannels: ['matrix'] } });
    const upper = resolver.resolve({ channel: 'matrix', peer: { kind: 'dm', id: 'AbC' } }).sessionKey;
    const lower = resolver.resolve({ channel: 'matrix', peer: { kind: 'dm', id: 'abc' } }).sessionKey;
    expect(formatSessionKey(upper)).toBe('agent:main:dm:%41b%43');
    expect(formatSessionKey(lower)).toBe('agent:main:dm:abc');
    expect(parseSessionKey(formatSessionKey(upper))).toMatchObject({ peerId: 'AbC' });
  });

  it('the same under per-channel-peer, and for groups and threads', () => {
    const resolver = new RouteResolver({ session: { dmScope: 'per-channel-peer', caseSensitiveChannels: ['Signal'] } });
    const key = (id: string, threadId?: string) =>
      formatSessionKey(
        resolver.resolve({
          channel: 'signal',
          peer: { kind: 'group', id },
          ...(threadId === undefined ? {} : { threadId }),
        }).sessionKey,
      );
    expect(key('AbC')).not.toBe(key('abc'));
    expect(key('g', 'T')).not.toBe(key('g', 't'));
    const dm = (id: string) =>
      formatSessionKey(resolver.resolve({ channel: 'signal', peer: { kind: 'dm', id } }).sessionKey);
    expect(dm('AbC')).not.toBe(dm('abc'));
  });

  it('channels that are not case-sensitive still fold case', () => {
    const resolver = new RouteResolver({ session: { caseSensitiveChannels: ['matrix'] } });
    const a = resolver.resolve({ channel: 'telegram', peer: { kind: 'dm', id: 'AbC' } }).sessionKey;
    const b = resolver.resolve({ channel: 'telegram', peer: { kind: 'dm', id: 'abc' } }).sessionKey;
    expect(formatSessionKey(a)).toBe(formatSessionKey(b));
  });
});

describe('regression: identity links matched across channels', () => {
  it('a bare identity link is a config error (TOML and code)', () => {
    const problems = configProblems(() => parseRoutingConfig('[routing.session.identity_links]\njohn = ["123456"]\n'));
    expect(problemAt(problems, 'routing.session.identity_links.john[0]')).toMatchObject({ line: 2 });
    configProblems(() => new RouteResolver({ session: { identityLinks: { john: ['123456'] } } }));
    configProblems(() => resolveLinkedPeerId({ john: ['123456'] }, 'discord', '123456'));
  });

  it('a link for telegram:123456 does not pull discord user 123456 into the session', () => {
    const resolver = new RouteResolver({ session: { identityLinks: { john: ['telegram:123456'] } } });
    expect(
      formatSessionKey(resolver.resolve({ channel: 'discord', peer: { kind: 'dm', id: '123456' } }).sessionKey),
    ).toBe('agent:main:dm:123456');
    expect(
      formatSessionKey(resolver.resolve({ channel: 'telegram', peer: { kind: 'dm', id: '123456' } }).sessionKey),
    ).toBe('agent:main:dm:john');
  });

  it('one channel:id linked to two people is a config error, not "whichever comes first"', () => {
    configProblems(() => new RouteResolver({ session: { identityLinks: { a: ['telegram:1'], b: ['telegram:1'] } } }));
  });
});

describe('regression: binding scopes were not combined', () => {
  it('"this peer in team T" does not match the peer in another team', () => {
    const resolver = new RouteResolver({
      bindings: [{ agentId: 'vip', match: { channel: 'slack', teamId: 'T1', peer: { kind: 'dm', id: 'U1' } } }],
    });
    expect(resolver.resolve({ channel: 'slack', teamId: 'T1', peer: { kind: 'dm', id: 'U1' } }).agentId).toBe('vip');
    expect(resolver.resolve({ channel: 'slack', teamId: 'T2', peer: { kind: 'dm', id: 'U1' } }).agentId).toBe('main');
  });

  it('a binding for a guild and an account needs both', () => {
    const resolver = new RouteResolver({ bindings: [{ agentId: 'g', match: { guildId: 'G1', accountId: 'bot-a' } }] });
    expect(resolver.resolve({ channel: 'discord', guildId: 'G1', accountId: 'bot-b' }).agentId).toBe('main');
    expect(resolver.resolve({ channel: 'discord', guildId: 'G1', accountId: 'bot-a' }).agentId).toBe('g');
  });

  it('a peer binding without a channel is a config error (omitted or "*")', () => {
    const toml = (channel: string) => `[[routing.bindings]]
agent_id = "vip"
[routing.bindings.match]
${channel}
[routing.bindings.match.peer]
kind = "dm"
id = "user-vip"
`;
    expect(
      problemAt(
        configProblems(() => parseRoutingConfig(toml(''))),
        'routing.bindings[0].match.channel',
      ).message,
    ).toContain('every channel');
    expect(
      problemAt(
        configProblems(() => parseRoutingConfig(toml('channel = "*"'))),
        'routing.bindings[0].match.channel',
      ).line,
    ).toBe(4);
    configProblems(
      () => new RouteResolver({ bindings: [{ agentId: 'vip', match: { peer: { kind: 'dm', id: 'user-vip' } } }] }),
    );
  });

  it('a dead duplicate binding is a config error', () => {
    const problems = configProblems(
      () =>
        new RouteResolver({
          bindings: [
            { agentId: 'a', match: { channel: 'telegram', accountId: '*' } },
            { agentId: 'b', match: { channel: ' TELEGRAM ' } },
          ],
        }),
    );
    expect(problemAt(problems, 'bindings[1]').message).toContain('can never win');
  });
});

describe('regression: __proto__ / constructor as ids', () => {
  const ids = ['__proto__', 'constructor', 'prototype', 'hasOwnProperty', 'toString'];

  it.each(ids)('%s works as an agent id, peer id, guild, team and account id', (id) => {
    const channel = id === '__proto__' ? 'proto' : id.toLowerCase();
    const agent = id.toLowerCase();
    const resolver = new RouteResolver({
      defaultAgentId: agent,
      bindings: [
        { agentId: agent, match: { channel, peer: { kind: 'dm', id } } },
        { agentId: 'by-guild', match: { guildId: id } },
        { agentId: 'by-team', match: { teamId: id } },
        { agentId: 'by-account', match: { accountId: id } },
      ],
    });
    expect(resolver.resolve({ channel, peer: { kind: 'dm', id } })).toMatchObject({
      agentId: agent,
      matchedBy: 'peer',
    });
    expect(resolver.resolve({ channel: 'x', guildId: id }).agentId).toBe('by-guild');
    expect(resolver.resolve({ channel: 'x', teamId: id }).agentId).toBe('by-team');
    expect(resolver.resolve({ channel: 'x', accountId: id }).agentId).toBe('by-account');
    // Nothing inherited from Object.prototype ever matches.
    const empty = new RouteResolver({});
    const route = empty.resolve({ channel: 'x', accountId: id, guildId: id, teamId: id, peer: { kind: 'dm', id } });
    expect(route.matchedBy).toBe('default');
    expect(formatSessionKey(route.sessionKey)).toBe(`agent:main:dm:${id.toLowerCase()}`);
  });

  it.each(ids)('%s round-trips as every id of a session key', (id) => {
    const keys = [
      SessionKey.main(id, id),
      SessionKey.directMessage(id, 'tg', id, 'per-channel-peer', { caseSensitive: true }),
      SessionKey.group(id, 'tg', 'group', id, { threadId: id }),
      SessionKey.task(id, 'cron', id),
      SessionKey.subagent(SessionKey.main(id), id),
      SessionKey.ephemeral(id, id),
    ];
    for (const key of keys) expect(parseSessionKey(formatSessionKey(key))).toStrictEqual(key);
  });

  it('unlinked ids named like Object.prototype members are not linked', () => {
    const resolver = new RouteResolver({ session: { identityLinks: { john: ['telegram:1'] } } });
    for (const id of ids) {
      expect(formatSessionKey(resolver.resolve({ channel: 'telegram', peer: { kind: 'dm', id } }).sessionKey)).toBe(
        `agent:main:dm:${id.toLowerCase()}`,
      );
      expect(resolveLinkedPeerId({ john: ['telegram:1'] }, 'telegram', id)).toBeUndefined();
    }
  });

  it('as identity-link names and config keys they are rejected, and nothing is polluted', () => {
    const links = JSON.parse('{"__proto__": ["telegram:1"], "constructor": ["telegram:2"]}') as Record<
      string,
      string[]
    >;
    const problems = configProblems(() => new RouteResolver({ session: { identityLinks: links } }));
    expect(problemAt(problems, 'session.identityLinks.__proto__').message).toContain('reserved');
    expect(problemAt(problems, 'session.identityLinks.constructor').message).toContain('reserved');
    const topLevel = JSON.parse('{"__proto__": {"polluted": true}, "bindings": []}') as object;
    expect(
      problemAt(
        configProblems(() => new RouteResolver(topLevel)),
        '__proto__',
      ).message,
    ).toContain('unknown key');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
