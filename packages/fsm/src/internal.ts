import type { GuardCondition } from './guard.js';
import type { SignalRoute, StrategySnapshot, TransitionResult } from '@signalyard/core';

/** What a builder recorded, unvalidated: validation happens all at once in `compileFsm`. */
export interface FsmSpec {
  initial: unknown;
  readonly states: { name: unknown; final: unknown; description: unknown }[];
  readonly transitions: { from: unknown; action: unknown; to: unknown; guard: unknown; priority: unknown }[];
  readonly routes: { route: unknown; inStates: unknown }[];
}

/** One transition, ready for the hot path. */
export interface CompiledTransition {
  readonly to: number;
  readonly guard: GuardCondition | undefined;
  readonly guardName: string | undefined;
  /** Returned by every execution of this transition: frozen, shared. */
  readonly result: TransitionResult;
  /** `{ ok: true, result }`, returned by every `tryExecute` of this transition: frozen, shared. */
  readonly taken: { readonly ok: true; readonly result: TransitionResult };
}

/** A candidate list for one (state, action), in evaluation order. */
export interface CandidateList {
  readonly transitions: readonly CompiledTransition[];
  /** Names of every guard in the list, in evaluation order (for GuardRejectedError). */
  readonly guardNames: readonly string[];
}

/** A validated, indexed FSM definition. */
export interface CompiledFsm {
  readonly states: readonly string[];
  readonly stateIndex: ReadonlyMap<string, number>;
  readonly initial: number;
  /** By state index: action → candidates. */
  readonly table: readonly ReadonlyMap<string, CandidateList>[];
  /** By state index: actions with a transition, sorted by code unit. */
  readonly validActions: readonly (readonly string[])[];
  /** By state index: the frozen snapshot of that state. */
  readonly snapshots: readonly StrategySnapshot[];
  readonly routes: readonly { readonly route: SignalRoute; readonly inStates: ReadonlySet<string> | undefined }[];
  readonly mermaid: string;
  readonly finals: readonly string[];
}

/** Builder → its recorded spec. */
export const builderSpecs = new WeakMap<object, FsmSpec>();
/** Definition → its compiled form. */
export const compiledDefinitions = new WeakMap<object, CompiledFsm>();
