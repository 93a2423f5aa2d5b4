import type { CrewConfig, CrewConfigInput } from './crew-config.js';
import { resolveCrewConfig } from './resolve-crew-config.js';

// The routing structure of a crew as data: what `signalyard graph --format json` prints, what
// `crewGraphMermaid` draws, what a Runner's `describe()` shows for a crew engine.

/** An agent of a {@link CrewGraph}. */
export interface CrewGraphAgent {
  /** The agent id. */
  readonly id: string;
  /** The display name, when crew.yaml gives one. */
  readonly name?: string;
  /** True for the crew's `entry_point`. */
  readonly entry: boolean;
  /** `agent_behaviors.<id>.wait_for_signal`: a turn no signal routes pauses the run. */
  readonly waitForSignal: boolean;
  /** `agent_behaviors.<id>.is_terminal`: a turn no signal routes ends the run. */
  readonly isTerminal: boolean;
}

/** A parallel group of a {@link CrewGraph}. */
export interface CrewGraphGroup {
  /** The group name (what signals target). */
  readonly id: string;
  /** Members, in declaration order. */
  readonly agents: readonly string[];
  /** True: wait for every member (or the deadline); false: finish at the first success. */
  readonly waitForAll: boolean;
  /** The group's deadline, `settings.parallel_timeout_seconds` when it sets none. */
  readonly timeoutSeconds: number;
  /** The agent that continues after the group; absent → fallback routing. */
  readonly nextAgent?: string;
}

/**
 * A directed edge of a {@link CrewGraph}:
 *
 * - `signal`: a reply of `from` carrying the marker `signal` hands off to `to`, an agent or a
 *   parallel group (`toKind`);
 * - `fan_out`: parallel group `from` runs member `to`;
 * - `next_agent`: after parallel group `from`, agent `to` continues;
 * - `fallback`: when no signal routes a reply of `from`, `to` is tried (`order` is its 0-based
 *   position in `handoff_targets`; the agent itself is left out, as the executor skips it).
 */
export type CrewGraphEdge =
  | {
      readonly kind: 'signal';
      readonly from: string;
      readonly to: string;
      readonly toKind: 'agent' | 'parallel_group';
      readonly signal: string;
      readonly description?: string;
    }
  | { readonly kind: 'fan_out'; readonly from: string; readonly to: string }
  | { readonly kind: 'next_agent'; readonly from: string; readonly to: string }
  | { readonly kind: 'fallback'; readonly from: string; readonly to: string; readonly order: number };

/**
 * A way a run ends: a termination signal of `agent` (a signal whose target is `""`), or a
 * terminal agent (`is_terminal`) whose reply no signal routes.
 */
export type CrewGraphTermination =
  | { readonly kind: 'signal'; readonly agent: string; readonly signal: string; readonly description?: string }
  | { readonly kind: 'terminal_agent'; readonly agent: string };

/**
 * The routing structure of a crew, as `signalyard graph --format json` prints it: agents, parallel
 * groups, edges and terminations, in a deterministic order.
 *
 * Order: `agents` in crew order; `parallelGroups` in declaration order; `edges` agent by agent
 * (crew order: its routing signals in config order, then its fallbacks), then group by group
 * (its fan-out edges in member order, then its `next_agent` edge); `terminations` agent by agent,
 * signals in config order before `terminal_agent`. Optional fields are left out when absent.
 * `version` changes only when the format changes incompatibly.
 *
 * @example
 * ```ts
 * const graph: CrewGraph = JSON.parse(execSync('signalyard graph crew.yaml --format json', { encoding: 'utf8' }));
 * const handoffs = graph.edges.filter((e) => e.kind === 'signal').map((e) => `${e.from} ${e.signal} -> ${e.to}`);
 * ```
 */
export interface CrewGraph {
  /** The format version: 1. */
  readonly version: 1;
  /** The agent a fresh run starts with. */
  readonly entryPoint: string;
  readonly agents: readonly CrewGraphAgent[];
  readonly parallelGroups: readonly CrewGraphGroup[];
  readonly edges: readonly CrewGraphEdge[];
  readonly terminations: readonly CrewGraphTermination[];
}

/**
 * Builds the {@link CrewGraph} of a crew: who hands off to whom, through which marker, which
 * parallel groups fan out to whom and who continues after them, and how runs end.
 *
 * Accepts a `CrewConfig` from `parseCrewConfig` / `loadCrewConfig` / `resolveCrewConfig` (used as
 * it is) or a crew written in code (validated with the crew.yaml rules first). Pure and
 * deterministic: the same crew always gives the same graph (see {@link CrewGraph} for the order).
 * {@link crewGraphMermaid} draws it.
 *
 * @throws ConfigError (`CONFIG_INVALID`) listing every problem when `crew` is not a valid crew.
 * @example
 * ```ts
 * const graph = buildCrewGraph(await loadCrewConfig('crew.yaml'));
 * graph.edges.filter((e) => e.kind === 'signal').map((e) => `${e.from} -[${e.signal}]-> ${e.to}`);
 * ```
 */
export function buildCrewGraph(crew: CrewConfig | CrewConfigInput): CrewGraph {
  const config = resolveCrewConfig(crew);
  const { signals, agentBehaviors, parallelGroups } = config.routing;
  const groupEntries = Object.entries(parallelGroups);
  const groupSet = new Set(Object.keys(parallelGroups));

  const agents: CrewGraphAgent[] = [];
  const edges: CrewGraphEdge[] = [];
  const terminations: CrewGraphTermination[] = [];
  for (const agent of config.agents) {
    const behavior = agentBehaviors[agent.id];
    agents.push({
      id: agent.id,
      ...(agent.name === undefined ? {} : { name: agent.name }),
      entry: agent.id === config.entryPoint,
      waitForSignal: behavior?.waitForSignal ?? false,
      isTerminal: behavior?.isTerminal ?? false,
    });
    for (const s of signals[agent.id] ?? []) {
      const description = s.description === undefined ? {} : { description: s.description };
      if (s.target === '') {
        terminations.push({ kind: 'signal', agent: agent.id, signal: s.signal, ...description });
      } else {
        const toKind = groupSet.has(s.target) ? 'parallel_group' : 'agent';
        edges.push({ kind: 'signal', from: agent.id, to: s.target, toKind, signal: s.signal, ...description });
      }
    }
    const seen = new Set<string>([agent.id]);
    agent.handoffTargets.forEach((to, order) => {
      if (seen.has(to)) return;
      seen.add(to);
      edges.push({ kind: 'fallback', from: agent.id, to, order });
    });
    if (behavior?.isTerminal === true) terminations.push({ kind: 'terminal_agent', agent: agent.id });
  }

  const groups: CrewGraphGroup[] = [];
  for (const [id, group] of groupEntries) {
    groups.push({
      id,
      agents: [...group.agents],
      waitForAll: group.waitForAll,
      timeoutSeconds: group.timeoutSeconds,
      ...(group.nextAgent === undefined ? {} : { nextAgent: group.nextAgent }),
    });
    for (const to of group.agents) edges.push({ kind: 'fan_out', from: id, to });
    if (group.nextAgent !== undefined) edges.push({ kind: 'next_agent', from: id, to: group.nextAgent });
  }

  return { version: 1, entryPoint: config.entryPoint, agents, parallelGroups: groups, edges, terminations };
}
