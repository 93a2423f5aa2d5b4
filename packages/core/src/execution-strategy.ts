import type { SignalRoute } from './route.js';

/**
 * A strategy's state as JSON-safe data: `type` names the strategy (`'fsm'`, `'direct'`), the
 * rest is the strategy's own. Saved in every session checkpoint.
 */
export interface StrategySnapshot {
  /** The strategy that wrote the snapshot (`fsm`, `direct`, …); `restore` refuses another type. */
  readonly type: string;
  readonly [k: string]: unknown;
}

/** What one executed strategy action did: `from` state, `action`, `to` state, and the guard that passed, if any. */
export interface TransitionResult {
  /** The state before the transition. */
  readonly from: string;
  /** The action executed. */
  readonly action: string;
  /** The state after it. */
  readonly to: string;
  /** The name of the guard that allowed the transition; absent for an unguarded transition. */
  readonly guard?: string;
}

/**
 * Decides which actions an agent may take, and contributes the router's strategy tier.
 *
 * The decision is pure and synchronous: `execute` reads the state, decides and writes the new
 * state with no `await` in between, so a strategy is safe to share within one session's queue.
 * A Runner makes one instance per session from an agent's strategy factory.
 */
export interface ExecutionStrategy {
  /** Executes `action` with `input`; throws (a `SignalyardError`) when the action is not allowed, leaving the state unchanged. */
  execute(action: string, input?: unknown): TransitionResult;
  /** Whether `execute(action, input)` would succeed: the same decision, without throwing or changing state. */
  canExecute(action: string, input?: unknown): boolean;
  /** The routes of the router's strategy tier. Read once when a router is composed. */
  signalRoutes(): readonly SignalRoute[];
  /** The current state as JSON-safe data. */
  snapshot(): StrategySnapshot;
  /** Restores a snapshot taken by `snapshot()`; throws on a snapshot it cannot take, leaving the state unchanged. */
  restore(snapshot: StrategySnapshot): void;
}
