// Types of ./floor.mjs, for the TypeScript benchmarks.
import type { FsmEvent, FsmWorkload, WorkloadRoute, WorkloadSignal } from './workloads.mjs';

export function makeRouter(routes: readonly WorkloadRoute[]): (signal: WorkloadSignal) => string | null;
export function makeTableFsm(spec: FsmWorkload): (state: string, event: FsmEvent) => string;
export function findMarkersIncludes(text: string, markers: readonly string[]): string[] | null;
export function asyncLoop(n: number): Promise<{ count: number }>;
