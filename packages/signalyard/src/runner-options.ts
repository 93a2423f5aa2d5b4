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
import type { AgentDefinition, EngineFn } from './engine.js';

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

/**
 * Validates runner options, reporting every problem at once.
 * @throws ConfigError `CONFIG_INVALID`.
 */
export function resolveRunnerOptions(options: RunnerOptions): ResolvedRunnerOptions {
  const problems: ConfigProblem[] = [];
  const problem = (path: string, message: string): void => {
    problems.push({ path, message });
  };
  if (typeof options !== 'object' || (options as unknown) === null) {
    throw new ConfigError({
      problems: [{ path: '', message: `expected runner options { agents, ... }, got ${describeValue(options)}` }],
    });
  }

  // Agents.
  const agents = new Map<string, AgentRuntime>();
  const agentList: unknown = options.agents;
  if (!Array.isArray(agentList) || agentList.length === 0) {
    problem('agents', `expected a non-empty list of agent definitions, got ${describeValue(agentList)}`);
  } else {
    agentList.forEach((raw: unknown, i) => {
      const path = `agents[${i}]`;
      if (typeof raw !== 'object' || raw === null) {
        problem(path, `expected an agent definition { id, engine, strategy?, routes? }, got ${describeValue(raw)}`);
        return;
      }
      const a = raw as Partial<AgentDefinition>;
      let ok = true;
      if (typeof a.id !== 'string' || a.id === '' || normalizeAgentId(a.id) !== a.id) {
        problem(
          `${path}.id`,
          `agent id ${describeValue(a.id)} is not canonical${typeof a.id === 'string' && a.id !== '' ? `: use ${JSON.stringify(normalizeAgentId(a.id))}` : ''}`,
        );
        ok = false;
      } else if (agents.has(a.id)) {
        problem(`${path}.id`, `duplicate agent id ${JSON.stringify(a.id)}`);
        ok = false;
      }
      if (a.strategy !== undefined && typeof a.strategy !== 'function') {
        problem(
          `${path}.strategy`,
          `expected a strategy factory () => ExecutionStrategy, got ${describeValue(a.strategy)}`,
        );
        ok = false;
      }
      let engine: EngineFn | undefined;
      if (typeof a.engine === 'function') engine = a.engine;
      else if (
        typeof a.engine === 'object' &&
        (a.engine as unknown) !== null &&
        typeof (a.engine as { turn?: unknown }).turn === 'function'
      ) {
        const object = a.engine;
        engine = (ctx) => object.turn(ctx);
      } else {
        problem(`${path}.engine`, `expected an Engine { turn } or an engine function, got ${describeValue(a.engine)}`);
        ok = false;
      }
      const routes: unknown = a.routes ?? [];
      if (!Array.isArray(routes)) {
        problem(`${path}.routes`, `expected a list of signal routes, got ${describeValue(routes)}`);
        ok = false;
      } else {
        for (const p of routeProblems({ agent: routes as SignalRoute[] }))
          problem(`${path}.routes[${p.index}]`, p.message);
      }
      if (ok && typeof a.id === 'string')
        agents.set(a.id, {
          id: a.id,
          definition: a as AgentDefinition,
          routes: Object.freeze([...(routes as SignalRoute[])]),
          engine,
        });
    });
  }

  // Plugins: unique names; routes read once, here.
  const plugins: Plugin[] = [];
  const pluginRoutes: SignalRoute[] = [];
  const pluginList: unknown = options.plugins ?? [];
  if (!Array.isArray(pluginList)) {
    problem('plugins', `expected a list of plugins, got ${describeValue(pluginList)}`);
  } else {
    const names = new Set<string>();
    pluginList.forEach((raw: unknown, i) => {
      const path = `plugins[${i}]`;
      if (
        typeof raw !== 'object' ||
        raw === null ||
        typeof (raw as { name?: unknown }).name !== 'string' ||
        (raw as Plugin).name === ''
      ) {
        problem(path, `expected a plugin with a non-empty name, got ${describeValue(raw)}`);
        return;
      }
      const p = raw as Plugin;
      if (names.has(p.name)) problem(`${path}.name`, `duplicate plugin name ${JSON.stringify(p.name)}`);
      names.add(p.name);
      for (const hook of ['signalRoutes', 'setup', 'dispose'] as const) {
        const fn: unknown = (p as unknown as Record<string, unknown>)[hook];
        if (fn !== undefined && typeof fn !== 'function')
          problem(`${path}.${hook}`, `expected a function, got ${describeValue(fn)}`);
      }
      let routes: unknown = [];
      if (typeof p.signalRoutes === 'function') {
        try {
          routes = p.signalRoutes();
        } catch (error) {
          problem(`${path}.signalRoutes`, `threw: ${error instanceof Error ? error.message : describeValue(error)}`);
        }
      }
      if (!Array.isArray(routes))
        problem(`${path}.signalRoutes`, `returned ${describeValue(routes)}, expected a list of signal routes`);
      else {
        for (const rp of routeProblems({ plugin: routes as SignalRoute[] }))
          problem(`${path}.signalRoutes()[${rp.index}]`, rp.message);
        pluginRoutes.push(...(routes as SignalRoute[]));
      }
      plugins.push(p);
    });
  }

  // Routing: validated by the sessions package; default agent = the first agent unless given.
  let resolver: RouteResolver | undefined;
  const firstAgent = Array.isArray(agentList) ? (agentList[0] as Partial<AgentDefinition> | undefined)?.id : undefined;
  const routingInput: unknown = options.routing ?? {};
  if (typeof routingInput !== 'object' || routingInput === null) {
    problem('routing', `expected a routing config object, got ${describeValue(routingInput)}`);
  } else {
    const withDefault = { ...(routingInput as RoutingConfigInput) };
    if (withDefault.defaultAgentId === undefined && typeof firstAgent === 'string' && agents.has(firstAgent))
      withDefault.defaultAgentId = firstAgent;
    try {
      resolver = new RouteResolver(withDefault);
      const config = resolver.config;
      if (agents.size > 0 && !agents.has(config.defaultAgentId)) {
        problem(
          'routing.defaultAgentId',
          `default agent ${JSON.stringify(config.defaultAgentId)} is not one of the agents (${JSON.stringify([...agents.keys()])})`,
        );
      }
      config.bindings.forEach((b, i) => {
        if (agents.size > 0 && !agents.has(b.agentId)) {
          problem(
            `routing.bindings[${i}].agentId`,
            `binding names unknown agent ${JSON.stringify(b.agentId)} (agents: ${JSON.stringify([...agents.keys()])})`,
          );
        }
      });
    } catch (error) {
      if (!ConfigError.isInstance(error)) throw error;
      for (const p of error.problems) problems.push({ ...p, path: p.path === '' ? 'routing' : `routing.${p.path}` });
    }
  }

  // Store, lock, limits.
  const store: unknown = options.store;
  if (store !== undefined && !hasMethods(store, ['load', 'save', 'delete', 'list'])) {
    problem('store', `expected a CheckpointStore { load, save, delete, list }, got ${describeValue(store)}`);
  }
  const lock: unknown = options.lock;
  if (lock !== undefined && !hasMethods(lock, ['withLock']))
    problem('lock', `expected a SessionLock { withLock }, got ${describeValue(lock)}`);
  const maxConcurrentSessions = options.maxConcurrentSessions ?? 64;
  if (!isPositiveInteger(maxConcurrentSessions))
    problem('maxConcurrentSessions', `expected a positive integer, got ${describeValue(maxConcurrentSessions)}`);
  const maxHistoryMessages = options.maxHistoryMessages ?? 1000;
  if (!isPositiveInteger(maxHistoryMessages))
    problem('maxHistoryMessages', `expected a positive integer, got ${describeValue(maxHistoryMessages)}`);
  const closeTimeoutMs = options.closeTimeoutMs ?? 10_000;
  if (typeof closeTimeoutMs !== 'number' || !Number.isFinite(closeTimeoutMs) || closeTimeoutMs < 0) {
    problem('closeTimeoutMs', `expected a finite number of milliseconds >= 0, got ${describeValue(closeTimeoutMs)}`);
  }
  const logger = options.logger;
  if (logger !== undefined && !hasMethods(logger, ['debug', 'warn']))
    problem('logger', `expected a logger { debug, warn }, got ${describeValue(logger)}`);

  if (problems.length > 0 || resolver === undefined) throw new ConfigError({ problems });
  return {
    agents,
    resolver,
    plugins,
    pluginRoutes: Object.freeze(pluginRoutes),
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
