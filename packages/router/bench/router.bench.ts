// The router on the shared workload (3 tiers x 10 routes over 5 kinds, 1,024 signals) next to
// the plain-JS floor (one Map<kind, Route[]> scan per tier), in one process run.
// Target (docs/router.md): route() within 2x of the floor.
import { Action, signal, type Signal, type SignalKind, type SignalRoute } from '@signalyard/core';
import { ComposedRouter } from '@signalyard/router';
import { makeRouter } from '../../../scripts/bench/floor.mjs';
import { described, figure, measure, printTable, ratio } from '../../../scripts/bench/harness.mjs';
import {
  ROUTES,
  SIGNALS as RAW,
  pred,
  routeReference,
  type WorkloadRoute,
  type WorkloadSignal,
} from '../../../scripts/bench/workloads.mjs';

const WORKLOAD = 'router: 1,024 signals, 3 tiers x 10 routes';

const kindOf = (k: string): SignalKind => `custom:${k}`;
const toRoute = (r: WorkloadRoute): SignalRoute => {
  const test = pred(r);
  return {
    kind: kindOf(r.kind),
    name: r.target,
    action: Action.custom(r.target),
    ...(r.op === 'always' ? {} : { predicate: (s: Signal) => test(s.payload as WorkloadSignal) }),
  };
};
const tier = (t: number): SignalRoute[] => ROUTES.filter((r) => r.tier === t).map(toRoute);
const router = new ComposedRouter({ strategy: tier(1), agent: tier(2), plugin: tier(3) });
const flat = new ComposedRouter({ agent: ROUTES.map(toRoute) });
const SIGNALS = RAW.map((s) => signal(kindOf(s.kind), s));
const floorRoute = makeRouter(ROUTES);

// Same decisions as the reference semantics, or the figures mean nothing.
for (let i = 0; i < SIGNALS.length; i++) {
  const action = router.route(SIGNALS[i]!);
  const got = action?.type === 'custom' ? action.name : null;
  const want = routeReference(RAW[i]!);
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
printTable('@signalyard/router: 1,024-signal mix, 3 tiers x 10 routes (per signal)', results);
const [floor, composed, , explain] = results;
figure({
  workload: WORKLOAD,
  name: 'route() time / floor time',
  unit: 'x',
  samples: ratio(composed!, floor!),
  target: { atMost: 2 },
  against: described(floor!, 'floor: Map<kind, Route[]> per tier'),
});
figure({ workload: WORKLOAD, name: 'route() per signal', unit: 'ns', samples: composed!.samples });
figure({ workload: WORKLOAD, name: 'explain() per signal', unit: 'ns', samples: explain!.samples });
if (sink < 0) console.log(sink);
