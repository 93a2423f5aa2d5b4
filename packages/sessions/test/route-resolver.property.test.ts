// The indexed RouteResolver against a plain linear reference of the contract's rules
// (conjunctive matching, tiers peer > guild > team > account > channel > default, first in
// config order within a tier), on random configs and messages over small alphabets so that
// matches, near-misses and ties are frequent.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  RouteResolver,
  type InboundRoute,
  type MatchRule,
  type MatchedBy,
  type RouteBinding,
} from '@signalyard/sessions';

const CHANNELS = ['telegram', 'Discord', ' slack ', 'matrix'];
const INPUT_CHANNELS = ['telegram', 'discord', 'SLACK', 'matrix', 'irc'];
const PEER_IDS = ['u1', 'U1', 'u2', 'grp'];
const KINDS = ['dm', 'group', 'channel', 'thread'] as const;

const opt = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => fc.option(arb, { nil: undefined, freq: 2 });

const matchRule: fc.Arbitrary<MatchRule> = fc
  .record({
    channel: opt(fc.constantFrom(...CHANNELS, '*')),
    accountId: opt(fc.constantFrom('*', 'bot-1', 'BOT-2')),
    peer: opt(fc.record({ kind: fc.constantFrom(...KINDS), id: fc.constantFrom(...PEER_IDS) })),
    guildId: opt(fc.constantFrom('G1', 'g2')),
    teamId: opt(fc.constantFrom('T1', 't2')),
  })
  .map((m) => {
    const out: MatchRule = {};
    for (const [k, v] of Object.entries(m)) if (v !== undefined) (out as Record<string, unknown>)[k] = v;
    // A peer binding must name a channel (validation rejects it otherwise).
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
  .map((m) => {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(m)) if (v !== undefined) out[k] = v;
    return out as unknown as InboundRoute;
  });

const norm = (s: string): string => s.trim().toLowerCase();
const isWild = (s: string | undefined): boolean => s === undefined || s.trim() === '*';

function tierOf(m: MatchRule): Exclude<MatchedBy, 'default'> {
  if (m.peer !== undefined) return 'peer';
  if (m.guildId !== undefined) return 'guild';
  if (m.teamId !== undefined) return 'team';
  if (!isWild(m.accountId)) return 'account';
  return 'channel';
}

function matches(m: MatchRule, i: InboundRoute): boolean {
  const same = (rule: string | undefined, value: string | undefined) =>
    rule === undefined || (value !== undefined && norm(rule) === norm(value));
  return (
    (isWild(m.channel) || norm(m.channel!) === norm(i.channel)) &&
    (isWild(m.accountId) || norm(m.accountId!) === norm(i.accountId ?? 'default')) &&
    same(m.guildId, i.guildId) &&
    same(m.teamId, i.teamId) &&
    (m.peer === undefined || (i.peer?.kind === m.peer.kind && norm(i.peer.id) === norm(m.peer.id)))
  );
}

/** The contract's rules, as directly as they can be written: scan every binding, tier by tier. */
function reference(bindings: readonly RouteBinding[], i: InboundRoute): { index: number; matchedBy: MatchedBy } {
  for (const tier of ['peer', 'guild', 'team', 'account', 'channel'] as const) {
    const index = bindings.findIndex((b) => tierOf(b.match) === tier && matches(b.match, i));
    if (index >= 0) return { index, matchedBy: tier };
  }
  return { index: -1, matchedBy: 'default' };
}

/** Drops bindings identical in match to an earlier one (validation rejects those as dead). */
function dedupe(rules: readonly MatchRule[]): RouteBinding[] {
  const seen = new Set<string>();
  const out: RouteBinding[] = [];
  for (const m of rules) {
    const sig = JSON.stringify([
      isWild(m.channel) ? '*' : norm(m.channel!),
      isWild(m.accountId) ? '*' : norm(m.accountId!),
      m.peer === undefined ? '' : `${m.peer.kind}:${norm(m.peer.id)}`,
      m.guildId === undefined ? '' : norm(m.guildId),
      m.teamId === undefined ? '' : norm(m.teamId),
    ]);
    if (seen.has(sig)) continue;
    seen.add(sig);
    out.push({ agentId: `agent-${out.length}`, match: m });
  }
  return out;
}

describe('RouteResolver (indexed) agrees with a linear scan of the rules', () => {
  it('on random bindings and messages', () => {
    fc.assert(
      fc.property(
        fc.array(matchRule, { maxLength: 25 }),
        fc.array(input, { minLength: 1, maxLength: 20 }),
        (rules, inputs) => {
          const bindings = dedupe(rules);
          const resolver = new RouteResolver({ bindings });
          for (const i of inputs) {
            const want = reference(bindings, i);
            const got = resolver.resolve(i);
            expect(got.matchedBy).toBe(want.matchedBy);
            if (want.index < 0) {
              expect(got.agentId).toBe('main');
              expect(got.binding).toBeUndefined();
            } else {
              expect(got.agentId).toBe(`agent-${want.index}`);
              expect(got.binding).toBe(resolver.config.bindings[want.index]);
            }
          }
        },
      ),
      { numRuns: 800 },
    );
  });
});
