import type { ApprovalPolicy, McpToolView } from '@signalyard/core';

/** One agent of a crew (crew.yaml `agents[]`). */
export interface CrewAgentConfig {
  /** Unique within the crew; the name signals, behaviours and groups refer to. */
  readonly id: string;
  /** Display name. */
  readonly name?: string;
  /**
   * What this agent does, for the models that may hand off to it: with `handoffMode` `tool` or
   * `both`, the description of every transfer tool that targets it includes this text.
   */
  readonly description?: string;
  /** Sent as a `system` message before the history on each of this agent's model calls. */
  readonly systemPrompt?: string;
  /** Fallback order when no signal routes a reply (crew.yaml `handoff_targets`). Default `[]`. */
  readonly handoffTargets: readonly string[];
  /** Names of the tools this agent may call, resolved against the executor's tools by `Tool.name`. Default `[]`. */
  readonly tools: readonly string[];
  /**
   * The agent's views of MCP servers' tools (crew.yaml `mcp: [{ server, allow?, deny?, prefix? }]`),
   * resolved at the start of each run through the executor's `mcp` source (`McpToolSource`, what
   * `connectMcp` from `@signalyard/mcp` returns). Absent when the agent has none.
   */
  readonly mcp?: readonly McpToolView[];
}

/**
 * How a model hands off (crew.yaml `settings.handoff_mode`):
 *
 * - `marker` (the default): the model writes a routing signal such as `[ROUTE_BILLING]` in its
 *   reply's text;
 * - `tool`: each routing signal of an agent is offered to its model as a tool —
 *   `transfer_to_<target>` for an agent or a parallel group, `finish` for a signal with target
 *   `""` (or the signal's own `tool` name) — and a call to one is the handoff; markers in the
 *   text decide nothing;
 * - `both`: the tools are offered and markers still match; in a reply that has both, the marker
 *   wins (a reply's text comes before its tool calls).
 *
 * @example
 * ```ts
 * const crew = resolveCrewConfig({ ...desk, settings: { handoffMode: 'tool' } });
 * ```
 */
export type HandoffMode = 'marker' | 'tool' | 'both';

/**
 * Where a new run (a new user message) starts (crew.yaml `settings.resume_at`):
 *
 * - `entry` (the default): at the crew's entry point, every time;
 * - `last_agent`: at the agent whose reply ended the previous run (`CrewState.lastAgentId`) —
 *   unless that agent is terminal (`is_terminal`) or the run ended at a `max_*` limit, then at
 *   the entry point. A paused agent (`pausedAgentId`) and a held approval batch still come first.
 *
 * @example
 * ```ts
 * const crew = resolveCrewConfig({ ...desk, settings: { resumeAt: 'last_agent' } });
 * ```
 */
export type ResumeAt = 'entry' | 'last_agent';

/** Limits of one run and how its text is streamed (crew.yaml `settings`); every limit is positive. */
export interface CrewSettings {
  /** A handoff that would bring the count to this is not made. Default 5. */
  readonly maxHandoffs: number;
  /** Model calls per run, tool rounds and parallel members included. Default 10. */
  readonly maxRounds: number;
  /** Consecutive tool rounds within one agent turn. Default 5. */
  readonly maxToolRounds: number;
  /** History sent to a model is trimmed to this many messages. Default 200. */
  readonly maxHistoryMessages: number;
  /** Deadline of a parallel group that sets no `timeoutSeconds`; fractions allowed. Default 60. */
  readonly parallelTimeoutSeconds: number;
  /**
   * Keep routing signals out of streamed text (crew.yaml `hide_signals`): the `text_delta`
   * events of `executeStream` and `CrewResponse.visibleContent` never show the text of a signal
   * configured anywhere in the crew. History and `agent_response` keep the raw text. Default `true`.
   */
  readonly hideSignals: boolean;
  /**
   * How models hand off (crew.yaml `handoff_mode`): `marker` (a routing signal in the reply's
   * text), `tool` (a call to a transfer tool generated from each routing signal), or `both`.
   * See {@link HandoffMode}. Default `marker`.
   */
  readonly handoffMode: HandoffMode;
  /**
   * Where a new run starts (crew.yaml `resume_at`): `entry` (the entry point) or `last_agent`
   * (the agent whose reply ended the previous run). See {@link ResumeAt}. Default `entry`.
   */
  readonly resumeAt: ResumeAt;
}

/** One routing signal of an agent (crew.yaml `routing.signals.<agent>[]`). */
export interface RoutingSignal {
  /** The marker, in the `isValidSignal` format, e.g. `"[ANSWER]"`. */
  readonly signal: string;
  /** An agent id, a parallel group name, or `""` to end the run (`terminated_by_signal`). */
  readonly target: string;
  /**
   * What the signal means, for people and prompts (crew.yaml `description`): with `handoffMode`
   * `tool` or `both`, part of its transfer tool's description; never used in matching. Absent
   * when the config gives none.
   */
  readonly description?: string;
  /**
   * The name of the transfer tool this signal is offered as with `handoffMode` `tool` or `both`
   * (crew.yaml `tool`), matching `^[A-Za-z0-9_-]{1,64}$`. Absent: `transfer_to_<target>`, or
   * `finish` for target `""`. Give one when two signals of an agent would get the same name
   * (two termination signals, two signals to one agent).
   */
  readonly tool?: string;
}

/** How an agent's turn ends when no signal decides (crew.yaml `routing.agent_behaviors.<agent>`). */
export interface AgentBehavior {
  /** End the run with `reason: 'paused'`; the next run with that state resumes at this agent. Default `false`. */
  readonly waitForSignal: boolean;
  /** End the run with `reason: 'terminal_agent'`. Default `false`. */
  readonly isTerminal: boolean;
}

/** Agents that run concurrently on a copy of the history (crew.yaml `routing.parallel_groups.<name>`). */
export interface ParallelGroupConfig {
  /** Members, in declaration order (results are aggregated in this order). Never empty. */
  readonly agents: readonly string[];
  /** Deadline in seconds; when crew.yaml leaves it out, `settings.parallel_timeout_seconds`. */
  readonly timeoutSeconds: number;
  /** Wait for every member (or the deadline); `false` completes at the first success. Default `true`. */
  readonly waitForAll: boolean;
  /** The agent that continues after the group; absent → fallback routing. */
  readonly nextAgent?: string;
}

/** Signals, behaviours and parallel groups (crew.yaml `routing`); each map defaults to `{}`. */
export interface CrewRouting {
  /** Agent id → its signals, in config order (termination signals first decide, then routing ones). */
  readonly signals: Readonly<Record<string, readonly RoutingSignal[]>>;
  /** Agent id → its behaviour. Agents not listed behave as `{ waitForSignal: false, isTerminal: false }`. */
  readonly agentBehaviors: Readonly<Record<string, AgentBehavior>>;
  /** Group name → group. */
  readonly parallelGroups: Readonly<Record<string, ParallelGroupConfig>>;
}

/**
 * A validated crew: the camelCase form of crew.yaml with the same nesting, every default filled
 * in (`settings` and all of `routing` are always present), deeply frozen.
 *
 * Produced by {@link parseCrewConfig}, {@link loadCrewConfig} and {@link resolveCrewConfig}.
 * Maps (`routing.signals`, …) are objects without a prototype, so an agent called
 * `constructor` is just another key. To build one in code, write a {@link CrewConfigInput}
 * (defaults optional) and pass it to {@link resolveCrewConfig}, or straight to the executor.
 */
export interface CrewConfig {
  /** The agent a fresh run starts with. */
  readonly entryPoint: string;
  /** In crew order (the fallback's last resort is the first other agent in this order). */
  readonly agents: readonly CrewAgentConfig[];
  /** The run's limits and streaming options (crew.yaml `settings`), every default filled in ({@link DEFAULT_CREW_SETTINGS}). */
  readonly settings: CrewSettings;
  /** Signals, behaviours and parallel groups (crew.yaml `routing`); each map is `{}` when the config has none. */
  readonly routing: CrewRouting;
  /**
   * Which tool calls run, wait for a person, or are refused (crew.yaml `approvals:`, with
   * snake_case condition keys such as `starts_with`): core's `ApprovalPolicy`, validated and
   * deep-frozen. Absent: every call runs unless its tool's `needsApproval` asks.
   */
  readonly approvals?: ApprovalPolicy;
}

/**
 * A crew written in code: {@link CrewConfig} with every defaulted field optional. Validated by
 * {@link resolveCrewConfig} with the same rules as crew.yaml (problem paths use these camelCase
 * keys). Every `CrewConfig` is also a valid `CrewConfigInput`.
 *
 * @example
 * ```ts
 * const crew: CrewConfigInput = {
 *   entryPoint: 'teacher',
 *   agents: [{ id: 'teacher', handoffTargets: ['student'] }, { id: 'student' }],
 *   routing: { signals: { student: [{ signal: '[DONE]', target: '' }] } },
 * };
 * ```
 */
export interface CrewConfigInput {
  /** The agent a fresh run starts with: the `id` of one of {@link CrewConfigInput.agents}. */
  readonly entryPoint: string;
  /** The crew's agents, at least one, with unique ids; their order is the fallback's last resort. */
  readonly agents: readonly CrewAgentInput[];
  /**
   * Limits and streaming options; each one left out takes its default from
   * {@link DEFAULT_CREW_SETTINGS} (e.g. `{ maxHandoffs: 3 }` keeps `maxRounds: 10`).
   */
  readonly settings?: Partial<CrewSettings>;
  /** Signals, behaviours and parallel groups; absent (or any map absent) means none. */
  readonly routing?: {
    /**
     * Agent id → its routing signals, in order, e.g.
     * `{ teacher: [{ signal: '[TO_STUDENT]', target: 'student' }] }`. Default `{}`.
     */
    readonly signals?: Readonly<Record<string, readonly RoutingSignal[]>>;
    /**
     * Agent id → how its turn ends when no signal decides, e.g. `{ student: { waitForSignal: true } }`;
     * omitted flags are `false`. Default `{}`.
     */
    readonly agentBehaviors?: Readonly<Record<string, Partial<AgentBehavior>>>;
    /** Group name → agents that run concurrently, e.g. `{ reviewers: { agents: ['a', 'b'], nextAgent: 'editor' } }`. Default `{}`. */
    readonly parallelGroups?: Readonly<Record<string, ParallelGroupInput>>;
  };
  /** The approval policy (camelCase keys: `startsWith`, …), validated with core's `approvalPolicySchema`. */
  readonly approvals?: ApprovalPolicy;
}

/** An agent of a {@link CrewConfigInput}: `handoffTargets` and `tools` default to `[]`. */
export interface CrewAgentInput {
  /** Unique within the crew; the name signals, behaviours and groups refer to, e.g. `'teacher'`. */
  readonly id: string;
  /** A display name for people, e.g. `'Teacher'`; routing never uses it. Absent when the config gives none. */
  readonly name?: string;
  /** What the agent does, for the transfer tools that target it (`handoffMode` `tool` / `both`). */
  readonly description?: string;
  /** Sent as a `system` message before the history on each of this agent's model calls; absent → none. */
  readonly systemPrompt?: string;
  /** Agent ids to hand off to, in order, when no signal routes a reply. Default `[]`. */
  readonly handoffTargets?: readonly string[];
  /** Names of the tools this agent may call (matched against the executor's tools by `Tool.name`). Default `[]`. */
  readonly tools?: readonly string[];
  /** Views of MCP servers' tools this agent gets, e.g. `[{ server: 'crm', allow: ['get_*'], prefix: 'crm_' }]` (needs the executor's `mcp`). */
  readonly mcp?: readonly McpToolView[];
}

/** A parallel group of a {@link CrewConfigInput}: `timeoutSeconds` and `waitForAll` are optional. */
export interface ParallelGroupInput {
  /** Member agent ids, at least one, in the order their results are aggregated. */
  readonly agents: readonly string[];
  /** Deadline in seconds (fractions allowed, positive); absent → `settings.parallelTimeoutSeconds` (60 by default). */
  readonly timeoutSeconds?: number;
  /** Wait for every member (or the deadline); `false` completes at the first success. Default `true`. */
  readonly waitForAll?: boolean;
  /** The agent that continues after the group; absent → fallback routing from the agent that started it. */
  readonly nextAgent?: string;
}

/** The defaults for `settings` (frozen). */
export const DEFAULT_CREW_SETTINGS: CrewSettings = Object.freeze({
  maxHandoffs: 5,
  maxRounds: 10,
  maxToolRounds: 5,
  maxHistoryMessages: 200,
  parallelTimeoutSeconds: 60,
  hideSignals: true,
  handoffMode: 'marker',
  resumeAt: 'entry',
});
