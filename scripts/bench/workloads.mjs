// The inputs of `pnpm bench`: one deterministic workload per speed figure (seeded PRNG, so every
// run, machine and implementation gets identical inputs). Signalyard, the plain-JS floors in
// ./floor.mjs and the peers (XState, LangGraph.js) are all fed these, so their figures compare
// within one process run and across machines. Inputs are pre-allocated: benchmarks measure
// routing, not the allocation of their inputs. Changing a shape here makes new figures
// incomparable with earlier ones: add a workload rather than edit one.

/** A small seeded PRNG (mulberry32): the same sequence of floats in [0, 1) for a given seed. */
export function mulberry32(seed) {
  return function () {
    seed |= 0;
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ---------------------------------------------------------------- A. FSM
// 5 states, 5 event types; `review` has two guarded transitions
// (quality > 0.5 -> executing, else -> revising).
export const FSM = {
  states: ['idle', 'planning', 'executing', 'revising', 'done'],
  initial: 'idle',
  // [from, event, guard | null, to]; guarded entries are tried in order
  transitions: [
    ['idle', 'start', null, 'planning'],
    ['planning', 'review', 'quality>0.5', 'executing'],
    ['planning', 'review', null, 'revising'],
    ['revising', 'restart', null, 'planning'],
    ['executing', 'finish', null, 'done'],
    ['done', 'reset', null, 'idle'],
  ],
  // one cycle visits both guard branches and returns to `idle`
  cycle: [
    { type: 'start' },
    { type: 'review', quality: 0.3 },
    { type: 'restart' },
    { type: 'review', quality: 0.9 },
    { type: 'finish' },
    { type: 'reset' },
  ],
  cycleStates: ['planning', 'revising', 'planning', 'executing', 'done', 'idle'],
  // rejected event: valid event type, but no transition from `idle`
  rejected: { from: 'idle', event: { type: 'finish' } },
};
export const FSM_BATCH = 6_000; // 1k cycles: batch for the per-op micro cases

// ------------------------------------------------------ B. graph / pipeline
// A -> B -> C, conditional edge C -> A while count < N, else END.
// A increments `count`; B and C write one field each. N loop iterations = 3N node steps.
export const GRAPH_LOOP_N = 1000;
// DAG variant: A -> {B1,B2,B3} (parallel) -> C, loop C -> A while count < N.
export const GRAPH_DAG_N = 200; // 5 node steps per iteration

// ------------------------------------------------------ D1. 3-tier router
// 3 tiers x 10 routes, keyed by kind (5 kinds x 2 routes per tier).
// Routes are data; `pred` compiles them to closures.
const KINDS = ['message', 'command', 'event', 'timer', 'webhook'];
export const ROUTES = [];
for (const k of KINDS) {
  ROUTES.push({ tier: 1, kind: k, field: 'name', op: 'eq', value: `${k}.a`, target: `t1:${k}:a` });
  ROUTES.push({ tier: 1, kind: k, field: 'name', op: 'eq', value: `${k}.b`, target: `t1:${k}:b` });
  ROUTES.push({ tier: 2, kind: k, field: 'priority', op: 'gte', value: 8, target: `t2:${k}:prio` });
  ROUTES.push({ tier: 2, kind: k, field: 'tags', op: 'has', value: 'urgent', target: `t2:${k}:urgent` });
  ROUTES.push({ tier: 3, kind: k, field: 'source', op: 'eq', value: 'internal', target: `t3:${k}:internal` });
  // timer/webhook have no catch-all, so some signals fall through (unrouted)
  if (k === 'timer' || k === 'webhook')
    ROUTES.push({ tier: 3, kind: k, field: 'source', op: 'eq', value: 'partner', target: `t3:${k}:partner` });
  else ROUTES.push({ tier: 3, kind: k, field: null, op: 'always', value: null, target: `t3:${k}:default` });
}
export function pred(r) {
  switch (r.op) {
    case 'eq': {
      const f = r.field,
        v = r.value;
      return (s) => s[f] === v;
    }
    case 'gte': {
      const f = r.field,
        v = r.value;
      return (s) => s[f] >= v;
    }
    case 'has': {
      const f = r.field,
        v = r.value;
      return (s) => s[f].includes(v);
    }
    case 'always':
      return () => true;
  }
  throw new Error('op ' + r.op);
}
// 1024 signals: ~5% unknown kind; names a/b/c/d (a,b hit tier 1)
export const SIGNALS = (() => {
  const rnd = mulberry32(42);
  const pick = (xs) => xs[(rnd() * xs.length) | 0];
  const out = [];
  for (let i = 0; i < 1024; i++) {
    const kind = rnd() < 0.05 ? 'other' : pick(KINDS);
    const tags = [];
    if (rnd() < 0.15) tags.push('urgent');
    if (rnd() < 0.5) tags.push('low');
    out.push({
      kind,
      name: `${kind}.${pick(['a', 'b', 'c', 'd'])}`,
      priority: (rnd() * 10) | 0,
      tags,
      source: pick(['internal', 'external', 'external', 'partner']),
      payload: { i },
    });
  }
  return out;
})();
// reference semantics: first matching route in tier order, routes in declaration order
export function routeReference(s) {
  for (const t of [1, 2, 3])
    for (const r of ROUTES) if (r.tier === t && r.kind === s.kind && pred(r)(s)) return r.target;
  return null;
}

// ------------------------------------------------------ D3. text markers
// 20 handoff markers; a 2 KB agent reply. `late` has one marker near the end,
// `miss` has none (every includes() scans the whole text).
const AGENTS = [
  'planner',
  'researcher',
  'coder',
  'reviewer',
  'tester',
  'writer',
  'editor',
  'critic',
  'analyst',
  'designer',
  'architect',
  'deployer',
  'monitor',
  'support',
  'sales',
  'legal',
  'finance',
  'translator',
  'summarizer',
  'router',
];
export const MARKERS = AGENTS.map((a) => `[[handoff:${a}]]`);
export const TEXTS = (() => {
  const rnd = mulberry32(7);
  const vocab = (
    'the agent will now review plan output result context tool call answer user request ' +
    'step check value data source note draft final update handoff route task crew stage'
  ).split(' ');
  let body = '';
  while (body.length < 2048) body += vocab[(rnd() * vocab.length) | 0] + (rnd() < 0.1 ? '.\n' : ' ');
  body = body.slice(0, 2048);
  const m = MARKERS[12]; // '[[handoff:monitor]]'
  const late = body.slice(0, 1900) + m + body.slice(1900 + m.length);
  // force flat sequential strings (no cons/sliced string representation artifacts)
  const flat = (s) => Buffer.from(s, 'latin1').toString('latin1');
  return { miss: flat(body), late: flat(late) };
})();
