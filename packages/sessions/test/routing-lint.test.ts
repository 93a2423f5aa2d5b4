import { describe, expect, it } from 'vitest';
import {
  RouteResolver,
  lintRoutingConfig,
  lintRoutingToml,
  type RouteBinding,
  type RoutingLintWarning,
} from '@signalyard/sessions';
import { configProblems, problemAt } from './support.js';

const brief = (w: RoutingLintWarning): [number, number, string] => [w.index, w.shadowedBy, w.tier];
const lint = (...bindings: RouteBinding[]): RoutingLintWarning[] => lintRoutingConfig({ bindings });

describe('lintRoutingConfig', () => {
  it('a binding behind an earlier, broader one of the same tier can never win', () => {
    const warnings = lint(
      { agentId: 'everyone', match: { channel: '*' } },
      { agentId: 'telegram', match: { channel: 'telegram' } },
    );
    expect(warnings).toEqual([
      {
        kind: 'shadowed_binding',
        path: 'bindings[1]',
        message:
          'this binding can never win: bindings[0] comes first at the same tier (channel) and matches every message this one matches (it does not require a channel)',
        index: 1,
        shadowedBy: 0,
        tier: 'channel',
      },
    ]);
    // …and the resolver agrees: telegram goes to the broader binding.
    const resolver = new RouteResolver({
      bindings: [
        { agentId: 'everyone', match: { channel: '*' } },
        { agentId: 'telegram', match: { channel: 'telegram' } },
      ],
    });
    expect(resolver.resolve({ channel: 'telegram' }).agentId).toBe('everyone');
  });

  it('finds shadows in every tier, naming what the dead binding requires in vain', () => {
    const warnings = lint(
      { agentId: 'p', match: { channel: 'telegram', peer: { kind: 'dm', id: 'VIP' } } },
      {
        agentId: 'p2',
        match: { channel: 'Telegram', accountId: 'bot-1', teamId: 'T1', peer: { kind: 'dm', id: 'vip' } },
      },
      { agentId: 'g', match: { guildId: 'G1' } },
      { agentId: 'g2', match: { channel: 'discord', guildId: 'g1' } },
      { agentId: 't', match: { channel: 'slack', teamId: 'T1' } },
      { agentId: 't2', match: { channel: 'slack', accountId: 'bot-1', teamId: 't1 ' } },
      { agentId: 'a', match: { accountId: 'bot-1' } },
      { agentId: 'a2', match: { channel: 'irc', accountId: 'BOT-1' } },
    );
    expect(warnings.map(brief)).toEqual([
      [1, 0, 'peer'],
      [3, 2, 'guild'],
      [5, 4, 'team'],
      [7, 6, 'account'],
    ]);
    expect(warnings[0]?.message).toMatch(/\(it does not require an account or a team\)$/);
    expect(warnings[1]?.message).toMatch(/\(it does not require a channel\)$/);
  });

  it('names the first of several earlier bindings that shadow one', () => {
    const warnings = lint(
      { agentId: 'a', match: { channel: 'slack', teamId: 'T1' } },
      { agentId: 'b', match: { accountId: 'bot-1', teamId: 'T1' } },
      { agentId: 'c', match: { teamId: 'T1' } },
      { agentId: 'd', match: { channel: 'slack', accountId: 'bot-1', teamId: 'T1' } },
    );
    expect(warnings.map(brief)).toEqual([[3, 0, 'team']]);
  });

  it('is silent about what can still win', () => {
    expect(
      lint(
        // a narrower binding first, a broader one after: each wins some messages
        { agentId: 'a', match: { channel: 'telegram', accountId: 'bot-1' } },
        { agentId: 'b', match: { accountId: 'bot-1' } },
        // a broader binding at a lower tier never shadows a more specific one
        { agentId: 'c', match: { channel: 'slack' } },
        { agentId: 'd', match: { channel: 'slack', teamId: 'T1' } },
        // different values
        { agentId: 'e', match: { channel: 'discord', guildId: 'G1' } },
        { agentId: 'f', match: { channel: 'discord', guildId: 'G2', accountId: 'x' } },
        // different peer kinds, ids, channels
        { agentId: 'g', match: { channel: 'telegram', peer: { kind: 'group', id: 'x' } } },
        { agentId: 'h', match: { channel: 'telegram', peer: { kind: 'dm', id: 'x' }, teamId: 'T' } },
        { agentId: 'i', match: { channel: 'signal', peer: { kind: 'group', id: 'x' }, teamId: 'T' } },
      ),
    ).toEqual([]);
    expect(lintRoutingConfig({})).toEqual([]);
  });

  it('compares peer ids case-sensitively on case-sensitive channels', () => {
    const bindings: RouteBinding[] = [
      { agentId: 'a', match: { channel: 'matrix', peer: { kind: 'dm', id: '@Alice:x' } } },
      { agentId: 'b', match: { channel: 'matrix', accountId: 'bot', peer: { kind: 'dm', id: '@alice:x' } } },
    ];
    expect(lintRoutingConfig({ bindings }).map(brief)).toEqual([[1, 0, 'peer']]);
    expect(lintRoutingConfig({ session: { caseSensitiveChannels: ['matrix'] }, bindings })).toEqual([]);
  });

  it('an invalid config: ConfigError, with identical bindings still an error', () => {
    const problems = configProblems(() =>
      lint(
        { agentId: 'a', match: { channel: 'slack' } },
        { agentId: 'b', match: { channel: 'SLACK', accountId: '*' } },
      ),
    );
    expect(problemAt(problems, 'bindings[1]').message).toMatch(/can never win: bindings\[0\] has the same match/);
    configProblems(() => lintRoutingConfig({ bindings: [{ agentId: 'Bad Id', match: {} }] }));
    configProblems(() => lintRoutingConfig(null as never));
  });
});

const TOML = `# comment
[routing]
default_agent = "main"

[[routing.bindings]]
agent_id = "everyone"
[routing.bindings.match]
channel = "*"

[[routing.bindings]]
agent_id = "vip"
[routing.bindings.match]
channel = "telegram"
peer = { kind = "dm", id = "vip" }

[[routing.bindings]]
agent_id = "telegram"
[routing.bindings.match]
channel = "telegram"
`;

describe('lintRoutingToml', () => {
  it('gives TOML paths and the line of each dead binding', () => {
    expect(lintRoutingToml(TOML)).toEqual([
      {
        kind: 'shadowed_binding',
        path: 'routing.bindings[2]',
        line: 16,
        message: expect.stringMatching(/^this binding can never win: bindings\[0\] comes first/) as string,
        index: 2,
        shadowedBy: 0,
        tier: 'channel',
      },
    ]);
  });

  it('finds lines in inline arrays of bindings and after a byte-order mark', () => {
    const inline = `\uFEFF[routing]
bindings = [
  { agent_id = "a", match = { team_id = "T1" } },
  { agent_id = "b", match = { team_id = "T1", channel = "slack" } },
]
`;
    expect(lintRoutingToml(inline).map((w) => [w.path, w.line])).toEqual([['routing.bindings[1]', 4]]);
  });

  it('a clean file: no warnings', () => {
    expect(lintRoutingToml('[routing]\ndefault_agent = "desk"\n')).toEqual([]);
  });

  it('an invalid file: the same ConfigError as parseRoutingConfig', () => {
    const problems = configProblems(() => lintRoutingToml('[routing]\ndefault_agnt = "x"\n'));
    expect(problemAt(problems, 'routing.default_agnt').line).toBe(2);
    configProblems(() => lintRoutingToml('[routing'));
  });
});
