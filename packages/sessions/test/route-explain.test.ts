import { describe, expect, it } from 'vitest';
import {
  RouteResolver,
  formatSessionKey,
  type ConsideredBinding,
  type InboundRoute,
  type RoutingConfigInput,
} from '@signalyard/sessions';
import { keyError } from './support.js';

// The sessions contract's acceptance config, plus bindings of every tier on telegram and one for
// any channel, so that every kind of reason shows up.
const CONFIG: RoutingConfigInput = {
  session: { dmScope: 'per-peer', identityLinks: { john: ['telegram:123', 'discord:456'] } },
  bindings: [
    { agentId: 'work', match: { channel: 'slack', accountId: '*', teamId: 'T12345' } },
    { agentId: 'general', match: { channel: 'telegram', accountId: '*' } },
    { agentId: 'vip', match: { channel: 'telegram', peer: { kind: 'dm', id: 'VIP' } } },
    { agentId: 'support', match: { channel: 'telegram', accountId: 'support-bot' } },
    { agentId: 'fallback', match: { channel: '*' } },
    { agentId: 'community', match: { guildId: 'G1' } },
  ],
};

const resolver = new RouteResolver(CONFIG);
const brief = (c: ConsideredBinding): [number, string, boolean, string] => [c.index, c.tier, c.matched, c.reason];

describe('RouteResolver.explain', () => {
  it('names the agent, the session key and the tier, as resolve does', () => {
    const input: InboundRoute = { channel: 'telegram', peer: { kind: 'dm', id: '123' } };
    const why = resolver.explain(input);
    const route = resolver.resolve(input);
    expect(why.agentId).toBe('general');
    expect(formatSessionKey(why.sessionKey)).toBe('agent:general:dm:john');
    expect(why.matchedBy).toBe('channel');
    expect(why.binding).toBe(resolver.config.bindings[1]);
    const { considered, ...rest } = why;
    expect(rest).toEqual(route);
    expect(considered.length).toBeGreaterThan(0);
  });

  it('lists every binding on the channel, in config order, with why it won or lost', () => {
    const why = resolver.explain({ channel: 'telegram', peer: { kind: 'dm', id: '123' } });
    expect(why.considered.map(brief)).toEqual([
      [1, 'channel', true, 'won: the first matching binding at the most specific tier that matched (channel)'],
      [2, 'peer', false, 'no match: peer: wants dm "vip", got dm "123"'],
      [3, 'account', false, 'no match: account: wants "support-bot", got "default"'],
      [4, 'channel', true, 'matched, but bindings[1] comes first at the same tier (channel)'],
      [5, 'guild', false, 'no match: guild: wants "g1", got none'],
    ]);
    expect(why.considered.map((c) => c.binding)).toEqual([1, 2, 3, 4, 5].map((i) => resolver.config.bindings[i]));
  });

  it('leaves out bindings for other channels, keeps those for any channel', () => {
    const why = resolver.explain({ channel: 'discord', peer: { kind: 'dm', id: '456' } });
    expect(why.considered.map((c) => c.index)).toEqual([4, 5]);
  });

  it('a binding that matched at a less specific tier lost to the more specific winner', () => {
    const why = resolver.explain({ channel: 'telegram', peer: { kind: 'dm', id: 'vip' } });
    expect(why.matchedBy).toBe('peer');
    expect(why.agentId).toBe('vip');
    expect(why.considered.map(brief)).toEqual([
      [1, 'channel', true, 'matched, but bindings[2] matched at a more specific tier (peer beats channel)'],
      [2, 'peer', true, 'won: the first matching binding at the most specific tier that matched (peer)'],
      [3, 'account', false, 'no match: account: wants "support-bot", got "default"'],
      [4, 'channel', true, 'matched, but bindings[2] matched at a more specific tier (peer beats channel)'],
      [5, 'guild', false, 'no match: guild: wants "g1", got none'],
    ]);
  });

  it('names every constraint a binding fails', () => {
    const r = new RouteResolver({
      bindings: [
        {
          agentId: 'narrow',
          match: { channel: 'slack', accountId: 'bot-1', teamId: 'T1', peer: { kind: 'group', id: 'ops' } },
        },
        { agentId: 'g', match: { channel: 'slack', guildId: 'G9' } },
      ],
    });
    const why = r.explain({ channel: 'slack', teamId: 'T2', peer: { kind: 'dm', id: 'u1' } });
    expect(why.matchedBy).toBe('default');
    expect(why.considered.map((c) => c.reason)).toEqual([
      'no match: peer: wants group "ops", got dm "u1"; team: wants "t1", got "t2"; account: wants "bot-1", got "default"',
      'no match: guild: wants "g9", got none',
    ]);
    expect(r.explain({ channel: 'slack' }).considered[0]?.reason).toMatch(
      /^no match: peer: wants group "ops", got none;/,
    );
  });

  it('the default agent: no binding matched, so every one considered lost', () => {
    const why = resolver.explain({ channel: 'cli' });
    expect(why).toMatchObject({ agentId: 'fallback', matchedBy: 'channel' });
    const none = new RouteResolver({ bindings: [{ agentId: 'tg', match: { channel: 'telegram' } }] });
    const fallback = none.explain({ channel: 'telegram', accountId: 'x' });
    expect(fallback.matchedBy).toBe('channel');
    const miss = none.explain({ channel: 'cli' });
    expect(miss).toMatchObject({ agentId: 'main', matchedBy: 'default', considered: [] });
    expect('binding' in miss).toBe(false);
  });

  it('compares as resolve does: folded ids, case-sensitive channels, threads of a bound group', () => {
    const r = new RouteResolver({
      session: { caseSensitiveChannels: ['matrix'] },
      bindings: [
        { agentId: 'alice', match: { channel: 'matrix', peer: { kind: 'dm', id: '@Alice:example.org' } } },
        { agentId: 'eng', match: { channel: 'Telegram', peer: { kind: 'group', id: 'Eng' } } },
        { agentId: 'team', match: { channel: 'slack', teamId: ' t1 ' } },
      ],
    });
    const other = r.explain({ channel: 'matrix', peer: { kind: 'dm', id: '@alice:example.org' } });
    expect(other.agentId).toBe('main');
    expect(other.considered[0]?.reason).toBe(
      'no match: peer: wants dm "@Alice:example.org", got dm "@alice:example.org"',
    );
    const thread = r.explain({ channel: ' TELEGRAM ', peer: { kind: 'group', id: 'ENG' }, threadId: '42' });
    expect(thread).toMatchObject({ agentId: 'eng', matchedBy: 'peer' });
    expect(thread.considered.map((c) => c.matched)).toEqual([true]);
    expect(r.explain({ channel: 'slack', teamId: 'T1' }).considered[0]?.matched).toBe(true);
  });

  it('returns frozen data', () => {
    const why = resolver.explain({ channel: 'telegram' });
    expect(Object.isFrozen(why)).toBe(true);
    expect(Object.isFrozen(why.considered)).toBe(true);
    for (const c of why.considered) expect(Object.isFrozen(c)).toBe(true);
  });

  it('reads each field of the input once, so a getter cannot make explain and resolve disagree', () => {
    let reads = 0;
    const input = {
      get channel(): string {
        reads++;
        return reads === 1 ? 'telegram' : 'slack';
      },
    } as InboundRoute;
    const why = resolver.explain(input);
    expect(reads).toBe(1);
    expect(why.channel).toBe('telegram');
    expect(why.considered.every((c) => c.binding.match.channel !== 'slack')).toBe(true);
  });

  it('bad input: the same SessionKeyError as resolve', () => {
    const bad: unknown[] = [
      null,
      'telegram',
      {},
      { channel: '!!' },
      { channel: 'telegram', accountId: ' ' },
      { channel: 'telegram', accountId: 42 },
      { channel: 'telegram', guildId: '' },
      { channel: 'telegram', teamId: 7 },
      { channel: 'telegram', peer: 'dm:1' },
      { channel: 'telegram', peer: { kind: 'user', id: '1' } },
      { channel: 'telegram', peer: { kind: 'dm', id: ' ' } },
      { channel: 'telegram', peer: { kind: 'group', id: 'g' }, threadId: '' },
    ];
    for (const input of bad) {
      const fromExplain = keyError(() => resolver.explain(input as InboundRoute));
      const fromResolve = keyError(() => resolver.resolve(input as InboundRoute));
      expect(fromExplain.message).toBe(fromResolve.message);
      expect(fromExplain.problem).toBe(fromResolve.problem);
    }
  });
});
