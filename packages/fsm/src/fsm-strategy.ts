import { describeValue, type StrategySnapshot, type TransitionResult } from '@signalyard/core';
import { errorText } from '@signalyard/core/internal';
import { FsmDefinitionError } from './errors/fsm-definition-error.js';
import { FsmSnapshotError } from './errors/fsm-snapshot-error.js';
import { GuardFailedError } from './errors/guard-failed-error.js';
import { GuardRejectedError } from './errors/guard-rejected-error.js';
import { InvalidTransitionError } from './errors/invalid-transition-error.js';
import { FsmStrategyBuilder } from './fsm-builder.js';
import type { FsmDefinition } from './fsm-definition.js';
import { compiledDefinitions, type CandidateList, type CompiledFsm, type CompiledTransition } from './internal.js';

const isThenable = (value: unknown): boolean =>
  typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';

/** Outcome codes of `#decide`: a transition taken, or why none was. */
const NO_ENTRY = 0;
const REJECTED = 1;

/**
 * A finite state machine over string states and actions: the transition table of an
 * {@link FsmDefinition} plus one current state.
 *
 * `execute(action, input)` looks up the transitions for `(currentState, action)`, tries them in
 * descending priority (ties: registration order), and takes the first whose guard returns
 * exactly `true`, or the first without a guard. It is atomic: guards are synchronous, and the
 * state is read, decided and written with no `await` in between. On any error the state is
 * unchanged.
 *
 * Build one with {@link FsmStrategy.builder}; the Runner uses the {@link FsmStrategyWithRoutes}
 * wrapper, which adds the strategy-tier routes.
 *
 * @example
 * ```ts
 * const fsm = FsmStrategy.builder()
 *   .initial('idle')
 *   .transition('idle', 'start', 'running')
 *   .transition('running', 'finish', 'done')
 *   .build().strategy;
 * fsm.execute('start');     // { from: 'idle', action: 'start', to: 'running' }
 * fsm.currentState;         // 'running'
 * fsm.canExecute('start');  // false
 * ```
 */
export class FsmStrategy {
  readonly #fsm: CompiledFsm;
  #current: number;
  #evaluating = false;
  #reentered = false;

  /**
   * A new instance of `definition`, in its initial state (the same as
   * `definition.create().strategy`).
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
    if (this.#evaluating) return false;
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
   * @throws InvalidTransitionError `FSM_INVALID_TRANSITION` when no transition exists for the action from the current state.
   * @throws GuardRejectedError `FSM_GUARD_REJECTED` when every guard rejected the input.
   * @throws GuardFailedError `FSM_GUARD_FAILED` when a guard threw, returned a Promise, or re-entered this FSM.
   */
  execute(action: string, input?: unknown): TransitionResult {
    if (this.#evaluating) {
      // A guard is executing a transition of the FSM it guards: refuse, and fail the outer
      // execute too (even if the guard swallows this error).
      this.#reentered = true;
      throw this.#reentry(action, '(re-entered)');
    }
    const list = (this.#fsm.table[this.#current] as ReadonlyMap<string, CandidateList>).get(action);
    if (list === undefined) throw this.#invalid(action);
    const taken = this.#decide(list, action, input);
    if (taken === REJECTED) {
      throw new GuardRejectedError({ currentState: this.currentState, action, guards: list.guardNames });
    }
    if (taken === NO_ENTRY) throw this.#invalid(action);
    this.#current = taken.to;
    return taken.result;
  }

  /** The current state as `{ type: 'fsm', current_state }` (a frozen object per state). */
  snapshot(): { readonly type: 'fsm'; readonly current_state: string } {
    return this.#fsm.snapshots[this.#current] as { readonly type: 'fsm'; readonly current_state: string };
  }

  /**
   * Sets the current state from a snapshot taken by {@link FsmStrategy.snapshot}.
   * @throws FsmSnapshotError `FSM_SNAPSHOT_INVALID` for a non-object, a snapshot of another
   * `type`, or an unknown state; the state is unchanged.
   */
  restore(snapshot: StrategySnapshot): void {
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
      this.#evaluating = true;
      this.#reentered = false;
      try {
        passed = guard.evaluate(input);
      } catch (error) {
        // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- set by a nested execute() inside evaluate()
        if (this.#reentered) {
          this.#reentered = false;
          throw this.#reentry(action, c.guardName as string);
        }
        throw new GuardFailedError({
          currentState: this.currentState,
          action,
          guard: c.guardName as string,
          reason: `it threw: ${errorText(error)}`,
          cause: error,
        });
      } finally {
        this.#evaluating = false;
      }
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- set by a nested execute() inside evaluate()
      if (this.#reentered) {
        this.#reentered = false;
        throw this.#reentry(action, c.guardName as string);
      }
      if (passed === true) return c;
      if (passed !== false && isThenable(passed)) {
        // Never leave a rejected guard promise unhandled: the guard has already failed.
        Promise.resolve(passed).catch(() => undefined);
        throw new GuardFailedError({
          currentState: this.currentState,
          action,
          guard: c.guardName as string,
          reason: 'it returned a Promise; guards must be synchronous',
        });
      }
    }
    return candidates.length === 0 ? NO_ENTRY : REJECTED;
  }

  #reentry(action: string, guard: string): GuardFailedError {
    return new GuardFailedError({
      currentState: this.currentState,
      action,
      guard,
      reason: 'a guard re-entered the FSM it guards (guards must be pure: they must not execute transitions)',
    });
  }

  #invalid(action: string): InvalidTransitionError {
    return new InvalidTransitionError({ currentState: this.currentState, action, validActions: this.validActions() });
  }
}
