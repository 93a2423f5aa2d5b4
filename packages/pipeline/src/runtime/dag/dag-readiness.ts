import type { DagPlan } from './dag-plan.js';

// Where each stage of a DAG run stands, and the pure decisions read from it: whether a stage
// may start, and whether it never will.

// A stage's status during a DAG run (one byte per stage, by stage index). @internal
/** Not started yet. @internal */
export const PENDING = 0;
/** @internal */
export const RUNNING = 1;
/** @internal */
export const SUCCEEDED = 2;
/** @internal */
export const FAILED = 3;
/** A requirement failed or was skipped: it will not run. @internal */
export const SKIPPED = 4;
/** Raised an interrupt: it runs again when the run is resumed. @internal */
export const HELD = 5;

/** Stage `i`'s requirements have succeeded (all of them, or one for `joinStrategy: 'any'`). @internal */
export function requirementsMet(plan: DagPlan, status: Uint8Array, i: number): boolean {
  const reqs = plan.requires[i] as readonly number[];
  if (reqs.length === 0) return true;
  if (plan.joinAny[i] === true) {
    for (let k = 0; k < reqs.length; k++) if (status[reqs[k] as number] === SUCCEEDED) return true;
    return false;
  }
  for (let k = 0; k < reqs.length; k++) if (status[reqs[k] as number] !== SUCCEEDED) return false;
  return true;
}

/** Stage `i`'s requirements can no longer be met: one failed or was skipped (with `any`: all did). @internal */
export function requirementsDead(plan: DagPlan, status: Uint8Array, i: number): boolean {
  const reqs = plan.requires[i] as readonly number[];
  if (reqs.length === 0) return false;
  const any = plan.joinAny[i] === true;
  for (let k = 0; k < reqs.length; k++) {
    const s = status[reqs[k] as number];
    const dead = s === FAILED || s === SKIPPED;
    if (dead !== any) return dead; // `all`: one dead is enough; `any`: one alive is enough
  }
  return any;
}

/** Every `after` stage of stage `i` has run (succeeded or failed) or will not run. @internal */
function afterSettled(plan: DagPlan, status: Uint8Array, i: number): boolean {
  const deps = plan.after[i] as readonly number[];
  for (let k = 0; k < deps.length; k++) {
    const s = status[deps[k] as number];
    if (s !== SUCCEEDED && s !== FAILED && s !== SKIPPED) return false;
  }
  return true;
}

/** Stage `i` may start now: pending, its requirements met and its `after` stages settled. @internal */
export function isReady(plan: DagPlan, status: Uint8Array, i: number): boolean {
  return status[i] === PENDING && requirementsMet(plan, status, i) && afterSettled(plan, status, i);
}
