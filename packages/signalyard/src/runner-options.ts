import {
  ConfigError,
  describeValue,
  type CheckpointStore,
  type ConfigProblem,
  type Plugin,
  type SessionLock,
  type SignalRoute,
} from '@signalyard/core';
import { ComposedRouter, RouteConfigError } from '@signalyard/router';
import { RouteResolver, normalizeAgentId, type RoutingConfigInput } from '@signalyard/sessions';
import type { AgentDefinition, EngineFn, WhenBusy } from './engine.js';

/** Options of {@link createRunner}. */
export interface RunnerOptions {
  /** The agents this runner serves; at least one. */
  agents: readonly AgentDefinition[];
  /** Route bindings and session scopes (`@signalyard/sessions`). Without it — or without its `defaultAgentId` — the first agent is the default agent. */
  routing?: RoutingConfigInput;
  /** Plugins, in order: their routes form the plugin tier; `setup` runs in this order, `dispose` in reverse. */
  plugins?: readonly Plugin[];
  /** Where sessions are checkpointed. Default: a `MemoryCheckpointStore` the runner owns (and closes). */
  store?: CheckpointStore;
  /** Cross-process exclusion per session key. Default: in-process only (the per-session queue). */
  lock?: SessionLock;
  /** Sessions with a turn in flight at once. Default 64. */
  maxConcurrentSessions?: number;
  /** History messages kept per session (oldest dropped; tool calls kept with their results). Default 1000. */
  maxHistoryMessages?: number;
  /** How long `close()` waits for in-flight turns before aborting them. Default 10000. */
  closeTimeoutMs?: number;
  /** Passed to plugins as `PluginContext.logger`. */
  logger?: { debug(...args: unknown[]): void; warn(...args: unknown[]): void };
}

/** An agent, validated and ready to serve. @internal */
export interface AgentRuntime {
  readonly id: string;
  readonly definition: AgentDefinition;
  readonly routes: readonly SignalRoute[];
  readonly engine: EngineFn | undefined;
  /** What a user message arriving while the session is busy does. */
  readonly whenBusy: WhenBusy;
}

/** Validated options with defaults filled in. @internal */
export interface ResolvedRunnerOptions {
  readonly agents: ReadonlyMap<string, AgentRuntime>;
  readonly resolver: RouteResolver;
  readonly plugins: readonly Plugin[];
  readonly pluginRoutes: readonly SignalRoute[];
  readonly store: CheckpointStore | undefined;
  readonly lock: SessionLock | undefined;
  readonly maxConcurrentSessions: number;
  readonly maxHistoryMessages: number;
  readonly closeTimeoutMs: number;
  readonly logger: RunnerOptions['logger'];
}

const isPositiveInteger = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v > 0;

type Report = (path: string, message: string) => void;

/**
 * Validates runner options, reporting every problem at once.
 * @throws ConfigError `CONFIG_INVALID`.
 */
export function resolveRunnerOptions(options: RunnerOptions): ResolvedRunnerOptions {
  if (typeof options !== 'object' || (options as unknown) === null) {
    throw new ConfigError({
      problems: [{ path: '', message: `expected runner options { agents, ... }, got ${describeValue(options)}` }],
    });
  }
  const problems: ConfigProblem[] = [];
  const report: Report = (path, message) => {
    problems.push({ path, message });
  };
  const agents = resolveAgents(options.agents, report);
  const { plugins, pluginRoutes } = resolvePlugins(options.plugins ?? [], report);
  const resolver = resolveRouting(options, agents, problems);
  const limits = resolveServices(options, report);
  if (problems.length > 0 || resolver === undefined) throw new ConfigError({ problems });
  return { agents, resolver, plugins, pluginRoutes: Object.freeze(pluginRoutes), ...limits };
}

function resolveAgents(agentList: unknown, report: Report): Map<string, AgentRuntime> {
  const agents = new Map<string, AgentRuntime>();
  if (!Array.isArray(agentList) || agentList.length === 0) {
    report('agents', `expected a non-empty list of agent definitions, got ${describeValue(agentList)}`);
    return agents;
  }
  agentList.forEach((raw: unknown, i) => {
    const agent = resolveAgent(raw, `agents[${i}]`, agents, report);
    if (agent !== undefined) agents.set(agent.id, agent);
  });
  return agents;
}

function resolveAgent(
  raw: unknown,
  path: string,
  seen: ReadonlyMap<string, AgentRuntime>,
  report: Report,
): AgentRuntime | undefined {
  if (typeof raw !== 'object' || raw === null) {
    report(path, `expected an agent definition { id, engine, strategy?, routes? }, got ${describeValue(raw)}`);
    return undefined;
  }
  const a = raw as Partial<AgentDefinition>;
  let ok = true;
  if (typeof a.id !== 'string' || a.id === '' || normalizeAgentId(a.id) !== a.id) {
    const hint = typeof a.id === 'string' && a.id !== '' ? `: use ${JSON.stringify(normalizeAgentId(a.id))}` : '';
    report(`${path}.id`, `agent id ${describeValue(a.id)} is not canonical${hint}`);
    ok = false;
  } else if (seen.has(a.id)) {
    report(`${path}.id`, `duplicate agent id ${JSON.stringify(a.id)}`);
    ok = false;
  }
  if (a.strategy !== undefined && typeof a.strategy !== 'function') {
    report(`${path}.strategy`, `expected a strategy factory () => ExecutionStrategy, got ${describeValue(a.strategy)}`);
    ok = false;
  }
  const engine = engineFn(a.engine);
  if (engine === undefined) {
    report(`${path}.engine`, `expected an Engine { turn } or an engine function, got ${describeValue(a.engine)}`);
    ok = false;
  }
  const whenBusy = whenBusyOf(a.whenBusy, `${path}.whenBusy`, report);
  if (whenBusy === undefined) ok = false;
  const routes: unknown = a.routes ?? [];
  if (!Array.isArray(routes)) {
    report(`${path}.routes`, `expected a list of signal routes, got ${describeValue(routes)}`);
    ok = false;
  } else {
    for (const p of routeProblems({ agent: routes as SignalRoute[] })) report(`${path}.routes[${p.index}]`, p.message);
  }
  if (!ok || typeof a.id !== 'string' || whenBusy === undefined) return undefined;
  const frozenRoutes = Object.freeze([...(routes as SignalRoute[])]);
  return { id: a.id, definition: a as AgentDefinition, routes: frozenRoutes, engine, whenBusy };
}

const WHEN_BUSY: readonly WhenBusy[] = ['queue', 'collect', 'interrupt'];

/** `whenBusy`, defaulting to `'queue'`; `undefined` (reported) when it is none of the policies. */
function whenBusyOf(value: unknown, path: string, report: Report): WhenBusy | undefined {
  if (value === undefined) return 'queue';
  if (WHEN_BUSY.includes(value as WhenBusy)) return value as WhenBusy;
  report(path, `expected one of "queue", "collect", "interrupt", got ${describeValue(value)}`);
  return undefined;
}

function engineFn(engine: unknown): EngineFn | undefined {
  if (typeof engine === 'function') return engine as EngineFn;
  if (typeof engine === 'object' && engine !== null && typeof (engine as { turn?: unknown }).turn === 'function') {
    const object = engine as { turn: EngineFn };
    return (ctx) => object.turn(ctx);
  }
  return undefined;
}

/** Plugins: unique names; their routes read once, here. */
function resolvePlugins(pluginList: unknown, report: Report): { plugins: Plugin[]; pluginRoutes: SignalRoute[] } {
  const plugins: Plugin[] = [];
  const pluginRoutes: SignalRoute[] = [];
  if (!Array.isArray(pluginList)) {
    report('plugins', `expected a list of plugins, got ${describeValue(pluginList)}`);
    return { plugins, pluginRoutes };
  }
  const names = new Set<string>();
  pluginList.forEach((raw: unknown, i) => {
    const path = `plugins[${i}]`;
    if (
      typeof raw !== 'object' ||
      raw === null ||
      typeof (raw as { name?: unknown }).name !== 'string' ||
      (raw as Plugin).name === ''
    ) {
      report(path, `expected a plugin with a non-empty name, got ${describeValue(raw)}`);
      return;
    }
    const p = raw as Plugin;
    if (names.has(p.name)) report(`${path}.name`, `duplicate plugin name ${JSON.stringify(p.name)}`);
    names.add(p.name);
    for (const hook of ['signalRoutes', 'setup', 'dispose'] as const) {
      const fn: unknown = (p as unknown as Record<string, unknown>)[hook];
      if (fn !== undefined && typeof fn !== 'function')
        report(`${path}.${hook}`, `expected a function, got ${describeValue(fn)}`);
    }
    pluginRoutes.push(...pluginRoutesOf(p, path, report));
    plugins.push(p);
  });
  return { plugins, pluginRoutes };
}

function pluginRoutesOf(p: Plugin, path: string, report: Report): readonly SignalRoute[] {
  let routes: unknown = [];
  if (typeof p.signalRoutes === 'function') {
    try {
      routes = p.signalRoutes();
    } catch (error) {
      report(`${path}.signalRoutes`, `threw: ${error instanceof Error ? error.message : describeValue(error)}`);
    }
  }
  if (!Array.isArray(routes)) {
    report(`${path}.signalRoutes`, `returned ${describeValue(routes)}, expected a list of signal routes`);
    return [];
  }
  for (const rp of routeProblems({ plugin: routes as SignalRoute[] }))
    report(`${path}.signalRoutes()[${rp.index}]`, rp.message);
  return routes as SignalRoute[];
}

/** Routing: validated by the sessions package; default agent = the first agent unless given. */
function resolveRouting(
  options: RunnerOptions,
  agents: ReadonlyMap<string, AgentRuntime>,
  problems: ConfigProblem[],
): RouteResolver | undefined {
  const agentList: unknown = options.agents;
  const firstAgent = Array.isArray(agentList) ? (agentList[0] as Partial<AgentDefinition> | undefined)?.id : undefined;
  const routingInput: unknown = options.routing ?? {};
  if (typeof routingInput !== 'object' || routingInput === null) {
    problems.push({ path: 'routing', message: `expected a routing config object, got ${describeValue(routingInput)}` });
    return undefined;
  }
  const withDefault = { ...(routingInput as RoutingConfigInput) };
  if (withDefault.defaultAgentId === undefined && typeof firstAgent === 'string' && agents.has(firstAgent))
    withDefault.defaultAgentId = firstAgent;
  let resolver: RouteResolver;
  try {
    resolver = new RouteResolver(withDefault);
  } catch (error) {
    if (!ConfigError.isInstance(error)) throw error;
    for (const p of error.problems) problems.push({ ...p, path: p.path === '' ? 'routing' : `routing.${p.path}` });
    return undefined;
  }
  const known = JSON.stringify([...agents.keys()]);
  const config = resolver.config;
  if (agents.size > 0 && !agents.has(config.defaultAgentId)) {
    problems.push({
      path: 'routing.defaultAgentId',
      message: `default agent ${JSON.stringify(config.defaultAgentId)} is not one of the agents (${known})`,
    });
  }
  config.bindings.forEach((b, i) => {
    if (agents.size > 0 && !agents.has(b.agentId)) {
      problems.push({
        path: `routing.bindings[${i}].agentId`,
        message: `binding names unknown agent ${JSON.stringify(b.agentId)} (agents: ${known})`,
      });
    }
  });
  return resolver;
}

/** Store, lock, limits and logger. */
function resolveServices(
  options: RunnerOptions,
  report: Report,
): Pick<
  ResolvedRunnerOptions,
  'store' | 'lock' | 'maxConcurrentSessions' | 'maxHistoryMessages' | 'closeTimeoutMs' | 'logger'
> {
  const store: unknown = options.store;
  if (store !== undefined && !hasMethods(store, ['load', 'save', 'delete', 'list']))
    report('store', `expected a CheckpointStore { load, save, delete, list }, got ${describeValue(store)}`);
  const lock: unknown = options.lock;
  if (lock !== undefined && !hasMethods(lock, ['withLock']))
    report('lock', `expected a SessionLock { withLock }, got ${describeValue(lock)}`);
  const maxConcurrentSessions = options.maxConcurrentSessions ?? 64;
  if (!isPositiveInteger(maxConcurrentSessions))
    report('maxConcurrentSessions', `expected a positive integer, got ${describeValue(maxConcurrentSessions)}`);
  const maxHistoryMessages = options.maxHistoryMessages ?? 1000;
  if (!isPositiveInteger(maxHistoryMessages))
    report('maxHistoryMessages', `expected a positive integer, got ${describeValue(maxHistoryMessages)}`);
  const closeTimeoutMs = options.closeTimeoutMs ?? 10_000;
  if (typeof closeTimeoutMs !== 'number' || !Number.isFinite(closeTimeoutMs) || closeTimeoutMs < 0)
    report('closeTimeoutMs', `expected a finite number of milliseconds >= 0, got ${describeValue(closeTimeoutMs)}`);
  const logger = options.logger;
  if (logger !== undefined && !hasMethods(logger, ['debug', 'warn']))
    report('logger', `expected a logger { debug, warn }, got ${describeValue(logger)}`);
  return {
    store: store as CheckpointStore | undefined,
    lock: lock as SessionLock | undefined,
    maxConcurrentSessions,
    maxHistoryMessages,
    closeTimeoutMs,
    logger,
  };
}

function hasMethods(value: unknown, methods: readonly string[]): boolean {
  return (
    typeof value === 'object' &&
    value !== null &&
    methods.every((m) => typeof (value as Record<string, unknown>)[m] === 'function')
  );
}

function routeProblems(routes: {
  agent?: SignalRoute[];
  plugin?: SignalRoute[];
}): readonly { index: number; message: string }[] {
  try {
    new ComposedRouter(routes);
    return [];
  } catch (error) {
    if (!RouteConfigError.isInstance(error)) throw error;
    return error.problems;
  }
}
