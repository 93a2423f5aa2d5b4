import type { StrategySnapshot } from '@signalyard/core';
import { compileFsm } from './fsm-compile.js';
import type { FsmStrategyBuilder } from './fsm-builder.js';
import { FsmStrategyWithRoutes } from './fsm-strategy-with-routes.js';
import { builderSpecs, compiledDefinitions } from './internal.js';
import { FsmDefinitionError } from './errors/fsm-definition-error.js';

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
  create(snapshot?: StrategySnapshot): FsmStrategyWithRoutes {
    const instance = new FsmStrategyWithRoutes(this);
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
