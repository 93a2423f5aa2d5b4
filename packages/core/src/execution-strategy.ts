import type { SignalyardError } from './errors/signalyard-error.js';
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
  /**
   * Optional: `execute` without the exception for a refusal. Returns `{ ok: true, result }` when
   * the action was executed, `{ ok: false, refusal }` when it was refused (the state unchanged);
   * everything else `execute` would throw (bad input, a failing guard) it still throws. A Runner
   * uses it when present, so a refused action costs no thrown error.
   */
  tryExecute?(action: string, input?: unknown): TransitionAttempt;
}

/**
 * A strategy's refusal of an action, as a value (see {@link ExecutionStrategy.tryExecute}): the
 * `code` and fields of the error `execute` would throw, and `toError()` to build that error
 * (which carries the `transitionRefusal` marker) when one is needed.
 */
export interface StrategyRefusal {
  /** The code of the error `execute` would throw, e.g. `FSM_INVALID_TRANSITION`. */
  readonly code: string;
  /** The refused action. */
  readonly action: string;
  /** The error `execute` would have thrown for this refusal: same code, fields and message. */
  toError(): SignalyardError;
}

/**
 * What {@link ExecutionStrategy.tryExecute} returns: the transition taken, or the refusal.
 *
 * @example
 * ```ts
 * const attempt = strategy.tryExecute?.('approve', input);
 * if (attempt?.ok === false) console.log(attempt.refusal.code); // 'FSM_INVALID_TRANSITION'
 * ```
 */
export type TransitionAttempt<R extends StrategyRefusal = StrategyRefusal> =
  | {
      /** The action was executed. */
      readonly ok: true;
      /** The transition taken. */
      readonly result: TransitionResult;
    }
  | {
      /** The action was refused; the state is unchanged. */
      readonly ok: false;
      /** Why, as a value. */
      readonly refusal: R;
    };
