import { frozenJsonValue } from './internal/frozen-mark.js';
import { InvalidArgumentError } from './errors/invalid-argument-error.js';
import type { ExecutionStrategy, StrategySnapshot, TransitionResult } from './execution-strategy.js';
import type { SignalRoute } from './route.js';
import { describeValue } from './signal.js';

const NO_ROUTES: readonly SignalRoute[] = Object.freeze([]);
// Frozen and marked as frozen JSON: a store shares it instead of copying it with every save.
const SNAPSHOT: StrategySnapshot = frozenJsonValue({ type: 'direct' });

/**
 * The strategy of an agent without a workflow: every action is allowed, there are no strategy
 * routes, and there is no state (`from` and `to` are both `'direct'`; the snapshot is
 * `{ type: 'direct' }`). The default strategy of a Runner agent.
 *
 * @example
 * ```ts
 * new DirectStrategy().execute('anything');   // { from: 'direct', action: 'anything', to: 'direct' }
 * ```
 */
export class DirectStrategy implements ExecutionStrategy {
  /**
   * Returns `{ from: 'direct', action, to: 'direct' }`.
   * @throws InvalidArgumentError `ACTION_INVALID` when `action` is not a non-empty string.
   */
  execute(action: string, _input?: unknown): TransitionResult {
    if (!this.canExecute(action)) {
      throw new InvalidArgumentError({
        code: 'ACTION_INVALID',
        message: `Invalid strategy action ${describeValue(action)}: expected a non-empty string`,
      });
    }
    return { from: 'direct', action, to: 'direct' };
  }

  /** True for every non-empty action name. */
  canExecute(action: string, _input?: unknown): boolean {
    return typeof action === 'string' && action !== '';
  }

  /** No routes: a direct agent's routing is its own and its plugins'. */
  signalRoutes(): readonly SignalRoute[] {
    return NO_ROUTES;
  }

  /** Always `{ type: 'direct' }`. */
  snapshot(): StrategySnapshot {
    return SNAPSHOT;
  }

  /**
   * Accepts only `{ type: 'direct' }`.
   * @throws InvalidArgumentError `STRATEGY_SNAPSHOT_INVALID` for any other snapshot.
   */
  restore(snapshot: StrategySnapshot): void {
    if (typeof snapshot !== 'object' || (snapshot as unknown) === null || snapshot.type !== 'direct') {
      throw new InvalidArgumentError({
        code: 'STRATEGY_SNAPSHOT_INVALID',
        message: `DirectStrategy cannot restore snapshot ${describeValue(snapshot)}: expected { "type": "direct" }`,
      });
    }
  }
}
