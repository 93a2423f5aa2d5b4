// The router on the shared workload (3 tiers x 10 routes over 5 kinds, 1,024 signals) next to
// the plain-JS floor (one Map<kind, Route[]> scan per tier), in one process run.
// Contract (design/router.md): route() within 2x of the floor.
import { Action, signal, type Signal, type SignalKind, type SignalRoute } from '@signalyard/core';
import { ComposedRouter } from '@signalyard/router';
import { loadShared, measure, printRatio, printTable } from '../../../scripts/bench-harness.mjs';

interface WorkloadRoute {
  tier: 1 | 2 | 3;
  kind: string;
  field: string | null;
  op: string;
  value: unknown;
  target: string;
}
type Payload = Record<string, unknown>;

const W = await loadShared('workloads.mjs');
const F = await loadShared('floor.mjs');
const ROUTES = W.ROUTES as WorkloadRoute[];
const RAW = W.SIGNALS as Payload[];

const kindOf = (k: string): SignalKind => `custom:${k}`;
const toRoute = (r: WorkloadRoute): SignalRoute => {
  const test = W.pred(r) as (s: Payload) => boolean;
  return {
    kind: kindOf(r.kind),
    name: r.target,
    action: Action.custom(r.target),
    ...(r.op === 'always' ? {} : { predicate: (s: Signal) => test(s.payload as Payload) }),
  };
};
const tier = (t: number): SignalRoute[] => ROUTES.filter((r) => r.tier === t).map(toRoute);
const router = new ComposedRouter({ strategy: tier(1), agent: tier(2), plugin: tier(3) });
const flat = new ComposedRouter({ agent: ROUTES.map(toRoute) });
const SIGNALS = RAW.map((s) => signal(kindOf(s.kind as string), s));
const floorRoute = F.makeRouter(ROUTES) as (s: Payload) => string | null;

// Same decisions as the reference semantics, or the figures mean nothing.
for (let i = 0; i < SIGNALS.length; i++) {
  const action = router.route(SIGNALS[i]!);
  const got = action?.type === 'custom' ? action.name : null;
  const want = W.routeReference(RAW[i]) as string | null;
  if (got !== want || floorRoute(RAW[i]!) !== want)
    throw new Error(`signal ${i}: router gave ${got}, reference ${want}`);
}

let sink = 0;
const n = SIGNALS.length;
const results = await measure([
  {
    name: 'floor: Map<kind, Route[]> per tier',
    batch: n,
    fn: () => {
      for (let i = 0; i < n; i++) if (floorRoute(RAW[i]!) !== null) sink++;
    },
  },
  {
    name: 'ComposedRouter.route (3 tiers)',
    batch: n,
    fn: () => {
      for (let i = 0; i < n; i++) if (router.route(SIGNALS[i]!) !== undefined) sink++;
    },
  },
  {
    name: 'ComposedRouter.route (agent tier only)',
    batch: n,
    fn: () => {
      for (let i = 0; i < n; i++) if (flat.route(SIGNALS[i]!) !== undefined) sink++;
    },
  },
  {
    name: 'ComposedRouter.explain (3 tiers)',
    batch: n,
    fn: () => {
      for (let i = 0; i < n; i++) if (router.explain(SIGNALS[i]!).action !== undefined) sink++;
    },
  },
]);
printTable('@signalyard/router: 1,024-signal mix, 3 tiers x 10 routes (ns per signal)', results);
const [floor, composed] = results;
console.log('');
printRatio('route() vs plain-JS floor', composed!.nsPerOp / floor!.nsPerOp, 2, 'max');
if (sink < 0) console.log(sink);
