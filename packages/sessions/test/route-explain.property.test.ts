// explain() makes the same decision as resolve() — agent, session key, tier, binding — on random
// configs (bindings of every tier, DM scopes, identity links, case-sensitive channels) and random
// messages over small alphabets, so that matches, near-misses, ties and links are frequent. Its
// `considered` list agrees with that decision, and binding lint never flags a binding that wins.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  RouteResolver,
  formatSessionKey,
  lintRoutingConfig,
  type InboundRoute,
  type MatchRule,
  type MatchedBy,
  type RouteBinding,
  type RoutingConfigInput,
} from '@signalyard/sessions';

const CHANNELS = ['telegram', 'Discord', ' slack ', 'matrix'];
const INPUT_CHANNELS = ['telegram', 'discord', 'SLACK', 'matrix', 'irc'];
const PEER_IDS = ['u1', 'U1', 'u2', 'grp'];
const KINDS = ['dm', 'group', 'channel', 'thread'] as const;
const RANK: Record<MatchedBy, number> = { peer: 0, guild: 1, team: 2, account: 3, channel: 4, default: 5 };

const opt = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => fc.option(arb, { nil: undefined, freq: 2 });

function defined<T extends object>(record: T): T {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(record)) if (v !== undefined) out[k] = v;
  return out as T;
}

const matchRule: fc.Arbitrary<MatchRule> = fc
  .record({
    channel: opt(fc.constantFrom(...CHANNELS, '*')),
    accountId: opt(fc.constantFrom('*', 'bot-1', 'BOT-2')),
    peer: opt(fc.record({ kind: fc.constantFrom(...KINDS), id: fc.constantFrom(...PEER_IDS) })),
    guildId: opt(fc.constantFrom('G1', 'g2')),
    teamId: opt(fc.constantFrom('T1', 't2')),
  })
  .map((m) => {
    const out = defined(m);
    if (out.peer !== undefined && (out.channel === undefined || out.channel === '*')) out.channel = 'telegram';
    return out;
  });

const input: fc.Arbitrary<InboundRoute> = fc
  .record({
    channel: fc.constantFrom(...INPUT_CHANNELS),
    accountId: opt(fc.constantFrom('bot-1', 'bot-2', 'Bot-1', 'other')),
    peer: opt(fc.record({ kind: fc.constantFrom(...KINDS), id: fc.constantFrom(...PEER_IDS, 'u3') })),
    guildId: opt(fc.constantFrom('G1', 'G2', 'g3')),
    teamId: opt(fc.constantFrom('t1', 'T2', 't3')),
    threadId: opt(fc.constantFrom('th1')),
  })
  .map((m) => defined(m) as InboundRoute);

/** Bindings with the second of two identical matches dropped (validation rejects those). */
function validBindings(rules: readonly MatchRule[], caseSensitive: readonly string[]): RouteBinding[] {
  const norm = (s: string | undefined): string => (s === undefined || s.trim() === '*' ? '*' : s.trim().toLowerCase());
  const seen = new Set<string>();
  const out: RouteBinding[] = [];
  for (const m of rules) {
    const channel = norm(m.channel);
    const peerId = m.peer === undefined ? '' : caseSensitive.includes(channel) ? m.peer.id : m.peer.id.toLowerCase();
    const sig = JSON.stringify([
      channel,
      norm(m.accountId),
      m.peer === undefined ? '' : `${m.peer.kind}:${peerId}`,
      m.guildId?.toLowerCase() ?? '',
      m.teamId?.toLowerCase() ?? '',
    ]);
    if (seen.has(sig)) continue;
    seen.add(sig);
    out.push({ agentId: `agent-${out.length}`, match: m });
  }
  return out;
}

const config: fc.Arbitrary<RoutingConfigInput> = fc
  .record({
    rules: fc.array(matchRule, { maxLength: 25 }),
    dmScope: fc.constantFrom('main', 'per-peer', 'per-channel-peer' as const),
    caseSensitive: fc.subarray(['matrix', 'telegram']),
    links: fc.boolean(),
  })
  .map(({ rules, dmScope, caseSensitive, links }) => ({
    session: {
      dmScope,
      caseSensitiveChannels: caseSensitive,
      identityLinks: links ? { pat: ['telegram:u1', 'discord:U2', 'matrix:u1'] } : {},
    },
    bindings: validBindings(rules, caseSensitive),
  }));

describe('explain agrees with resolve', () => {
  it('on random configs and messages: the same agent, session key, tier and binding', () => {
    fc.assert(
      fc.property(config, fc.array(input, { minLength: 1, maxLength: 20 }), (cfg, inputs) => {
        const resolver = new RouteResolver(cfg);
        const shadowed = new Set(lintRoutingConfig(cfg).map((w) => w.index));
        for (const i of inputs) {
          const route = resolver.resolve(i);
          const why = resolver.explain(i);
          expect(why.agentId).toBe(route.agentId);
          expect(formatSessionKey(why.sessionKey)).toBe(formatSessionKey(route.sessionKey));
          expect(why.matchedBy).toBe(route.matchedBy);
          expect(why.binding).toBe(route.binding);

          // `considered` tells the same story: the winner is the best-ranked matching binding,
          // every other matching one is outranked by it, and nothing off the channel is listed.
          const matched = why.considered.filter((c) => c.matched);
          const best = matched.reduce<(typeof matched)[number] | undefined>(
            (a, c) => (a === undefined || RANK[c.tier] < RANK[a.tier] ? c : a),
            undefined,
          );
          expect(best?.binding).toBe(route.binding);
          expect(best?.tier ?? 'default').toBe(route.matchedBy);
          for (const c of why.considered) {
            expect(c.binding).toBe(resolver.config.bindings[c.index]);
            expect(c.reason.startsWith(c === best ? 'won: ' : c.matched ? 'matched, but ' : 'no match: ')).toBe(true);
          }
          const indexes = why.considered.map((c) => c.index);
          expect(indexes).toEqual([...indexes].sort((a, b) => a - b));
          const onChannel = resolver.config.bindings.flatMap((b, index) => {
            const ch = b.match.channel?.trim().toLowerCase();
            return ch === undefined || ch === '*' || ch === route.channel ? [index] : [];
          });
          expect(indexes).toEqual(onChannel);

          // A binding the lint calls dead never decides.
          if (route.binding !== undefined)
            expect(shadowed.has(resolver.config.bindings.indexOf(route.binding))).toBe(false);
        }
      }),
      { numRuns: 600 },
    );
  });
});
