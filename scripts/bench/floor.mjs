// Plain-JS floors for the workloads in ./workloads.mjs: the simplest code that does the same work,
// with no framework. `pnpm bench` reports each Signalyard figure next to the matching floor (and
// next to a peer where one exists), measured in the same process run. No dependencies.
import { pred } from './workloads.mjs';

// ---- D1. naive three-tier router: per tier Map<kind, Route[]>, scan bucket, first match wins
export function makeRouter(routes) {
  const tiers = [1, 2, 3].map((t) => {
    const m = new Map();
    for (const r of routes)
      if (r.tier === t) {
        if (!m.has(r.kind)) m.set(r.kind, []);
        m.get(r.kind).push({ pred: pred(r), target: r.target });
      }
    return m;
  });
  return function route(s) {
    for (let t = 0; t < tiers.length; t++) {
      const bucket = tiers[t].get(s.kind);
      if (bucket !== undefined) {
        for (let i = 0; i < bucket.length; i++) if (bucket[i].pred(s)) return bucket[i].target;
      }
    }
    return null;
  };
}

// ---- D2. table-driven FSM (the machine of FSM in workloads.mjs), with a guard list as a generic
// FSM engine has: Map<state, Map<eventType, [{guard|null, to}]>>, first passing candidate wins
export function makeTableFsm(spec) {
  const table = new Map();
  for (const [from, ev, guard, to] of spec.transitions) {
    if (!table.has(from)) table.set(from, new Map());
    const byEv = table.get(from);
    if (!byEv.has(ev)) byEv.set(ev, []);
    byEv.get(ev).push({ guard: guard === 'quality>0.5' ? (e) => e.quality > 0.5 : null, to });
  }
  return function next(state, ev) {
    const byEv = table.get(state);
    const cands = byEv === undefined ? undefined : byEv.get(ev.type);
    if (cands === undefined) return state; // rejected
    for (let i = 0; i < cands.length; i++) {
      const c = cands[i];
      if (c.guard === null || c.guard(ev)) return c.to;
    }
    return state;
  };
}

// ---- D3. text markers: String.prototype.includes x 20 markers over a 2 KB text
export function findMarkersIncludes(text, markers) {
  let found = null;
  for (let i = 0; i < markers.length; i++) if (text.includes(markers[i])) (found ??= []).push(markers[i]);
  return found;
}

// ---- D4. bare async step loop: the lower bound for an async stage runtime
export async function asyncLoop(n) {
  const node = async (s) => ({ count: s.count + 1 });
  let s = { count: 0 };
  for (let i = 0; i < n; i++) s = await node(s);
  return s;
}
