// RouteResolver.resolve + formatSessionKey against 10 and against 100,000 bindings: a realistic
// mix of peer, team, guild, account and channel bindings (generated deterministically with the
// seeded mulberry32 of scripts/bench/workloads.mjs), and 1,024 inbound messages spread over them
// (about 10% match nothing).
// Targets (docs/sessions.md): the 100k figure within 3x of the 10 figure; >= 1 M/s.
import {
  RouteResolver,
  formatSessionKey,
  type InboundRoute,
  type RouteBinding,
  type RoutingConfigInput,
} from '@signalyard/sessions';
import { described, figure, measure, perSecond, printTable, ratio } from '../../../scripts/bench/harness.mjs';
import { mulberry32 } from '../../../scripts/bench/workloads.mjs';

const WORKLOAD = 'sessions: resolve + format, 1,024 messages';

const CHANNELS = ['telegram', 'discord', 'slack', 'matrix', 'signal', 'whatsapp'];
const INPUTS = 1024;

interface Workload {
  readonly config: RoutingConfigInput;
  readonly inputs: InboundRoute[];
}

function makeWorkload(n: number, seed: number): Workload {
  const rnd = mulberry32(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)] as T;
  const counts = {
    peer: Math.round(n * 0.6),
    team: Math.round(n * 0.1),
    guild: Math.round(n * 0.1),
    account: Math.round(n * 0.1),
  };
  const bindings: RouteBinding[] = [];
  for (let i = 0; i < n; i++) {
    const agentId = `agent-${i % 97}`;
    if (i < counts.peer) {
      const kind = rnd() < 0.7 ? 'dm' : 'group';
      bindings.push({
        agentId,
        match: {
          channel: pick(CHANNELS),
          accountId: '*',
          peer: { kind, id: `${kind === 'dm' ? 'user' : 'chat'}-${i}` },
        },
      });
    } else if (i < counts.peer + counts.team) {
      bindings.push({ agentId, match: { channel: 'slack', accountId: '*', teamId: `T${i}` } });
    } else if (i < counts.peer + counts.team + counts.guild) {
      bindings.push({ agentId, match: { channel: 'discord', guildId: `G${i}` } });
    } else if (i < counts.peer + counts.team + counts.guild + counts.account) {
      bindings.push({ agentId, match: { channel: pick(CHANNELS), accountId: `bot-${i}` } });
    } else {
      const c = i - (counts.peer + counts.team + counts.guild + counts.account);
      bindings.push({ agentId, match: { channel: c < CHANNELS.length ? CHANNELS[c] : `chan-${i}`, accountId: '*' } });
    }
  }
  // Interleave the tiers in config order (Fisher-Yates, deterministic).
  for (let i = bindings.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [bindings[i], bindings[j]] = [bindings[j] as RouteBinding, bindings[i] as RouteBinding];
  }
  const identityLinks: Record<string, string[]> = {};
  for (let p = 0; p < 50; p++) identityLinks[`person-${p}`] = [`telegram:user-${p * 3}`, `discord:user-${p * 3 + 1}`];

  const inputs: InboundRoute[] = [];
  for (let k = 0; k < INPUTS; k++) {
    if (rnd() < 0.1) {
      inputs.push({ channel: pick(['irc', 'email', 'telegram']), peer: { kind: 'dm', id: `nobody-${k}` } });
      continue;
    }
    const { match } = pick(bindings);
    if (match.peer !== undefined) {
      inputs.push({
        channel: match.channel as string,
        peer: { ...match.peer },
        ...(match.peer.kind === 'group' && rnd() < 0.5 ? { threadId: `t${k}` } : {}),
      });
    } else if (match.teamId !== undefined) {
      inputs.push({ channel: 'slack', teamId: match.teamId, peer: { kind: 'dm', id: `U${k}` } });
    } else if (match.guildId !== undefined) {
      inputs.push({ channel: 'discord', guildId: match.guildId, peer: { kind: 'group', id: `room-${k}` } });
    } else if (match.accountId !== undefined && match.accountId !== '*') {
      inputs.push({
        channel: match.channel as string,
        accountId: match.accountId,
        peer: { kind: 'dm', id: `user-${k}` },
      });
    } else {
      inputs.push({
        channel: match.channel as string,
        ...(rnd() < 0.8 ? { peer: { kind: 'dm', id: `member-${k}` } } : {}),
      });
    }
  }
  return { config: { defaultAgentId: 'main', session: { dmScope: 'per-peer', identityLinks }, bindings }, inputs };
}

const small = makeWorkload(10, 1);
const large = makeWorkload(100_000, 2);
const t0 = performance.now();
const smallResolver = new RouteResolver(small.config);
const t1 = performance.now();
const largeResolver = new RouteResolver(large.config);
const t2 = performance.now();

const tiers = (resolver: RouteResolver, inputs: readonly InboundRoute[]): string => {
  const count = new Map<string, number>();
  for (const input of inputs) {
    const m = resolver.resolve(input).matchedBy;
    count.set(m, (count.get(m) ?? 0) + 1);
  }
  return [...count].map(([k, v]) => `${k} ${v}`).join(', ');
};
console.log(
  `\n10 bindings: built in ${(t1 - t0).toFixed(1)} ms; inputs by tier: ${tiers(smallResolver, small.inputs)}`,
);
console.log(
  `100,000 bindings: built in ${(t2 - t1).toFixed(0)} ms; inputs by tier: ${tiers(largeResolver, large.inputs)}`,
);

let sink = 0;
const run = (resolver: RouteResolver, inputs: readonly InboundRoute[]) => () => {
  for (let i = 0; i < inputs.length; i++)
    sink += formatSessionKey(resolver.resolve(inputs[i] as InboundRoute).sessionKey).length;
};
const results = await measure([
  { name: 'resolve + formatSessionKey, 10 bindings', batch: INPUTS, fn: run(smallResolver, small.inputs) },
  { name: 'resolve + formatSessionKey, 100,000 bindings', batch: INPUTS, fn: run(largeResolver, large.inputs) },
]);
printTable('@signalyard/sessions: RouteResolver, 1,024 inbound messages (per message)', results);
const [ten, hundredK] = results;
figure({
  workload: WORKLOAD,
  name: '100,000 bindings time / 10 bindings time',
  unit: 'x',
  samples: ratio(hundredK!, ten!),
  target: { atMost: 3 },
  against: described(ten!, '10 bindings'),
});
figure({
  workload: WORKLOAD,
  name: 'resolutions per second, 10 bindings',
  unit: '/s',
  samples: perSecond(ten!),
  target: { atLeast: 1e6 },
});
figure({
  workload: WORKLOAD,
  name: 'resolutions per second, 100,000 bindings',
  unit: '/s',
  samples: perSecond(hundredK!),
  target: { atLeast: 1e6 },
});
if (sink < 0) console.log(sink);
