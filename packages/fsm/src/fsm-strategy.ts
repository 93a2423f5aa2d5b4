// The FSM's public classes: `FsmStrategy` (one machine: an instance of a definition, with its
// strategy-tier routes; `FsmStrategy.builder()` starts a definition), `FsmStrategyBuilder` and
// `FsmDefinition` (compiles a builder's spec once, creates instances). They refer to each other by
// design — the machine's static `builder()` leads, through the definition, back to new machines —
// so they share this module: split across files they would import each other in a cycle. The work
// is elsewhere: compiling (fsm-compile.ts), refusals (fsm-refusal.ts), instance routes
// (fsm-routes.ts), builder options (fsm-options.ts), Mermaid (fsm-mermaid.ts). The guard
// evaluation stays in the class: its re-entry check reads the instance's own fields on the hot path.
import type { ExecutionStrategy, SignalRoute, StrategySnapshot, TransitionResult } from '@signalyard/core';
import { InvalidArgumentError, describeValue } from '@signalyard/core';
import { errorText } from '@signalyard/core/internal';
import { FsmDefinitionError } from './errors/fsm-definition-error.js';
import { FsmSnapshotError } from './errors/fsm-snapshot-error.js';
import { GuardFailedError } from './errors/guard-failed-error.js';
import type { GuardRejectedError } from './errors/guard-rejected-error.js';
import type { InvalidTransitionError } from './errors/invalid-transition-error.js';
import { compileFsm } from './fsm-compile.js';
import { options, type RouteOptions, type StateOptions, type TransitionOptions } from './fsm-options.js';
import { guardRejected, invalidTransition, refusalError } from './fsm-refusal.js';
import type { FsmAttempt } from './fsm-refusal.js';
import { instanceRoutes } from './fsm-routes.js';
import {
  builderSpecs,
  compiledDefinitions,
  type CandidateList,
  type CompiledFsm,
  type CompiledTransition,
  type FsmSpec,
} from './internal.js';

const isThenable = (value: unknown): boolean =>
  typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';

/** Outcome codes of `#decide`: a transition taken, or why none was. */
const NO_ENTRY = 0;
const REJECTED = 1;

/**
 * A finite state machine over string states and actions — the transition table of an
 * {@link FsmDefinition} plus one current state — and the `ExecutionStrategy` a Runner agent uses:
 * its `signalRoutes()` are the strategy-tier routes registered on the builder.
 *
 * `execute(action, input)` looks up the transitions for `(currentState, action)`, tries them in
 * descending priority (ties: registration order), and takes the first whose guard returns
 * exactly `true`, or the first without a guard. It is atomic: guards are synchronous, and the
 * state is read, decided and written with no `await` in between. On any error the state is
 * unchanged. {@link FsmStrategy.tryExecute} returns a refusal as a value instead of throwing it.
 *
 * Build one with {@link FsmStrategy.builder}.
 *
 * @example
 * ```ts
 * const fsm = FsmStrategy.builder()
 *   .initial('idle')
 *   .transition('idle', 'start', 'running')
 *   .transition('running', 'finish', 'done')
 *   .build();
 * fsm.execute('start');     // { from: 'idle', action: 'start', to: 'running' }
 * fsm.currentState;         // 'running'
 * fsm.canExecute('start');  // false
 * ```
 */
export class FsmStrategy implements ExecutionStrategy {
  readonly #fsm: CompiledFsm;
  #current: number;
  /** The action whose guard is being evaluated, while one is. */
  #evaluating: string | undefined = undefined;
  /** What a guard called on this FSM while being evaluated (`execute("x")`, `restore()`), if it did. */
  #reentered: string | undefined = undefined;
  #routes: readonly SignalRoute[] | undefined;

  /**
   * A new instance of `definition`, in its initial state (the same as `definition.create()`).
   * @throws FsmDefinitionError `FSM_DEFINITION_INVALID` when `definition` is not an {@link FsmDefinition}.
   */
  constructor(definition: FsmDefinition) {
    const fsm = compiledDefinitions.get(definition);
    if (fsm === undefined)
      throw new FsmDefinitionError({
        problems: [`new FsmStrategy() needs an FsmDefinition, got ${describeValue(definition)}`],
      });
    this.#fsm = fsm;
    this.#current = fsm.initial;
  }

  /** Starts a new {@link FsmStrategyBuilder}. */
  static builder(): FsmStrategyBuilder {
    return new FsmStrategyBuilder();
  }

  /**
   * This instance itself. Kept from the time `build()` returned a wrapper around the machine.
   * @deprecated An `FsmStrategy` is the machine: use it directly.
   */
  get strategy(): this {
    return this;
  }

  /** The current state. */
  get currentState(): string {
    return this.#fsm.states[this.#current] as string;
  }

  /** The actions with at least one transition from the current state, sorted by code unit (frozen). */
  validActions(): readonly string[] {
    return this.#fsm.validActions[this.#current] as readonly string[];
  }

  /**
   * Whether `execute(action, input)` would succeed: the same decision, evaluating the same
   * guards, without throwing or changing state. A guard that throws or returns a Promise counts
   * as "would not succeed". Called from inside a guard of this FSM, it answers `false`.
   */
  canExecute(action: string, input?: unknown): boolean {
    if (this.#evaluating !== undefined) return false;
    const list = (this.#fsm.table[this.#current] as ReadonlyMap<string, CandidateList>).get(action);
    if (list === undefined) return false;
    try {
      return typeof this.#decide(list, action, input) === 'object';
    } catch {
      return false;
    }
  }

  /**
   * Executes `action` with `input` and returns the transition taken. The result object is frozen
   * and shared by every execution of the same transition (so a hit allocates nothing).
   *
   * @throws InvalidArgumentError `ACTION_INVALID` when `action` is not a string.
   * @throws InvalidTransitionError `FSM_INVALID_TRANSITION` when no transition exists for the action from the current state.
   * @throws GuardRejectedError `FSM_GUARD_REJECTED` when every guard rejected the input.
   * @throws GuardFailedError `FSM_GUARD_FAILED` when a guard threw, returned a Promise, or
   * re-entered this FSM (called `execute`, `tryExecute` or `restore` on it).
   *
   * The two refusals (`FSM_INVALID_TRANSITION`, `FSM_GUARD_REJECTED`) are answers, not bugs: their
   * errors carry no stack frames, which makes a refused `execute` several times cheaper. Where a
   * refusal is expected, {@link FsmStrategy.tryExecute} returns it as a value without any error.
   */
  execute(action: string, input?: unknown): TransitionResult {
    if (this.#evaluating !== undefined) {
      // A guard is executing a transition of the FSM it guards: refuse, and fail the outer
      // execute too (even if the guard swallows this error).
      this.#reentered = `execute(${JSON.stringify(action)})`;
      throw this.#reentry(action, '(re-entered)', this.#reentered);
    }
    const list = (this.#fsm.table[this.#current] as ReadonlyMap<string, CandidateList>).get(action);
    if (list === undefined) throw typeof action === 'string' ? this.#invalid(action) : notAnAction(action);
    const taken = this.#decide(list, action, input);
    if (taken === REJECTED) throw refusalError(guardRejected(this.currentState, action, list.guardNames));
    if (taken === NO_ENTRY) throw this.#invalid(action);
    this.#current = taken.to;
    return taken.result;
  }

  /**
   * {@link FsmStrategy.execute} that returns a refusal as a value instead of throwing it:
   * `{ ok: true, result }` when the transition was taken (the state changed), or
   * `{ ok: false, refusal }` (a `TransitionRefusal`) when the action was refused (the state
   * unchanged). It never throws for a refusal. The refusal has the code and fields of the error `execute` would throw —
   * `FSM_INVALID_TRANSITION` with `currentState`, `action` and `validActions`, or
   * `FSM_GUARD_REJECTED` with `currentState`, `action` and `guards` — and `refusal.toError()`
   * builds that error. A hit allocates nothing: `{ ok: true, result }` is one frozen object per
   * transition, shared like the result.
   *
   * What is not a refusal is still thrown, as by `execute`:
   * @throws InvalidArgumentError `ACTION_INVALID` when `action` is not a string.
   * @throws GuardFailedError `FSM_GUARD_FAILED` when a guard threw, returned a Promise, or
   * re-entered this FSM.
   *
   * @example
   * ```ts
   * const attempt = fsm.tryExecute('finish');
   * if (attempt.ok) console.log(attempt.result.to);
   * else console.log(attempt.refusal.code, attempt.refusal.currentState); // 'FSM_INVALID_TRANSITION' 'idle'
   * ```
   */
  tryExecute(action: string, input?: unknown): FsmAttempt {
    if (this.#evaluating !== undefined) {
      this.#reentered = `tryExecute(${JSON.stringify(action)})`;
      throw this.#reentry(action, '(re-entered)', this.#reentered);
    }
    const list = (this.#fsm.table[this.#current] as ReadonlyMap<string, CandidateList>).get(action);
    if (list === undefined) {
      if (typeof action !== 'string') throw notAnAction(action);
      return { ok: false, refusal: invalidTransition(this.currentState, action, this.validActions()) };
    }
    const taken = this.#decide(list, action, input);
    if (taken === REJECTED) return { ok: false, refusal: guardRejected(this.currentState, action, list.guardNames) };
    if (taken === NO_ENTRY)
      return { ok: false, refusal: invalidTransition(this.currentState, action, this.validActions()) };
    this.#current = taken.to;
    return taken.taken;
  }

  /**
   * The routes registered with the builder's `route()`, for the router's strategy tier. Routes
   * given `inStates` match only while **this instance** is in one of those states (and their own
   * predicate, if any, returns `true`). The same frozen array on every call.
   */
  signalRoutes(): readonly SignalRoute[] {
    this.#routes ??= instanceRoutes(this.#fsm.routes, () => this.currentState);
    return this.#routes;
  }

  /** The current state as `{ type: 'fsm', current_state }` (a frozen object per state). */
  snapshot(): {
    /** Always `fsm`. */
    readonly type: 'fsm';
    /** The state the machine is in. */
    readonly current_state: string;
  } {
    return this.#fsm.snapshots[this.#current] as { readonly type: 'fsm'; readonly current_state: string };
  }

  /**
   * Sets the current state from a snapshot taken by {@link FsmStrategy.snapshot}.
   * @throws FsmSnapshotError `FSM_SNAPSHOT_INVALID` for a non-object, a snapshot of another
   * `type`, or an unknown state; the state is unchanged.
   * @throws GuardFailedError `FSM_GUARD_FAILED` when called from inside a guard of this FSM
   * (the `execute` being decided fails too, even if the guard swallows this error).
   */
  restore(snapshot: StrategySnapshot): void {
    if (this.#evaluating !== undefined) {
      // A guard is restoring the FSM it guards: refuse, as for a nested execute().
      this.#reentered = 'restore()';
      throw this.#reentry(this.#evaluating, '(re-entered)', this.#reentered);
    }
    if (typeof snapshot !== 'object' || (snapshot as unknown) === null) {
      throw new FsmSnapshotError({
        message: `Cannot restore FSM snapshot ${describeValue(snapshot)}: expected { "type": "fsm", "current_state": "<state>" }`,
      });
    }
    if (snapshot.type !== 'fsm') {
      throw new FsmSnapshotError({
        message: `Cannot restore a snapshot of type ${describeValue(snapshot.type)} into an FSM: expected type "fsm"`,
      });
    }
    const state = snapshot.current_state;
    const index = typeof state === 'string' ? this.#fsm.stateIndex.get(state) : undefined;
    if (index === undefined) {
      throw new FsmSnapshotError({
        message: `Cannot restore FSM snapshot: current_state ${describeValue(state)} is not a state of this FSM (states: ${JSON.stringify(this.#fsm.states)})`,
      });
    }
    this.#current = index;
  }

  /** The definition's Mermaid `stateDiagram-v2` (see {@link FsmDefinition.toMermaid}). */
  toMermaid(): string {
    return this.#fsm.mermaid;
  }

  /** Picks the transition to take, or says why none: REJECTED (every guard said no), NO_ENTRY. */
  #decide(list: CandidateList, action: string, input: unknown): CompiledTransition | typeof NO_ENTRY | typeof REJECTED {
    const candidates = list.transitions;
    for (let i = 0; i < candidates.length; i++) {
      const c = candidates[i] as CompiledTransition;
      const guard = c.guard;
      if (guard === undefined) return c;
      let passed: unknown;
      this.#evaluating = action;
      this.#reentered = undefined;
      try {
        passed = guard.evaluate(input);
      } catch (error) {
        const reentered = this.#takeReentry();
        if (reentered !== undefined) throw this.#reentry(action, c.guardName as string, reentered);
        throw this.#guardFailed(action, c, `it threw: ${errorText(error)}`, error);
      } finally {
        this.#evaluating = undefined;
      }
      const reentered = this.#takeReentry();
      if (reentered !== undefined) throw this.#reentry(action, c.guardName as string, reentered);
      if (passed === true) return c;
      if (passed !== false && isThenable(passed)) {
        // Never leave a rejected guard promise unhandled: the guard has already failed.
        Promise.resolve(passed).catch(() => undefined);
        throw this.#guardFailed(action, c, 'it returned a Promise; guards must be synchronous');
      }
    }
    return candidates.length === 0 ? NO_ENTRY : REJECTED;
  }

  /** What a guard called on this FSM during its evaluation (set by a nested call), cleared. */
  #takeReentry(): string | undefined {
    const reentered = this.#reentered;
    this.#reentered = undefined;
    return reentered;
  }

  /** `call`: what the guard called on this FSM, e.g. `execute("go")` or `restore()`. */
  #reentry(action: string, guard: string, call: string): GuardFailedError {
    return this.#guardFailed(
      action,
      guard,
      `a guard re-entered the FSM it guards by calling ${call} (guards must be pure: they must not execute transitions or restore snapshots)`,
    );
  }

  #guardFailed(action: string, guard: CompiledTransition | string, reason: string, cause?: unknown): GuardFailedError {
    const name = typeof guard === 'string' ? guard : (guard.guardName as string);
    return new GuardFailedError({
      currentState: this.currentState,
      action,
      guard: name,
      reason,
      cause,
    });
  }

  #invalid(action: string): InvalidTransitionError | GuardRejectedError {
    return refusalError(invalidTransition(this.currentState, action, this.validActions()));
  }
}

/**
 * The type of the instances `build()` and `FsmDefinition.create()` return, from the time they
 * wrapped an {@link FsmStrategy}: it is {@link FsmStrategy} now.
 * @deprecated Use {@link FsmStrategy}.
 */
export type FsmStrategyWithRoutes = FsmStrategy;

/**
 * {@link FsmStrategy} under its former name: `new FsmStrategyWithRoutes(definition)` and
 * `instanceof FsmStrategyWithRoutes` keep working.
 * @deprecated Use {@link FsmStrategy}.
 */
export const FsmStrategyWithRoutes: typeof FsmStrategy = FsmStrategy;

/**
 * An immutable, validated FSM definition: states, transitions, guards and routes, shareable
 * between any number of instances. `create()` makes a new independent instance (a Runner makes
 * one per session through the agent's strategy factory `() => definition.create()`).
 *
 * @example
 * ```ts
 * const definition = FsmStrategy.builder()
 *   .initial('idle')
 *   .transition('idle', 'start', 'running')
 *   .define();
 * const a = definition.create();
 * const b = definition.create(a.snapshot());   // restored to a's state
 * ```
 */
export class FsmDefinition {
  /** Every state, in declaration order (or order of first use when none was declared). */
  readonly states: readonly string[];
  /** The initial state. */
  readonly initial: string;
  readonly #mermaid: string;

  /**
   * Validates the builder's current definition (the same as `builder.define()`).
   * @throws FsmDefinitionError `FSM_DEFINITION_INVALID` listing every problem.
   */
  constructor(builder: FsmStrategyBuilder) {
    const spec = builderSpecs.get(builder);
    if (spec === undefined) throw new FsmDefinitionError({ problems: ['FsmDefinition needs an FsmStrategyBuilder'] });
    const compiled = compileFsm(spec);
    compiledDefinitions.set(this, compiled);
    this.states = compiled.states;
    this.initial = compiled.states[compiled.initial] as string;
    this.#mermaid = compiled.mermaid;
    Object.freeze(this);
  }

  /**
   * A new instance in the initial state, or restored from `snapshot`.
   * @throws FsmSnapshotError `FSM_SNAPSHOT_INVALID` when the snapshot cannot be restored.
   */
  create(snapshot?: StrategySnapshot): FsmStrategy {
    const instance = new FsmStrategy(this);
    if (snapshot !== undefined) instance.restore(snapshot);
    return instance;
  }

  /**
   * The definition as a Mermaid `stateDiagram-v2`: `[*] --> initial`, one line per transition in
   * registration order (`from --> to : action`, with ` [guard]` for guarded ones), then
   * `state --> [*]` for each final state. State names that are not `[A-Za-z0-9_]+` are declared
   * after the header as `state "name" as sN` and referred to as `sN`.
   */
  toMermaid(): string {
    return this.#mermaid;
  }
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
  build(): FsmStrategy {
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

/** The error for an `execute` whose action is not a string (a caller's mistake, not a refusal). */
function notAnAction(action: unknown): InvalidArgumentError {
  return new InvalidArgumentError({
    code: 'ACTION_INVALID',
    message: `Invalid FSM action ${describeValue(action)}: expected a string such as "start"`,
  });
}
