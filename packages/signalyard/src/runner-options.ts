import {
  ConfigError,
  InboxError,
  MemoryCheckpointStore,
  MemoryInbox,
  describeValue,
  type CheckpointStore,
  type Clock,
  type ConfigProblem,
  type Inbox,
  type Plugin,
  type SessionLock,
  type SignalRoute,
} from '@signalyard/core';
import { formatConfigPath } from '@signalyard/core/internal';
import { RouteResolver, type RoutingConfigInput } from '@signalyard/sessions';
import type { AgentDefinition, EngineFn, WhenBusy } from './engine.js';
import {
  agentListSchema,
  agentSchema,
  parseAt,
  pluginListSchema,
  pluginRoutesSchema,
  pluginSchema,
  routingSchema,
  runnerOptionsObjectSchema,
  servicesSchema,
  type TimelineMode,
  type WorkerSetting,
} from './runner-options-schema.js';

/** The options of a worker (`RunnerOptions.worker`): how it takes and keeps sessions' leases. */
export interface RunnerWorkerOptions {
  /** The worker's id in leases and the inspector. Default: a fresh UUID per runner. */
  id?: string;
  /** How long a lease lasts unless renewed (renewed every `leaseMs / 3` while working). Default 30,000. */
  leaseMs?: number;
  /** Sessions leased at once. Default: `maxConcurrentSessions`. */
  maxSessions?: number;
  /** How often the worker looks for entries without a notification. Default 1,000. */
  pollMs?: number;
  /** Deliveries of one entry before it is settled `failed` with `INBOX_POISONED` (without running the engine). Default 5. */
  maxDeliveries?: number;
}

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
  /**
   * The one clock the runner reads time through (`{ now(): number }`, default `Date.now`): every
   * version's `cause.at`, fork and rewind causes, the timeline's `at`, and the `updatedAt` of the
   * default `MemoryCheckpointStore` it creates. Tests drive time with it instead of patching
   * globals.
   */
  clock?: Clock;
  /**
   * The longest signal payload (its JSON, in UTF-8 bytes) a version's cause keeps as
   * `cause.signal.payload`, for replays (`@signalyard/replay`); a longer one is left out
   * (`payloadOmitted: 'too_large'`). Default 16,384 (16 KiB); 0 keeps no payload.
   */
  maxCausePayloadBytes?: number;
  /**
   * Called with every string of a signal payload before a version's cause keeps it (and its path
   * from the payload's root, e.g. `['text']`); returns what to keep instead: secrets and personal
   * data never reach `cause.signal.payload`. The history keeps what arrived (see `maxHistoryMessages`).
   */
  redact?: (value: string, path: readonly (string | number)[]) => string;
  /** Passed to plugins as `PluginContext.logger`. */
  logger?: {
    /** Receives diagnostic detail a plugin chooses to log (a console-style variadic call). */
    debug(...args: unknown[]): void;
    /** Receives problems a plugin reports without failing, e.g. the audit-log plugin's failed sink. */
    warn(...args: unknown[]): void;
  };
  /**
   * Puts the router's `explain()` list on every `route_decided` event (`considered`: each route
   * looked at and why it lost), computed in the same routing pass as the decision. Default
   * `false`: then only while a listener subscribed with `on(listener, { explainDecisions: true })`
   * (an attached inspector) is there.
   */
  explainDecisions?: boolean;
  /**
   * Where accepted signals wait until a worker settles them (inbox.md). Without one, or with a
   * non-durable one, the runner keeps today's in-process queue, unchanged. With a durable one,
   * `dispatch`/`handle`/`approve` = `accept` + `outcome`, and `rewind`/`deleteSession` are
   * control entries applied in `seq` order by the session's lease holder.
   */
  inbox?: Inbox;
  /**
   * With a durable `inbox`: whether this runner settles entries (`true`, the default, or the
   * worker's options) or only accepts them (`false`: a producer, e.g. a web tier).
   */
  worker?: boolean | RunnerWorkerOptions;
  /** How long a settled entry's outcome is kept for `outcome(receiptId)`, in ms. Default 600,000 (10 min). */
  outcomeTtlMs?: number;
  /** Outputs whose JSON is larger are stored as `{ truncated: true, bytes }` in outcomes crossing processes. Default 262,144 (256 KiB). */
  maxOutcomeBytes?: number;
  /**
   * The bounded log of recent events per session behind {@link Runner.timeline}: `limit` entries
   * per session (the oldest dropped), for the `sessions` most recently active sessions (the least
   * recently active forgotten); defaults `{ limit: 200, sessions: 1000 }`.
   *
   * When it records: absent (the default), while an inspector listens — a listener subscribed
   * with `on(listener, { explainDecisions: true })`, as `startInspector` does — so a runner nobody
   * inspects pays nothing for it; `true` or bounds, always (a page opened later catches up on
   * what happened before); `false`, never.
   */
  timeline?:
    | boolean
    | {
        /** Entries kept per session (default 200). */
        limit?: number;
        /** Sessions kept (default 1,000; the least recently active forgotten). */
        sessions?: number;
      };
}

/** An agent, validated and ready to serve. @internal */
export interface AgentRuntime {
  readonly id: string;
  readonly definition: AgentDefinition;
  readonly routes: readonly SignalRoute[];
  readonly engine: EngineFn | undefined;
  /** What a user message arriving while the session is busy does (default `'queue'`). */
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
  readonly clock: Clock;
  readonly explainDecisions: boolean;
  readonly maxCausePayloadBytes: number;
  readonly redact: RunnerOptions['redact'];
  readonly timeline: TimelineMode;
  /** A durable inbox (a non-durable one is dropped here). */
  readonly inbox: Inbox | undefined;
  readonly worker: WorkerSetting;
  readonly outcomeTtlMs: number;
  readonly maxOutcomeBytes: number;
}

/**
 * Validates runner options, reporting every problem at once: the shape of each part by its zod
 * schema (`runner-options-schema.ts`), then what no schema of one part can see (duplicate agent
 * ids and plugin names, routing that names agents that do not exist).
 * @throws ConfigError `CONFIG_INVALID`.
 */
export function resolveRunnerOptions(options: RunnerOptions): ResolvedRunnerOptions {
  const root = parseAt(runnerOptionsObjectSchema, options, []);
  if (root.problems.length > 0) throw new ConfigError({ problems: root.problems });
  const problems: ConfigProblem[] = [];
  const agents = resolveAgents(options.agents, problems);
  const { plugins, pluginRoutes } = resolvePlugins(options.plugins, problems);
  const resolver = resolveRouting(options, agents, problems);
  const services = parseAt(servicesSchema, options, []);
  problems.push(...services.problems);
  if (problems.length > 0 || resolver === undefined || services.value === undefined)
    throw new ConfigError({ problems });
  const {
    store,
    lock,
    maxConcurrentSessions,
    maxHistoryMessages,
    closeTimeoutMs,
    logger,
    explainDecisions,
    timeline,
    clock,
    maxCausePayloadBytes,
    redact,
    inbox,
    worker,
    outcomeTtlMs,
    maxOutcomeBytes,
  } = services.value;
  const durable = inbox?.durable === true ? inbox : undefined;
  if (durable !== undefined) assertInboxConfig(durable, store, lock);
  return {
    inbox: durable,
    worker,
    outcomeTtlMs,
    maxOutcomeBytes,
    agents,
    resolver,
    plugins,
    pluginRoutes: Object.freeze(pluginRoutes),
    store,
    lock,
    maxConcurrentSessions,
    maxHistoryMessages,
    closeTimeoutMs,
    logger,
    explainDecisions,
    timeline,
    clock,
    maxCausePayloadBytes,
    redact,
  };
}

/**
 * What a durable inbox cannot be used with: a `lock` (leases replace it), and — for a transport
 * other than `MemoryInbox` — a memory checkpoint store (the runner's own default included), which
 * other processes cannot see.
 * @throws InboxError `INBOX_CONFIG_INVALID`.
 */
function assertInboxConfig(inbox: Inbox, store: CheckpointStore | undefined, lock: SessionLock | undefined): void {
  if (lock !== undefined) {
    throw new InboxError({
      code: 'INBOX_CONFIG_INVALID',
      message:
        'A durable inbox and a lock cannot be used together: leases replace the lock (drop the lock option, or the inbox)',
    });
  }
  if (inbox instanceof MemoryInbox) return;
  if (store === undefined || store instanceof MemoryCheckpointStore) {
    throw new InboxError({
      code: 'INBOX_CONFIG_INVALID',
      message: `A durable inbox (${describeValue(inbox.constructor.name)}) needs a durable checkpoint store every worker shares, not ${store === undefined ? "the runner's default MemoryCheckpointStore" : 'a MemoryCheckpointStore'}: pass store (e.g. a SqliteCheckpointStore over the same file)`,
    });
  }
}

/**
 * The agents whose own fields are right, by id. An agent with problems only inside its routes
 * still counts (for the routing checks); a second agent with an id already seen does not.
 */
function resolveAgents(agentList: unknown, problems: ConfigProblem[]): Map<string, AgentRuntime> {
  const agents = new Map<string, AgentRuntime>();
  const list = parseAt(agentListSchema, agentList, ['agents']);
  problems.push(...list.problems);
  const seenIds = new Set<string>();
  list.value?.forEach((raw, i) => {
    const parsed = parseAt(agentSchema, raw, ['agents', i]);
    problems.push(...parsed.problems);
    const id = (raw as Partial<AgentDefinition> | null)?.id;
    if (typeof id !== 'string' || parsed.issues.some((issue) => issue.path.length === 1 && issue.path[0] === 'id'))
      return;
    if (seenIds.has(id)) {
      problems.push({
        path: formatConfigPath(['agents', i, 'id']),
        message: `duplicate agent id ${JSON.stringify(id)}`,
      });
      return;
    }
    seenIds.add(id);
    if (parsed.issues.some((issue) => issue.path.length <= 1)) return;
    const a = raw as AgentDefinition;
    agents.set(id, {
      id,
      definition: a,
      routes: Object.freeze([...(a.routes ?? [])]),
      engine: engineFn(a.engine),
      whenBusy: a.whenBusy ?? 'queue',
    });
  });
  return agents;
}

function engineFn(engine: AgentDefinition['engine']): EngineFn {
  if (typeof engine === 'function') return engine;
  return (ctx) => engine.turn(ctx);
}

/** Plugins: unique names; their routes read once, here. */
function resolvePlugins(
  pluginList: unknown,
  problems: ConfigProblem[],
): { plugins: Plugin[]; pluginRoutes: SignalRoute[] } {
  const plugins: Plugin[] = [];
  const pluginRoutes: SignalRoute[] = [];
  const list = parseAt(pluginListSchema, pluginList, ['plugins']);
  problems.push(...list.problems);
  const names = new Set<string>();
  list.value?.forEach((raw, i) => {
    const parsed = parseAt(pluginSchema, raw, ['plugins', i]);
    problems.push(...parsed.problems);
    if (parsed.issues.some((issue) => issue.path.length === 0)) return; // no name: nothing more to say
    const p = raw as Plugin;
    if (names.has(p.name))
      problems.push({
        path: formatConfigPath(['plugins', i, 'name']),
        message: `duplicate plugin name ${JSON.stringify(p.name)}`,
      });
    names.add(p.name);
    pluginRoutes.push(...pluginRoutesOf(p, formatConfigPath(['plugins', i]), problems));
    plugins.push(p);
  });
  return { plugins, pluginRoutes };
}

/** Calls `p.signalRoutes()` (when it is a function) and checks what it returned. */
function pluginRoutesOf(p: Plugin, path: string, problems: ConfigProblem[]): readonly SignalRoute[] {
  if (typeof p.signalRoutes !== 'function') return [];
  let routes: unknown;
  try {
    routes = p.signalRoutes();
  } catch (error) {
    const message = `threw: ${error instanceof Error ? error.message : describeValue(error)}`;
    problems.push({ path: `${path}.signalRoutes`, message });
    return [];
  }
  const parsed = parseAt(pluginRoutesSchema, routes, []);
  for (const rp of parsed.problems)
    problems.push({
      path: rp.path === '' ? `${path}.signalRoutes` : `${path}.signalRoutes()${rp.path}`,
      message: rp.message,
    });
  return parsed.value === undefined ? [] : (routes as SignalRoute[]);
}

/** Routing: validated by the sessions package; default agent = the first agent unless given. */
function resolveRouting(
  options: RunnerOptions,
  agents: ReadonlyMap<string, AgentRuntime>,
  problems: ConfigProblem[],
): RouteResolver | undefined {
  const routing = parseAt(routingSchema, options.routing, ['routing']);
  if (routing.problems.length > 0) {
    problems.push(...routing.problems);
    return undefined;
  }
  const agentList: unknown = options.agents;
  const firstAgent = Array.isArray(agentList) ? (agentList[0] as Partial<AgentDefinition> | undefined)?.id : undefined;
  const withDefault: RoutingConfigInput = { ...(options.routing ?? {}) };
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
  problems.push(...unknownAgentProblems(resolver, agents));
  return resolver;
}

/** The routing's default agent and binding agents that are not agents of the runner. */
function unknownAgentProblems(resolver: RouteResolver, agents: ReadonlyMap<string, AgentRuntime>): ConfigProblem[] {
  if (agents.size === 0) return [];
  const problems: ConfigProblem[] = [];
  const known = JSON.stringify([...agents.keys()]);
  const config = resolver.config;
  if (!agents.has(config.defaultAgentId)) {
    problems.push({
      path: 'routing.defaultAgentId',
      message: `default agent ${JSON.stringify(config.defaultAgentId)} is not one of the agents (${known})`,
    });
  }
  config.bindings.forEach((b, i) => {
    if (!agents.has(b.agentId)) {
      problems.push({
        path: `routing.bindings[${i}].agentId`,
        message: `binding names unknown agent ${JSON.stringify(b.agentId)} (agents: ${known})`,
      });
    }
  });
  return problems;
}
