// Types of ./workloads.mjs, for the TypeScript benchmarks.

export function mulberry32(seed: number): () => number;

/** An FSM event: its `type` is the action; `review` carries a `quality` in [0, 1]. */
export interface FsmEvent {
  readonly type: string;
  readonly quality?: number;
}
/** `[from, event, guard | null, to]`; the only guard is `'quality>0.5'`. */
export type FsmTransition = readonly [from: string, event: string, guard: string | null, to: string];
export interface FsmWorkload {
  readonly states: readonly string[];
  readonly initial: string;
  readonly transitions: readonly FsmTransition[];
  readonly cycle: readonly FsmEvent[];
  readonly cycleStates: readonly string[];
  readonly rejected: { readonly from: string; readonly event: FsmEvent };
}
export const FSM: FsmWorkload;
export const FSM_BATCH: number;

export const GRAPH_LOOP_N: number;
export const GRAPH_DAG_N: number;

export interface WorkloadRoute {
  readonly tier: 1 | 2 | 3;
  readonly kind: string;
  readonly field: string | null;
  readonly op: 'eq' | 'gte' | 'has' | 'always';
  readonly value: unknown;
  readonly target: string;
}
export interface WorkloadSignal {
  readonly kind: string;
  readonly name: string;
  readonly priority: number;
  readonly tags: readonly string[];
  readonly source: string;
  readonly payload: { readonly i: number };
}
export const ROUTES: readonly WorkloadRoute[];
export function pred(route: WorkloadRoute): (signal: WorkloadSignal) => boolean;
export const SIGNALS: readonly WorkloadSignal[];
export function routeReference(signal: WorkloadSignal): string | null;

export const MARKERS: readonly string[];
export const TEXTS: { readonly miss: string; readonly late: string };
