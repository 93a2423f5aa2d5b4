import type {
  ExecutionStrategy,
  RouteContext,
  Signal,
  SignalRoute,
  StrategySnapshot,
  TransitionResult,
} from '@signalyard/core';
import type { FsmDefinition } from './fsm-definition.js';
import { FsmStrategy } from './fsm-strategy.js';
import { compiledDefinitions } from './internal.js';

/**
 * An {@link FsmStrategy} bundled with the strategy-tier routes registered on its builder: the
 * `ExecutionStrategy` a Runner agent uses. `execute`, `canExecute`, `snapshot` and
 * `restore` delegate to {@link FsmStrategyWithRoutes.strategy}; `signalRoutes()` returns the
 * builder's routes, with each `inStates` route matching only while **this instance** is in one
 * of those states.
 *
 * @example
 * ```ts
 * const definition = FsmStrategy.builder()
 *   .initial('idle')
 *   .transition('idle', 'start', 'processing')
 *   .transition('processing', 'finish', 'idle')
 *   .route({ kind: SignalKind.UserMessage, action: Action.reject('busy') }, { inStates: ['processing'] })
 *   .define();
 * const agent = { id: 'main', strategy: () => definition.create(), engine };
 * ```
 */
export class FsmStrategyWithRoutes implements ExecutionStrategy {
  /** The state machine itself. */
  readonly strategy: FsmStrategy;
  readonly #definition: FsmDefinition;
  #routes: readonly SignalRoute[] | undefined;

  /** A new instance of `definition` in its initial state (the same as `definition.create()`). */
  constructor(definition: FsmDefinition) {
    this.strategy = new FsmStrategy(definition);
    this.#definition = definition;
  }

  /** The current state of {@link FsmStrategyWithRoutes.strategy}. */
  get currentState(): string {
    return this.strategy.currentState;
  }

  /** See {@link FsmStrategy.validActions}. */
  validActions(): readonly string[] {
    return this.strategy.validActions();
  }

  /** See {@link FsmStrategy.execute}. */
  execute(action: string, input?: unknown): TransitionResult {
    return this.strategy.execute(action, input);
  }

  /** See {@link FsmStrategy.canExecute}. */
  canExecute(action: string, input?: unknown): boolean {
    return this.strategy.canExecute(action, input);
  }

  /**
   * The routes registered with the builder's `route()`, for the router's strategy tier. Routes
   * given `inStates` match only while this instance is in one of those states (and their own
   * predicate, if any, returns `true`). The same frozen array on every call.
   */
  signalRoutes(): readonly SignalRoute[] {
    if (this.#routes === undefined) {
      const fsm = this.strategy;
      const compiled = compiledDefinitions.get(this.#definition);
      this.#routes = Object.freeze(
        (compiled?.routes ?? []).map(({ route, inStates }): SignalRoute => {
          if (inStates === undefined) return route;
          const own = route.predicate;
          const predicate =
            own === undefined
              ? () => inStates.has(fsm.currentState)
              : (signal: Signal, ctx: RouteContext) => inStates.has(fsm.currentState) && own(signal, ctx);
          return Object.freeze({ ...route, predicate });
        }),
      );
    }
    return this.#routes;
  }

  /** See {@link FsmStrategy.snapshot}. */
  snapshot(): { readonly type: 'fsm'; readonly current_state: string } {
    return this.strategy.snapshot();
  }

  /** See {@link FsmStrategy.restore}. */
  restore(snapshot: StrategySnapshot): void {
    this.strategy.restore(snapshot);
  }

  /** See {@link FsmDefinition.toMermaid}. */
  toMermaid(): string {
    return this.strategy.toMermaid();
  }
}
