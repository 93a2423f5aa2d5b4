import { describe, expect, it } from 'vitest';
import {
  RouteResolver,
  SessionKey,
  formatSessionKey,
  parseRoutingConfig,
  resolveRoute,
  type InboundRoute,
  type MatchedBy,
  type RoutingConfigInput,
} from '@signalyard/sessions';
import { configProblems, keyError, problemAt } from './support.js';

const keyOf = (resolver: RouteResolver, input: InboundRoute): string =>
  formatSessionKey(resolver.resolve(input).sessionKey);

// The "Full Resolution Example" of the source design, with the contract's decisions.
const FULL_EXAMPLE: RoutingConfigInput = {
  session: { dmScope: 'per-peer', identityLinks: { john: ['telegram:123', 'discord:456'] } },
  bindings: [
    { agentId: 'work', match: { channel: 'slack', accountId: '*', teamId: 'T12345' } },
    { agentId: 'general', match: { channel: 'telegram', accountId: '*' } },
  ],
};

const FULL_EXAMPLE_TOML = `
[routing.session]
dm_scope = "per-peer"

[routing.session.identity_links]
john = ["telegram:123", "discord:456"]

[[routing.bindings]]
agent_id = "work"
[routing.bindings.match]
channel = "slack"
account_id = "*"
team_id = "T12345"

[[routing.bindings]]
agent_id = "general"
[routing.bindings.match]
channel = "telegram"
account_id = "*"
`;

const FULL_TABLE: [string, InboundRoute, MatchedBy, string, string][] = [
  [
    'Telegram DM from user 123',
    { channel: 'telegram', peer: { kind: 'dm', id: '123' } },
    'channel',
    'general',
    'agent:general:dm:john',
  ],
  [
    'Telegram group grp1',
    { channel: 'telegram', peer: { kind: 'group', id: 'grp1' } },
    'channel',
    'general',
    'agent:general:telegram:group:grp1',
  ],
  [
    'Discord DM from user 456',
    { channel: 'discord', peer: { kind: 'dm', id: '456' } },
    'default',
    'main',
    'agent:main:dm:john',
  ],
  [
    'Slack DM in team T12345',
    { channel: 'slack', teamId: 'T12345', peer: { kind: 'dm', id: 'user789' } },
    'team',
    'work',
    'agent:work:dm:user789',
  ],
  ['CLI local session', { channel: 'cli' }, 'default', 'main', 'agent:main:main'],
];

describe('the full resolution example (five rows)', () => {
  const fromCode = new RouteResolver(FULL_EXAMPLE);
  const fromToml = new RouteResolver(parseRoutingConfig(FULL_EXAMPLE_TOML));
  it.each(FULL_TABLE)('%s', (_name, input, matchedBy, agentId, key) => {
    for (const resolver of [fromCode, fromToml]) {
      const route = resolver.resolve(input);
      expect(route.matchedBy).toBe(matchedBy);
      expect(route.agentId).toBe(agentId);
      expect(formatSessionKey(route.sessionKey)).toBe(key);
      expect(route.mainSessionKey).toStrictEqual(SessionKey.main(agentId));
    }
  });

  it('resolveRoute gives the same answers', () => {
    for (const [, input, matchedBy, agentId, key] of FULL_TABLE) {
      const route = resolveRoute(FULL_EXAMPLE, input);
      expect([route.matchedBy, route.agentId, formatSessionKey(route.sessionKey)]).toStrictEqual([
        matchedBy,
        agentId,
        key,
      ]);
    }
  });
});

describe('the source incoming-message example', () => {
  it('telegram DM to bot-123 with no bindings: default agent, DM key, main key', () => {
    const route = resolveRoute({}, { channel: 'telegram', accountId: 'bot-123', peer: { kind: 'dm', id: 'user456' } });
    expect(route).toStrictEqual({
      agentId: 'main',
      channel: 'telegram',
      accountId: 'bot-123',
      sessionKey: SessionKey.directMessage('main', 'telegram', 'user456'),
      mainSessionKey: SessionKey.main('main'),
      matchedBy: 'default',
    });
  });
});

describe('tiers: peer > guild > team > account > channel > default', () => {
  // Declared lowest tier first, so config order cannot explain the outcome.
  const resolver = new RouteResolver({
    bindings: [
      { agentId: 'by-channel', match: { channel: 'discord' } },
      { agentId: 'by-account', match: { channel: 'discord', accountId: 'bot-1' } },
      { agentId: 'by-team', match: { channel: 'discord', teamId: 'T1' } },
      { agentId: 'by-guild', match: { channel: 'discord', guildId: 'G1' } },
      { agentId: 'by-peer', match: { channel: 'discord', peer: { kind: 'dm', id: 'u1' } } },
    ],
  });
  const all: InboundRoute = {
    channel: 'discord',
    accountId: 'bot-1',
    guildId: 'G1',
    teamId: 'T1',
    peer: { kind: 'dm', id: 'u1' },
  };
  const cases: [string, InboundRoute, MatchedBy, string][] = [
    ['peer beats all', all, 'peer', 'by-peer'],
    ['guild beats team, account, channel', { ...all, peer: { kind: 'dm', id: 'u2' } }, 'guild', 'by-guild'],
    ['team beats account and channel', { ...all, guildId: 'G2', peer: { kind: 'dm', id: 'u2' } }, 'team', 'by-team'],
    ['account beats channel', { channel: 'discord', accountId: 'bot-1' }, 'account', 'by-account'],
    ['channel beats default', { channel: 'discord', accountId: 'bot-2' }, 'channel', 'by-channel'],
    ['default when nothing matches', { channel: 'slack' }, 'default', 'main'],
  ];
  it.each(cases)('%s', (_name, input, matchedBy, agentId) => {
    const route = resolver.resolve(input);
    expect(route.matchedBy).toBe(matchedBy);
    expect(route.agentId).toBe(agentId);
    if (matchedBy === 'default') expect(route.binding).toBeUndefined();
    else expect(route.binding?.agentId).toBe(agentId);
  });

  it('within a tier, the first binding in config order wins', () => {
    const r = new RouteResolver({
      bindings: [
        { agentId: 'first', match: { channel: 'slack', teamId: 'T1' } },
        { agentId: 'second', match: { teamId: 'T1' } },
        { agentId: 'third', match: { channel: 'slack', teamId: 'T1', accountId: 'a' } },
      ],
    });
    expect(r.resolve({ channel: 'slack', teamId: 'T1', accountId: 'a' }).agentId).toBe('first');
    const reversed = new RouteResolver({
      bindings: [
        { agentId: 'third', match: { channel: 'slack', teamId: 'T1', accountId: 'a' } },
        { agentId: 'second', match: { teamId: 'T1' } },
      ],
    });
    expect(reversed.resolve({ channel: 'slack', teamId: 'T1', accountId: 'a' }).agentId).toBe('third');
    expect(reversed.resolve({ channel: 'slack', teamId: 'T1', accountId: 'b' }).agentId).toBe('second');
  });

  it('a binding with only wildcards is in the channel tier: below an account binding, above the default', () => {
    const r = new RouteResolver({
      bindings: [
        { agentId: 'anything', match: { channel: '*', accountId: '*' } },
        { agentId: 'bot', match: { accountId: 'bot-1' } },
      ],
    });
    expect(r.resolve({ channel: 'irc', accountId: 'bot-1' })).toMatchObject({ agentId: 'bot', matchedBy: 'account' });
    expect(r.resolve({ channel: 'irc' })).toMatchObject({ agentId: 'anything', matchedBy: 'channel' });
    expect(new RouteResolver({ bindings: [{ agentId: 'all', match: {} }] }).resolve({ channel: 'x' })).toMatchObject({
      agentId: 'all',
      matchedBy: 'channel',
    });
  });

  it('in the channel tier, a specific channel and a wildcard are ranked by config order', () => {
    const wildFirst = new RouteResolver({
      bindings: [
        { agentId: 'wild', match: { channel: '*' } },
        { agentId: 'tg', match: { channel: 'telegram' } },
      ],
    });
    expect(wildFirst.resolve({ channel: 'telegram' }).agentId).toBe('wild');
    const specificFirst = new RouteResolver({
      bindings: [
        { agentId: 'tg', match: { channel: 'telegram' } },
        { agentId: 'wild', match: { channel: '*' } },
      ],
    });
    expect(specificFirst.resolve({ channel: 'telegram' }).agentId).toBe('tg');
    expect(specificFirst.resolve({ channel: 'discord' }).agentId).toBe('wild');
  });

  it('the account tier needs a specific account id: "*" is a wildcard', () => {
    const r = new RouteResolver({ bindings: [{ agentId: 'tg', match: { channel: 'telegram', accountId: '*' } }] });
    expect(r.resolve({ channel: 'telegram', accountId: 'bot-9' }).matchedBy).toBe('channel');
  });

  it('the input account id defaults to "default"', () => {
    const r = new RouteResolver({ bindings: [{ agentId: 'dflt', match: { accountId: 'Default' } }] });
    expect(r.resolve({ channel: 'telegram' })).toMatchObject({
      agentId: 'dflt',
      matchedBy: 'account',
      accountId: 'default',
    });
  });
});

describe('bindings are conjunctive', () => {
  const resolver = new RouteResolver({
    bindings: [
      { agentId: 'vip-in-t1', match: { channel: 'slack', teamId: 'T1', peer: { kind: 'dm', id: 'U1' } } },
      { agentId: 'bot-a-on-tg', match: { channel: 'telegram', accountId: 'bot-a' } },
      { agentId: 'guild-on-discord', match: { channel: 'discord', guildId: 'G1', accountId: 'bot-x' } },
    ],
  });

  it('"this peer in team T" does not match the peer in another team, or with no team', () => {
    expect(resolver.resolve({ channel: 'slack', teamId: 'T1', peer: { kind: 'dm', id: 'U1' } }).agentId).toBe(
      'vip-in-t1',
    );
    expect(resolver.resolve({ channel: 'slack', teamId: 'T2', peer: { kind: 'dm', id: 'U1' } }).matchedBy).toBe(
      'default',
    );
    expect(resolver.resolve({ channel: 'slack', peer: { kind: 'dm', id: 'U1' } }).matchedBy).toBe('default');
  });

  it('an account binding with a channel does not match that account on another channel', () => {
    expect(resolver.resolve({ channel: 'telegram', accountId: 'bot-a' }).agentId).toBe('bot-a-on-tg');
    expect(resolver.resolve({ channel: 'discord', accountId: 'bot-a' }).matchedBy).toBe('default');
  });

  it('a guild binding checks its account and channel too', () => {
    expect(resolver.resolve({ channel: 'discord', guildId: 'G1', accountId: 'bot-x' }).agentId).toBe(
      'guild-on-discord',
    );
    expect(resolver.resolve({ channel: 'discord', guildId: 'G1', accountId: 'bot-y' }).matchedBy).toBe('default');
    expect(resolver.resolve({ channel: 'matrix', guildId: 'G1', accountId: 'bot-x' }).matchedBy).toBe('default');
  });

  it('a peer binding needs the same peer kind', () => {
    const r = new RouteResolver({
      bindings: [{ agentId: 'room', match: { channel: 'telegram', peer: { kind: 'group', id: 'x' } } }],
    });
    expect(r.resolve({ channel: 'telegram', peer: { kind: 'group', id: 'x' } }).agentId).toBe('room');
    expect(r.resolve({ channel: 'telegram', peer: { kind: 'dm', id: 'x' } }).matchedBy).toBe('default');
    expect(r.resolve({ channel: 'telegram', peer: { kind: 'channel', id: 'x' } }).matchedBy).toBe('default');
  });
});

describe('comparisons', () => {
  it('channel, account, guild and team ids are trimmed and case-insensitive', () => {
    const r = new RouteResolver({
      bindings: [
        { agentId: 'g', match: { channel: ' Discord ', guildId: ' Guild-A ' } },
        { agentId: 't', match: { channel: 'SLACK', teamId: 'tEaM' } },
        { agentId: 'a', match: { accountId: 'Bot-1' } },
      ],
    });
    expect(r.resolve({ channel: 'DISCORD', guildId: 'guild-a' }).agentId).toBe('g');
    expect(r.resolve({ channel: ' slack', teamId: ' TEAM ' }).agentId).toBe('t');
    expect(r.resolve({ channel: 'x', accountId: ' BOT-1 ' })).toMatchObject({
      agentId: 'a',
      accountId: 'BOT-1',
      channel: 'x',
    });
  });

  it('peer ids are case-insensitive, except on case-sensitive channels', () => {
    const r = new RouteResolver({
      session: { caseSensitiveChannels: ['Matrix'] },
      bindings: [
        { agentId: 'tg-vip', match: { channel: 'telegram', peer: { kind: 'dm', id: 'VIP' } } },
        { agentId: 'mx-vip', match: { channel: 'matrix', peer: { kind: 'dm', id: '@VIP:x.org' } } },
      ],
    });
    expect(r.resolve({ channel: 'telegram', peer: { kind: 'dm', id: 'vip' } }).agentId).toBe('tg-vip');
    expect(r.resolve({ channel: 'matrix', peer: { kind: 'dm', id: '@VIP:x.org' } }).agentId).toBe('mx-vip');
    expect(r.resolve({ channel: 'matrix', peer: { kind: 'dm', id: '@vip:x.org' } }).matchedBy).toBe('default');
  });

  it('peer ids compare in NFC', () => {
    const r = new RouteResolver({
      bindings: [{ agentId: 'jose', match: { channel: 'telegram', peer: { kind: 'dm', id: 'Jos\u00e9' } } }],
    });
    expect(r.resolve({ channel: 'telegram', peer: { kind: 'dm', id: 'jose\u0301' } }).agentId).toBe('jose');
  });
});

describe('peer bindings', () => {
  it('a VIP peer binding beats a channel binding (source example)', () => {
    const r = new RouteResolver(
      parseRoutingConfig(`
[[routing.bindings]]
agent_id = "telegram-agent"
[routing.bindings.match]
channel = "telegram"
account_id = "*"

[[routing.bindings]]
agent_id = "vip-agent"
[routing.bindings.match]
channel = "telegram"
account_id = "*"
[routing.bindings.match.peer]
kind = "dm"
id = "user-vip"
`),
    );
    expect(r.resolve({ channel: 'telegram', peer: { kind: 'dm', id: 'user-vip' } })).toMatchObject({
      agentId: 'vip-agent',
      matchedBy: 'peer',
    });
    expect(r.resolve({ channel: 'telegram', peer: { kind: 'dm', id: 'someone' } })).toMatchObject({
      agentId: 'telegram-agent',
      matchedBy: 'channel',
    });
  });

  it('compare against the raw peer id, not the linked person', () => {
    const r = new RouteResolver({
      session: { identityLinks: { john: ['telegram:123', 'discord:456'] } },
      bindings: [
        { agentId: 'johns-agent', match: { channel: 'telegram', peer: { kind: 'dm', id: 'john' } } },
        { agentId: 'raw-123', match: { channel: 'telegram', peer: { kind: 'dm', id: '123' } } },
      ],
    });
    const route = r.resolve({ channel: 'telegram', peer: { kind: 'dm', id: '123' } });
    expect(route.agentId).toBe('raw-123');
    expect(formatSessionKey(route.sessionKey)).toBe('agent:raw-123:dm:john');
  });

  it('a group binding covers the threads of that group, each thread its own session', () => {
    const r = new RouteResolver({
      bindings: [{ agentId: 'room', match: { channel: 'telegram', peer: { kind: 'group', id: 'chat789' } } }],
    });
    const route = r.resolve({ channel: 'telegram', peer: { kind: 'group', id: 'chat789' }, threadId: 't1' });
    expect(route.agentId).toBe('room');
    expect(route.matchedBy).toBe('peer');
    expect(formatSessionKey(route.sessionKey)).toBe('agent:room:telegram:group:chat789:thread:t1');
    expect(keyOf(r, { channel: 'telegram', peer: { kind: 'group', id: 'chat789' } })).toBe(
      'agent:room:telegram:group:chat789',
    );
  });

  it('a channel-kind peer binding covers its threads too', () => {
    const r = new RouteResolver({
      bindings: [{ agentId: 'news', match: { channel: 'slack', peer: { kind: 'channel', id: 'C1' } } }],
    });
    expect(
      r.resolve({ channel: 'slack', peer: { kind: 'channel', id: 'C1' }, threadId: '1700000000.0001' }).agentId,
    ).toBe('news');
  });

  it('a thread peer keys as a thread session', () => {
    expect(
      formatSessionKey(resolveRoute({}, { channel: 'discord', peer: { kind: 'thread', id: 'T9' } }).sessionKey),
    ).toBe('agent:main:discord:thread:t9');
  });
});

describe('a team binding (source example)', () => {
  it('routes a Slack workspace to the work agent', () => {
    const r = new RouteResolver(
      parseRoutingConfig(`
[[routing.bindings]]
agent_id = "work"
[routing.bindings.match]
channel = "slack"
account_id = "*"
team_id = "T12345"
`),
    );
    expect(r.resolve({ channel: 'slack', teamId: 'T12345', peer: { kind: 'channel', id: 'C1' } })).toMatchObject({
      agentId: 'work',
      matchedBy: 'team',
    });
    expect(r.resolve({ channel: 'slack', teamId: 'T99999', peer: { kind: 'channel', id: 'C1' } }).matchedBy).toBe(
      'default',
    );
  });
});

describe('session keys produced', () => {
  it('no peer → the main key of the agent', () => {
    const route = resolveRoute({ defaultAgentId: 'home' }, { channel: 'cli' });
    expect(route.sessionKey).toStrictEqual(SessionKey.main('home'));
    expect(route.sessionKey).toBe(route.mainSessionKey);
  });

  it("DM scope 'main' → every DM is the main session and identity links are ignored", () => {
    const r = new RouteResolver({ session: { dmScope: 'main', identityLinks: { john: ['telegram:1'] } } });
    expect(keyOf(r, { channel: 'telegram', peer: { kind: 'dm', id: '1' } })).toBe('agent:main:main');
    expect(keyOf(r, { channel: 'discord', peer: { kind: 'dm', id: '2' } })).toBe('agent:main:main');
  });

  it('per-channel-peer keys unlinked DMs per channel', () => {
    const r = new RouteResolver({ session: { dmScope: 'per-channel-peer' } });
    expect(keyOf(r, { channel: 'telegram', peer: { kind: 'dm', id: '123' } })).toBe('agent:main:telegram:dm:123');
    expect(keyOf(r, { channel: 'discord', peer: { kind: 'dm', id: '123' } })).toBe('agent:main:discord:dm:123');
  });

  it('groups are keyed per channel and kind; a DM threadId is ignored', () => {
    const r = new RouteResolver({});
    expect(keyOf(r, { channel: 'slack', peer: { kind: 'channel', id: 'C1' } })).toBe('agent:main:slack:channel:c1');
    expect(keyOf(r, { channel: 'telegram', peer: { kind: 'dm', id: 'u' }, threadId: 't' })).toBe('agent:main:dm:u');
  });

  it('case-sensitive channels keep the case of peer and thread ids in the key', () => {
    const r = new RouteResolver({ session: { caseSensitiveChannels: ['signal'] } });
    expect(keyOf(r, { channel: 'signal', peer: { kind: 'group', id: 'AbC' }, threadId: 'Th' })).toBe(
      'agent:main:signal:group:%41b%43:thread:%54h',
    );
  });
});

describe('ResolvedRoute', () => {
  it('carries the matching binding from the resolver config, and the normalised channel', () => {
    const r = new RouteResolver({ bindings: [{ agentId: 'tg', match: { channel: 'Telegram' } }] });
    const route = r.resolve({ channel: ' TELEGRAM ', accountId: ' Bot-7 ' });
    expect(route.binding).toBe(r.config.bindings[0]);
    expect(route).toMatchObject({ channel: 'telegram', accountId: 'Bot-7', matchedBy: 'channel' });
  });

  it('is frozen, like the resolver config', () => {
    const r = new RouteResolver(FULL_EXAMPLE);
    expect(Object.isFrozen(r.resolve({ channel: 'cli' }))).toBe(true);
    expect(Object.isFrozen(r.config)).toBe(true);
    expect(Object.isFrozen(r.config.bindings[0]?.match)).toBe(true);
    expect(Object.isFrozen(r.config.session.identityLinks.john)).toBe(true);
  });

  it('the resolver keeps its own copy: later changes to the input config do not change routing', () => {
    const config = { bindings: [{ agentId: 'tg', match: { channel: 'telegram' } }] };
    const r = new RouteResolver(config);
    config.bindings[0]!.agentId = 'changed';
    expect(r.resolve({ channel: 'telegram' }).agentId).toBe('tg');
  });
});

describe('RouteResolver validates its config like the loader', () => {
  it('fills defaults', () => {
    expect(new RouteResolver().config).toStrictEqual({
      defaultAgentId: 'main',
      session: { dmScope: 'per-peer', identityLinks: {}, caseSensitiveChannels: [] },
      bindings: [],
    });
  });

  it('lists every problem with its path', () => {
    const problems = configProblems(
      () =>
        new RouteResolver({
          defaultAgentId: 'Main Agent',
          session: {
            dmScope: 'everyone' as 'main',
            identityLinks: { john: ['123456'] },
            caseSensitiveChannels: ['not a channel'],
          },
          bindings: [
            { agentId: 'ok', match: { peer: { kind: 'dm', id: 'x' } } },
            { agentId: 'ok', match: { channel: 'tg', peer: { id: 'x' } } },
            { agentId: 'ok', match: { channel: 'tg', accountId: 'a', colour: 'red' } as never },
          ],
        }),
    );
    expect(problemAt(problems, 'defaultAgentId').message).toContain('"main-agent"');
    expect(problemAt(problems, 'session.dmScope').message).toContain('"everyone"');
    expect(problemAt(problems, 'session.identityLinks.john[0]').message).toContain('no channel');
    expect(problemAt(problems, 'session.caseSensitiveChannels[0]').message).toContain('"not a channel"');
    expect(problemAt(problems, 'bindings[0].match.channel').message).toContain('every channel');
    expect(problemAt(problems, 'bindings[1].match.peer.kind').message).toContain('kind');
    expect(problemAt(problems, 'bindings[2].match.colour').message).toContain('unknown key');
    for (const p of problems) expect(p.line).toBeUndefined();
  });

  it('rejects a config that is not an object', () => {
    expect(configProblems(() => new RouteResolver(42 as never))[0]?.path).toBe('');
    expect(configProblems(() => new RouteResolver({ bindings: {} } as never))[0]?.message).toContain('expected array');
  });
});

describe('resolve rejects input it cannot key, with SessionKeyError', () => {
  const r = new RouteResolver({});
  const bad: [string, unknown][] = [
    ['no input', undefined],
    ['no channel', {}],
    ['empty channel', { channel: '' }],
    ['bad channel', { channel: 'tele gram' }],
    ['non-string account', { channel: 'tg', accountId: 7 }],
    ['blank account', { channel: 'tg', accountId: ' ' }],
    ['empty guild', { channel: 'tg', guildId: '' }],
    ['non-string team', { channel: 'tg', teamId: 1 }],
    ['peer not an object', { channel: 'tg', peer: 'u1' }],
    ['unknown peer kind', { channel: 'tg', peer: { kind: 'user', id: 'u1' } }],
    ['peer without id', { channel: 'tg', peer: { kind: 'dm' } }],
    ['blank peer id', { channel: 'tg', peer: { kind: 'dm', id: '  ' } }],
    ['blank thread id', { channel: 'tg', peer: { kind: 'group', id: 'g' }, threadId: ' ' }],
    ['non-string thread id', { channel: 'tg', peer: { kind: 'group', id: 'g' }, threadId: 5 }],
    ['peer id over the key length cap', { channel: 'tg', peer: { kind: 'dm', id: 'x'.repeat(2000) } }],
  ];
  it.each(bad)('%s', (_name, input) => {
    keyError(() => r.resolve(input as InboundRoute));
  });
});
