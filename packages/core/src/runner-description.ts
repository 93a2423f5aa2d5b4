import type { Tier } from './route.js';

/** One route of an agent, as `runner.describe()` reports it. */
export interface DescribedRoute {
  /** The route's name; absent for an unnamed route. */
  readonly name?: string;
  /** The signal kind it routes. */
  readonly kind: string;
  /** The tier it belongs to: the strategy's routes, the agent's own, or a plugin's. */
  readonly tier: Tier;
  /** Its priority within the tier (0 when not set). */
  readonly priority: number;
  /** Its action, formatted (`continue`, `transition(open)`, `reject(busy)`, …). */
  readonly action: string;
  /** Whether it has a predicate (it matches only some signals of its kind). */
  readonly conditional: boolean;
}

/** The Mermaid texts of an agent's diagrams: each present when the agent has one. */
export interface AgentDiagrams {
  /** The agent's FSM (`stateDiagram-v2`), when its strategy is a state machine. */
  readonly fsm?: string;
  /** The agent's crew (`flowchart LR`), when its engine is a crew. */
  readonly crew?: string;
  /** The agent's pipeline (`flowchart`), when its engine is a pipeline. */
  readonly pipeline?: string;
}

/** One agent of a runner, as `runner.describe()` reports it. */
export interface AgentDescription {
  /** The agent id. */
  readonly id: string;
  /** The `type` of its strategy's snapshot (`'fsm'`, `'direct'`, …). */
  readonly strategy: string;
  /**
   * The routes a fresh session of this agent is routed by, in evaluation order within each
   * tier: the strategy's (for an FSM, those of its initial state), the agent's, the plugins'.
   */
  readonly routes: readonly DescribedRoute[];
  /** Its diagrams as Mermaid text. */
  readonly diagrams: AgentDiagrams;
}

/** What a runner serves: `runner.describe()`. */
export interface RunnerDescription {
  /** Its agents, in the order they were given. */
  readonly agents: readonly AgentDescription[];
}
