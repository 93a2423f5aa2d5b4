import type { CrewConfig, CrewConfigInput, HandoffMode, ResumeAt } from './crew-config.js';
import { resolveCrewConfig } from './resolve-crew-config.js';
import { offersTransferTools, transferToolName } from './transfer-tools.js';

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
      /** A routing signal. */
      readonly kind: 'signal';
      /** The agent whose reply carries the marker. */
      readonly from: string;
      /** The agent or parallel group the marker hands off to. */
      readonly to: string;
      /** Whether `to` is an agent or a parallel group. */
      readonly toKind: 'agent' | 'parallel_group';
      /** The marker, e.g. `[ASK_STUDENT]`. */
      readonly signal: string;
      /** The transfer tool the signal is offered as, e.g. `transfer_to_student`; only with `handoffMode` `tool` or `both`. */
      readonly tool?: string;
      /** The signal's `description`, when crew.yaml gives one. */
      readonly description?: string;
    }
  | {
      /** A parallel group runs one of its members. */
      readonly kind: 'fan_out';
      /** The parallel group. */
      readonly from: string;
      /** The member agent. */
      readonly to: string;
    }
  | {
      /** The agent that continues after a parallel group. */
      readonly kind: 'next_agent';
      /** The parallel group. */
      readonly from: string;
      /** Its `next_agent`. */
      readonly to: string;
    }
  | {
      /** A fallback: tried when no signal routes a reply. */
      readonly kind: 'fallback';
      /** The agent whose unrouted reply falls back. */
      readonly from: string;
      /** The agent tried. */
      readonly to: string;
      /** Its 0-based position in `from`'s `handoff_targets`. */
      readonly order: number;
    };

/**
 * A way a run ends: a termination signal of `agent` (a signal whose target is `""`), or a
 * terminal agent (`is_terminal`) whose reply no signal routes.
 */
export type CrewGraphTermination =
  | {
      /** A termination signal. */
      readonly kind: 'signal';
      /** The agent whose reply carries it. */
      readonly agent: string;
      /** The marker, e.g. `[DONE]`. */
      readonly signal: string;
      /** The transfer tool the signal is offered as, e.g. `finish`; only with `handoffMode` `tool` or `both`. */
      readonly tool?: string;
      /** The signal's `description`, when crew.yaml gives one. */
      readonly description?: string;
    }
  | {
      /** A terminal agent (`is_terminal`). */
      readonly kind: 'terminal_agent';
      /** The agent. */
      readonly agent: string;
    };

/**
 * The routing structure of a crew, as `signalyard graph --format json` prints it: how it hands off
 * and where a new run starts, agents, parallel groups, edges and terminations, in a deterministic
 * order.
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
  /** How models hand off (`settings.handoff_mode`): by marker, by transfer tool (each signal edge names its `tool`), or both. */
  readonly handoffMode: HandoffMode;
  /** Where a new run starts (`settings.resume_at`): the entry point, or the agent whose reply ended the previous run. */
  readonly resumeAt: ResumeAt;
  /** Every agent, in crew order. */
  readonly agents: readonly CrewGraphAgent[];
  /** Every parallel group, in declaration order. */
  readonly parallelGroups: readonly CrewGraphGroup[];
  /** Handoffs, fan-outs, `next_agent`s and fallbacks, in the order described above. */
  readonly edges: readonly CrewGraphEdge[];
  /** The ways a run ends, agent by agent. */
  readonly terminations: readonly CrewGraphTermination[];
}

/**
 * Builds the {@link CrewGraph} of a crew: who hands off to whom, through which marker, which
 * parallel groups fan out to whom and who continues after them, and how runs end.
 *
 * Accepts a `CrewConfig` from `parseCrewConfig` / `loadCrewConfig` / `resolveCrewConfig` (used as
 * it is) or a crew written in code (validated with the crew.yaml rules first). Pure and
 * deterministic: the same crew always gives the same graph (see {@link CrewGraph} for the order).
 * `crewGraphMermaid` draws it.
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
  const { handoffMode, resumeAt } = config.settings;
  const tools = offersTransferTools(handoffMode);

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
      const tool = tools ? { tool: transferToolName(s) } : {};
      if (s.target === '') {
        terminations.push({ kind: 'signal', agent: agent.id, signal: s.signal, ...tool, ...description });
      } else {
        const toKind = groupSet.has(s.target) ? 'parallel_group' : 'agent';
        edges.push({ kind: 'signal', from: agent.id, to: s.target, toKind, signal: s.signal, ...tool, ...description });
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

  return {
    version: 1,
    entryPoint: config.entryPoint,
    handoffMode,
    resumeAt,
    agents,
    parallelGroups: groups,
    edges,
    terminations,
  };
}
