import {
  ConfigError,
  describeValue,
  type ChatMessage,
  type ChatModel,
  type ConfigProblem,
  type McpToolSource,
  type Tool,
  type ToolSpec,
} from '@signalyard/core';
import { MAX_TIMEOUT_MS } from '@signalyard/core/internal';
import type { CrewConfig, CrewSettings } from './crew-config.js';
import { SignalMatcher } from './signal-matcher.js';
import { TRANSFER_PARAMETERS, offersTransferTools, transferDescription, transferToolName } from './transfer-tools.js';

/** A routing signal (non-empty target) with its target resolved. @internal */
export interface CompiledRoute {
  readonly signal: string;
  readonly target: string;
  /** Set when the target is an agent. */
  readonly agent: CompiledAgent | undefined;
  /** Set when the target is a parallel group. */
  readonly group: CompiledGroup | undefined;
}

/**
 * A transfer tool of an agent (`handoff_mode: tool | both`): the routing signal it stands for,
 * what a call to it leads to, and the `tool` message that answers the call that wins.
 * @internal
 */
export interface CompiledTransfer {
  /** The tool's name, e.g. `transfer_to_billing` or `finish`. */
  readonly name: string;
  /** The routing signal the tool stands for (the `handoff` / `terminate` event's `signal`). */
  readonly signal: string;
  /** The route (a non-empty target); `undefined` for a termination signal. */
  readonly route: CompiledRoute | undefined;
  /** The answer to the call that wins: `transferred to <target>`, or `finished`. */
  readonly answer: string;
}

/** An agent with everything its turns need precomputed. @internal */
export interface CompiledAgent {
  readonly id: string;
  readonly model: ChatModel;
  /** The `system` message sent first on each call, when the agent has a system prompt. */
  readonly system: ChatMessage | undefined;
  readonly tools: ReadonlyMap<string, Tool>;
  /** What a parallel member's requests carry as `tools` (its own tools); undefined when the agent has none. */
  readonly toolSpecs: readonly ToolSpec[] | undefined;
  /**
   * What the main loop's requests carry as `tools`: its own tools, then its transfer tools
   * (`handoff_mode: tool | both`); undefined when there are none.
   */
  readonly requestTools: readonly ToolSpec[] | undefined;
  /** The transfer tools by name (`handoff_mode: tool | both`); undefined when the crew offers none or the agent has no routing signal. */
  readonly transfers: ReadonlyMap<string, CompiledTransfer> | undefined;
  /** Whether markers in a reply's text decide (`handoff_mode: marker | both`). */
  readonly matchesMarkers: boolean;
  /** Termination signals (target `""`), in config order, and their matcher. */
  readonly terminations: readonly string[];
  readonly terminationMatcher: SignalMatcher | undefined;
  /** Routing signals (non-empty target), in config order, and their matcher. */
  readonly routes: readonly CompiledRoute[];
  readonly routeMatcher: SignalMatcher | undefined;
  readonly waitForSignal: boolean;
  readonly isTerminal: boolean;
  /** Step 8: the first handoff target that exists and is not this agent, else the first other agent. */
  fallback: CompiledAgent | undefined;
}

/** A parallel group, resolved. @internal */
export interface CompiledGroup {
  readonly name: string;
  readonly members: readonly CompiledAgent[];
  readonly memberIds: readonly string[];
  readonly timeoutMs: number;
  readonly timeoutSeconds: number;
  readonly waitForAll: boolean;
  readonly next: CompiledAgent | undefined;
}

/** A crew ready to run: immutable, shared by every run of one executor. @internal */
export interface CompiledCrew {
  readonly config: CrewConfig;
  readonly settings: CrewSettings;
  readonly agents: ReadonlyMap<string, CompiledAgent>;
  readonly agentIds: readonly string[];
  readonly entry: CompiledAgent;
  /**
   * Every signal configured anywhere in the crew (a model may echo another agent's marker), for
   * hiding markers from streamed text; `undefined` when the crew has none.
   */
  readonly markers: SignalMatcher | undefined;
  /** Where agents with `mcp:` views get their tools (the executor's `mcp` option). */
  readonly mcp: McpToolSource | undefined;
}

const isObject = (v: unknown): v is Readonly<Record<string, unknown>> => typeof v === 'object' && v !== null;
const isModel = (v: unknown): v is ChatModel => isObject(v) && typeof v.generate === 'function';

/**
 * Resolves a validated crew against the executor's models and tools.
 *
 * @throws ConfigError listing every problem with the models and tools: a model that is not a
 * `ChatModel`, a model record missing an agent or naming a non-agent, a malformed or duplicate
 * tool, an agent naming a tool that was not given.
 * @internal
 */
export function compileCrew(config: CrewConfig, model: unknown, tools: unknown, mcp?: unknown): CompiledCrew {
  const problems: ConfigProblem[] = [];
  const ids = config.agents.map((a) => a.id);
  const modelOf = resolveModels(ids, model, problems);
  const toolByName = resolveTools(config, tools, problems);
  checkMcpSource(config, mcp, problems);
  if (problems.length > 0) throw new ConfigError({ problems });

  // Agents, then groups (which refer to agents), then routes (which refer to both).
  const routesOf = new Map<string, CompiledRoute[]>();
  const agents = new Map<string, CompiledAgent>();
  for (const a of config.agents) {
    const routes: CompiledRoute[] = [];
    routesOf.set(a.id, routes);
    agents.set(a.id, compileAgent(config, a, modelOf.get(a.id) as ChatModel, toolByName, routes));
  }
  const groups = compileGroups(config, agents);
  linkRoutes(config, agents, groups, routesOf);
  if (offersTransferTools(config.settings.handoffMode)) linkTransfers(config, agents, groups);
  for (const agent of agents.values()) Object.freeze(agent);
  return Object.freeze({
    config,
    settings: config.settings,
    agents,
    agentIds: Object.freeze(ids),
    entry: agents.get(config.entryPoint) as CompiledAgent,
    markers: crewMarkers(config),
    mcp: mcp as McpToolSource | undefined,
  });
}

/** The executor's `mcp` source: an `McpToolSource` when given, and given when an agent has `mcp:` views. */
function checkMcpSource(config: CrewConfig, mcp: unknown, problems: ConfigProblem[]): void {
  if (
    mcp !== undefined &&
    (typeof mcp !== 'object' || mcp === null || typeof (mcp as { tools?: unknown }).tools !== 'function')
  ) {
    problems.push({
      path: 'mcp',
      message: `expected an McpToolSource { tools(views) } (what connectMcp returns), got ${describeValue(mcp)}`,
    });
    return;
  }
  if (mcp !== undefined) return;
  config.agents.forEach((a, i) => {
    if (a.mcp === undefined) return;
    problems.push({
      path: `crew.agents[${i}].mcp`,
      message: `agent ${JSON.stringify(a.id)} has MCP views (servers ${a.mcp.map((v) => JSON.stringify(v.server)).join(', ')}), but the executor was given no mcp source: pass { mcp: await connectMcp(…) }`,
    });
  });
}

/** One matcher over every distinct signal of the crew, or `undefined` when it has none. */
function crewMarkers(config: CrewConfig): SignalMatcher | undefined {
  const signals = new Set<string>();
  for (const list of Object.values(config.routing.signals)) for (const s of list) signals.add(s.signal);
  return signals.size === 0 ? undefined : new SignalMatcher([...signals]);
}

/** The model of each agent: one for all, or one per agent (problems pushed to `problems`). */
function resolveModels(ids: readonly string[], model: unknown, problems: ConfigProblem[]): Map<string, ChatModel> {
  const idList = ids.map((id) => JSON.stringify(id)).join(', ');
  const modelOf = new Map<string, ChatModel>();
  if (isModel(model)) {
    for (const id of ids) modelOf.set(id, model);
  } else if (isObject(model) && !Array.isArray(model)) {
    for (const key of Object.keys(model)) {
      if (!ids.includes(key))
        problems.push({ path: `model.${key}`, message: `${JSON.stringify(key)} is not an agent (agents: ${idList})` });
    }
    for (const id of ids) {
      const m = Object.prototype.hasOwnProperty.call(model, id) ? model[id] : undefined;
      if (m === undefined)
        problems.push({
          path: `model.${id}`,
          message: `no model for agent ${JSON.stringify(id)}: give one ChatModel for every agent, or one for all`,
        });
      else if (!isModel(m))
        problems.push({
          path: `model.${id}`,
          message: `expected a ChatModel { generate(request) }, got ${describeValue(m)}`,
        });
      else modelOf.set(id, m);
    }
  } else {
    problems.push({
      path: 'model',
      message: `expected a ChatModel { generate(request) } or a record of them by agent id, got ${describeValue(model)}`,
    });
  }
  return modelOf;
}

/** The executor's tools by name, checked against the agents' tool lists (problems pushed to `problems`). */
function resolveTools(config: CrewConfig, tools: unknown, problems: ConfigProblem[]): Map<string, Tool> {
  const toolByName = new Map<string, Tool>();
  if (tools !== undefined && !Array.isArray(tools)) {
    problems.push({ path: 'tools', message: `expected a list of tools, got ${describeValue(tools)}` });
  } else if (tools !== undefined) {
    (tools as readonly unknown[]).forEach((tool, i) => {
      if (!isObject(tool)) {
        problems.push({
          path: `tools[${i}]`,
          message: `expected a Tool { name, parameters, execute }, got ${describeValue(tool)}`,
        });
        return;
      }
      const name = tool.name;
      let ok = true;
      if (typeof name !== 'string' || name === '') {
        problems.push({ path: `tools[${i}].name`, message: `expected a non-empty string, got ${describeValue(name)}` });
        ok = false;
      }
      if (typeof tool.execute !== 'function') {
        problems.push({
          path: `tools[${i}].execute`,
          message: `expected a function, got ${describeValue(tool.execute)}`,
        });
        ok = false;
      }
      if (!isObject(tool.parameters)) {
        problems.push({
          path: `tools[${i}].parameters`,
          message: `expected a JSON Schema object, got ${describeValue(tool.parameters)}`,
        });
        ok = false;
      }
      if (!ok) return;
      const n = name as string;
      if (toolByName.has(n))
        problems.push({ path: `tools[${i}].name`, message: `duplicate tool name ${JSON.stringify(n)}` });
      else toolByName.set(n, tool as unknown as Tool);
    });
  }
  config.agents.forEach((agent, i) => {
    agent.tools.forEach((name, j) => {
      if (!toolByName.has(name)) {
        const known = [...toolByName.keys()].map((t) => JSON.stringify(t)).join(', ');
        problems.push({
          path: `crew.agents[${i}].tools[${j}]`,
          message: `agent ${JSON.stringify(agent.id)} names tool ${JSON.stringify(name)}, which was not given to the executor (tools: ${known === '' ? 'none' : known})`,
        });
      }
    });
  });
  return toolByName;
}

/** One agent, its routes still empty (filled by `linkRoutes` once every agent and group exists). */
function compileAgent(
  config: CrewConfig,
  a: CrewConfig['agents'][number],
  model: ChatModel,
  toolByName: ReadonlyMap<string, Tool>,
  routes: CompiledRoute[],
): CompiledAgent {
  const agentTools = new Map<string, Tool>();
  const specs: ToolSpec[] = [];
  for (const name of a.tools) {
    const tool = toolByName.get(name) as Tool;
    if (agentTools.has(name)) continue;
    agentTools.set(name, tool);
    specs.push(
      Object.freeze({
        name: tool.name,
        ...(tool.description === undefined ? {} : { description: tool.description }),
        parameters: tool.parameters,
      }),
    );
  }
  const signals = config.routing.signals[a.id] ?? [];
  const terminations = signals.filter((s) => s.target === '').map((s) => s.signal);
  const behavior = config.routing.agentBehaviors[a.id];
  const prompt = a.systemPrompt;
  return {
    id: a.id,
    model,
    system: prompt === undefined || prompt === '' ? undefined : Object.freeze({ role: 'system', content: prompt }),
    tools: agentTools,
    toolSpecs: specs.length === 0 ? undefined : Object.freeze(specs),
    requestTools: specs.length === 0 ? undefined : Object.freeze(specs),
    transfers: undefined,
    matchesMarkers: config.settings.handoffMode !== 'tool',
    terminations: Object.freeze(terminations),
    terminationMatcher: terminations.length === 0 ? undefined : new SignalMatcher(terminations),
    routes,
    routeMatcher: undefined,
    waitForSignal: behavior?.waitForSignal ?? false,
    isTerminal: behavior?.isTerminal ?? false,
    fallback: undefined,
  };
}

/** The parallel groups, their members resolved. */
function compileGroups(config: CrewConfig, agents: ReadonlyMap<string, CompiledAgent>): Map<string, CompiledGroup> {
  const groups = new Map<string, CompiledGroup>();
  for (const [name, g] of Object.entries(config.routing.parallelGroups)) {
    const members = g.agents.map((id) => agents.get(id)).filter((m): m is CompiledAgent => m !== undefined);
    groups.set(name, {
      name,
      members: Object.freeze(members),
      memberIds: Object.freeze(members.map((m) => m.id)),
      timeoutSeconds: g.timeoutSeconds,
      timeoutMs: Math.min(Math.max(Math.ceil(g.timeoutSeconds * 1000), 1), MAX_TIMEOUT_MS),
      waitForAll: g.waitForAll,
      next: g.nextAgent === undefined ? undefined : agents.get(g.nextAgent),
    });
  }
  return groups;
}

/** Fills each agent's routes and matcher, and picks its fallback (step 8). */
function linkRoutes(
  config: CrewConfig,
  agents: ReadonlyMap<string, CompiledAgent>,
  groups: ReadonlyMap<string, CompiledGroup>,
  routesOf: ReadonlyMap<string, CompiledRoute[]>,
): void {
  const ids = config.agents.map((a) => a.id);
  for (const a of config.agents) {
    const compiled = agents.get(a.id) as Mutable<CompiledAgent>;
    const routes = routesOf.get(a.id) as CompiledRoute[];
    for (const s of config.routing.signals[a.id] ?? []) {
      if (s.target === '') continue;
      routes.push(
        Object.freeze({ signal: s.signal, target: s.target, agent: agents.get(s.target), group: groups.get(s.target) }),
      );
    }
    Object.freeze(routes);
    if (routes.length > 0) compiled.routeMatcher = new SignalMatcher(routes.map((r) => r.signal));
    // Fallback (step 8): the first handoff target that exists and is not this agent, else the first other agent.
    let fallback: CompiledAgent | undefined;
    for (const t of a.handoffTargets) {
      const target = agents.get(t);
      if (target !== undefined && t !== a.id) {
        fallback = target;
        break;
      }
    }
    if (fallback === undefined) {
      const other = ids.find((id) => id !== a.id);
      fallback = other === undefined ? undefined : agents.get(other);
    }
    compiled.fallback = fallback;
  }
}

/**
 * Gives every agent its transfer tools (`handoff_mode: tool | both`): one per routing signal, in
 * config order, named and described from the signal and its target, offered after its own
 * tools. The names were checked by the config's validation (valid, unique per agent, unlike the
 * agent's own tools).
 */
function linkTransfers(
  config: CrewConfig,
  agents: ReadonlyMap<string, CompiledAgent>,
  groups: ReadonlyMap<string, CompiledGroup>,
): void {
  for (const a of config.agents) {
    const signals = config.routing.signals[a.id] ?? [];
    if (signals.length === 0) continue;
    const compiled = agents.get(a.id) as Mutable<CompiledAgent>;
    const transfers = new Map<string, CompiledTransfer>();
    const specs: ToolSpec[] = compiled.toolSpecs === undefined ? [] : compiled.toolSpecs.slice();
    for (const s of signals) {
      const name = transferToolName(s);
      const route = s.target === '' ? undefined : compiled.routes.find((r) => r.signal === s.signal);
      transfers.set(
        name,
        Object.freeze({
          name,
          signal: s.signal,
          route,
          answer: s.target === '' ? 'finished' : `transferred to ${s.target}`,
        }),
      );
      const target = config.agents.find((t) => t.id === s.target);
      const group = groups.get(s.target);
      const to =
        s.target === ''
          ? ({ kind: 'finish' } as const)
          : group !== undefined
            ? ({ kind: 'group', id: group.name, agents: group.memberIds } as const)
            : {
                kind: 'agent' as const,
                id: s.target,
                ...(target?.name === undefined ? {} : { name: target.name }),
                ...(target?.description === undefined ? {} : { description: target.description }),
              };
      specs.push(
        Object.freeze({ name, description: transferDescription(to, s.description), parameters: TRANSFER_PARAMETERS }),
      );
    }
    compiled.transfers = transfers;
    compiled.requestTools = Object.freeze(specs);
  }
}

/** `T` with its readonly fields writable (for filling in a compiled agent before it is frozen). */
type Mutable<T> = { -readonly [K in keyof T]: T[K] };
