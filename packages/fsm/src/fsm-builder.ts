import type { SignalRoute } from '@signalyard/core';
import { FsmDefinition } from './fsm-definition.js';
import type { FsmStrategyWithRoutes } from './fsm-strategy-with-routes.js';
import type { GuardCondition } from './guard.js';
import { builderSpecs, type FsmSpec } from './internal.js';

/** Options of {@link FsmStrategyBuilder.transition}. */
export interface TransitionOptions {
  /** A named guard, or a function (named `guard#N` after its `transition()` call's 0-based index). */
  readonly guard?: GuardCondition | ((input: unknown) => boolean);
  /** An integer, default 0: higher is tried first; ties go to the transition registered first. */
  readonly priority?: number;
}

/** Options of {@link FsmStrategyBuilder.state}. */
export interface StateOptions {
  /** No transition may leave a final state. */
  readonly final?: boolean;
  readonly description?: string;
}

/** Options of {@link FsmStrategyBuilder.route}. */
export interface RouteOptions {
  /** The route matches only while the FSM instance is in one of these states. */
  readonly inStates?: readonly string[];
}

/**
 * Declares an FSM: its initial state, optional state declarations, transitions with guards and
 * priorities, and strategy-tier routes. Nothing is checked until `build()` / `define()`, which
 * report every problem at once in one {@link FsmDefinitionError}.
 *
 * @example
 * ```ts
 * const definition = FsmStrategy.builder()
 *   .initial('idle')
 *   .transition('idle', 'start', 'planning')
 *   .transition('planning', 'review', 'executing', { guard: new ClosureGuard('quality', (i) => (i as Q).quality > 0.5), priority: 10 })
 *   .transition('planning', 'review', 'revising')
 *   .route({ kind: SignalKind.UserMessage, action: Action.reject('busy') }, { inStates: ['executing'] })
 *   .define();
 * ```
 */
export class FsmStrategyBuilder {
  readonly #spec: FsmSpec = { initial: undefined, states: [], transitions: [], routes: [] };

  constructor() {
    builderSpecs.set(this, this.#spec);
  }

  /** Sets the initial state (required; the last call wins). */
  initial(state: string): this {
    this.#spec.initial = state;
    return this;
  }

  /**
   * Declares a state. Optional: once any state is declared, every state used must be declared;
   * without declarations the states are every name used in `initial` and `transition`.
   */
  state(name: string, opts?: StateOptions): this {
    const o = options(opts);
    this.#spec.states.push({ name, final: o.final, description: o.description });
    return this;
  }

  /** Adds a transition from `from` to `to` on `action`, optionally guarded and prioritised. */
  transition(from: string, action: string, to: string, opts?: TransitionOptions): this {
    const o = options(opts);
    this.#spec.transitions.push({ from, action, to, guard: o.guard, priority: o.priority });
    return this;
  }

  /**
   * Adds a strategy-tier signal route. With `inStates` it matches only while the FSM instance is
   * in one of those states; without, in every state.
   */
  route(route: SignalRoute, opts?: RouteOptions): this {
    const inStates: unknown = options(opts).inStates;
    this.#spec.routes.push({
      // Copied now: later changes to the caller's objects never reach a definition.
      route: typeof route === 'object' && (route as unknown) !== null ? Object.freeze({ ...route }) : route,
      inStates: Array.isArray(inStates) ? [...(inStates as unknown[])] : inStates,
    });
    return this;
  }

  /**
   * Validates and returns one live instance (the same as `define().create()`).
   * @throws FsmDefinitionError `FSM_DEFINITION_INVALID` listing every problem.
   */
  build(): FsmStrategyWithRoutes {
    return this.define().create();
  }

  /**
   * Validates and returns an immutable, shareable {@link FsmDefinition}; later builder calls do
   * not affect it.
   * @throws FsmDefinitionError `FSM_DEFINITION_INVALID` listing every problem.
   */
  define(): FsmDefinition {
    return new FsmDefinition(this);
  }
}

/** Options objects are optional; `null` from JavaScript callers counts as none. */
function options<T extends object>(opts: T | undefined | null): Partial<T> {
  return typeof opts === 'object' && opts !== null ? opts : {};
}
