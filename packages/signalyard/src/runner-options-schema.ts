import {
  describeValue,
  systemClock,
  type CheckpointStore,
  type Clock,
  type ConfigProblem,
  type Inbox,
  type SessionLock,
} from '@signalyard/core';
import { configProblemsFromZod, isClock } from '@signalyard/core/internal';
import { ComposedRouter, RouteConfigError } from '@signalyard/router';
import { normalizeAgentId } from '@signalyard/sessions';
import * as z from 'zod';
import type { $ZodIssue } from 'zod/v4/core';
import { DEFAULT_TIMELINE, type TimelineBounds } from './event-timeline.js';

// The zod schemas of the runner options, one per seam (agents, plugins, routing, services), each
// writing its messages in the form `expected <what>, got <value>`. What a schema cannot see (two
// agents with one id, two plugins with one name, routing that names unknown agents) is checked
// by resolveRunnerOptions on the values the schemas accepted.

/** The error option of a schema or check: `expected <what>, got <value>`. */
const expected = (what: string) => ({
  error: (issue: { input?: unknown }) => `expected ${what}, got ${describeValue(issue.input)}`,
});

const isObject = (value: unknown): value is object => typeof value === 'object' && value !== null;
const isFunction = (value: unknown): boolean => typeof value === 'function';
const hasMethods =
  (methods: readonly string[]) =>
  (value: unknown): boolean =>
    isObject(value) && methods.every((m) => typeof (value as Record<string, unknown>)[m] === 'function');

/** What a runner logs to (`RunnerOptions.logger`). */
export interface RunnerLogger {
  debug(...args: unknown[]): void;
  warn(...args: unknown[]): void;
}

/** The options themselves: an object (whatever its keys). */
export const runnerOptionsObjectSchema = z.custom<object>(isObject, expected('runner options { agents, ... }'));

/**
 * A list of signal routes of one tier, checked by the router: each route's problem at its index
 * (`agents[0].routes[2]`).
 */
const routeListSchema = (tier: 'agent' | 'plugin', error: ReturnType<typeof expected>) =>
  z.array(z.unknown(), error).superRefine((routes, ctx) => {
    for (const p of routeProblems(tier, routes))
      ctx.addIssue({ code: 'custom', path: [p.index], message: p.message, input: routes[p.index] });
  });

function routeProblems(tier: 'agent' | 'plugin', routes: unknown[]): readonly { index: number; message: string }[] {
  try {
    new ComposedRouter({ [tier]: routes });
    return [];
  } catch (error) {
    if (!RouteConfigError.isInstance(error)) throw error;
    return error.problems;
  }
}

const agentIdSchema = z.custom<string>((id) => typeof id === 'string' && normalizeAgentId(id) === id, {
  error: ({ input }) =>
    typeof input === 'string' && input !== ''
      ? `agent id ${describeValue(input)} is not canonical: use ${JSON.stringify(normalizeAgentId(input))}`
      : `agent id ${describeValue(input)} is not canonical: expected a non-empty lowercase id like "main"`,
});

/** An agent definition; problems inside its routes are at `routes[i]` (two keys deep). */
export const agentSchema = z.looseObject(
  {
    id: agentIdSchema,
    engine: z.custom(
      (engine) => isFunction(engine) || hasMethods(['turn'])(engine),
      expected('an Engine { turn } or an engine function'),
    ),
    strategy: z.custom(isFunction, expected('a strategy factory () => ExecutionStrategy')).optional(),
    routes: routeListSchema('agent', expected('a list of signal routes')).nullish(),
    whenBusy: z.enum(['queue', 'collect', 'interrupt'], expected('one of "queue", "collect", "interrupt"')).optional(),
  },
  expected('an agent definition { id, engine, strategy?, routes?, whenBusy? }'),
);

/** The agent list: at least one (each agent is parsed on its own, see `agentSchema`). */
export const agentListSchema = z
  .array(z.unknown(), expected('a non-empty list of agent definitions'))
  .min(1, expected('a non-empty list of agent definitions'));

/** A plugin: a non-empty name (else the problem is the plugin itself), hooks that are functions. */
export const pluginSchema = z
  .custom<object>(
    (p) => isObject(p) && typeof (p as { name?: unknown }).name === 'string' && (p as { name: string }).name !== '',
    expected('a plugin with a non-empty name'),
  )
  .pipe(
    z.looseObject({
      signalRoutes: z.custom(isFunction, expected('a function')).optional(),
      setup: z.custom(isFunction, expected('a function')).optional(),
      dispose: z.custom(isFunction, expected('a function')).optional(),
    }),
  );

export const pluginListSchema = z.array(z.unknown(), expected('a list of plugins')).nullish();

/** What a plugin's `signalRoutes()` returned. */
export const pluginRoutesSchema = routeListSchema('plugin', {
  error: ({ input }) => `returned ${describeValue(input)}, expected a list of signal routes`,
});

export const routingSchema = z.custom<object>(isObject, expected('a routing config object')).nullish();

const limit = (fallback: number) =>
  z
    .int(expected('a positive integer'))
    .min(1, expected('a positive integer'))
    .nullish()
    .transform((v) => v ?? fallback);

/**
 * The recent-events log: `false` (never), `true` or bounds (always; defaults 200 entries per
 * session, 1,000 sessions), or absent (while an inspector listens).
 */
const timelineSchema = z
  .union(
    [
      z.boolean(),
      z.strictObject(
        {
          limit: limit(DEFAULT_TIMELINE.limit),
          sessions: limit(DEFAULT_TIMELINE.sessions),
        },
        expected('a boolean or { limit?, sessions? } (positive integers)'),
      ),
    ],
    expected('a boolean or { limit?, sessions? } (positive integers)'),
  )
  .nullish()
  .transform((v): TimelineMode =>
    v === false
      ? { record: 'never', bounds: DEFAULT_TIMELINE }
      : v === true
        ? { record: 'always', bounds: DEFAULT_TIMELINE }
        : v === undefined || v === null
          ? { record: 'inspecting', bounds: DEFAULT_TIMELINE }
          : { record: 'always', bounds: v },
  );

/** When the recent-events log records, and its bounds. @internal */
export interface TimelineMode {
  readonly record: 'never' | 'always' | 'inspecting';
  readonly bounds: TimelineBounds;
}

/** The methods a Runner calls on its inbox. */
const INBOX_METHODS = [
  'accept',
  'acquire',
  'renew',
  'release',
  'read',
  'beginDelivery',
  'ack',
  'putOutcome',
  'outcome',
  'notify',
  'onNotify',
  'deadLetters',
];

const ms = (fallback: number) =>
  z
    .int(expected('an integer number of milliseconds >= 1'))
    .min(1, expected('an integer number of milliseconds >= 1'))
    .nullish()
    .transform((v) => v ?? fallback);

/** A worker's options as given (`worker: { … }`). */
const workerObjectSchema = z.strictObject(
  {
    id: z
      .string(expected('a non-empty worker id string'))
      .min(1, expected('a non-empty worker id string'))
      .max(256, expected('a worker id of at most 256 characters'))
      .optional(),
    leaseMs: ms(30_000),
    maxSessions: z.int(expected('a positive integer')).min(1, expected('a positive integer')).nullish(),
    pollMs: ms(1000),
    maxDeliveries: z.int(expected('a positive integer')).min(1, expected('a positive integer')).nullish(),
  },
  expected('worker options { id?, leaseMs?, maxSessions?, pollMs?, maxDeliveries? }'),
);

/** `worker`: `true`/absent (a worker, with the defaults), `false` (a producer only), or options. */
const workerSchema = z
  .union(
    [z.boolean(), workerObjectSchema],
    expected('true, false or { id?, leaseMs?, maxSessions?, pollMs?, maxDeliveries? }'),
  )
  .nullish()
  .transform((v): WorkerSetting => {
    if (v === false) return false;
    const o = v === true || v === undefined || v === null ? undefined : v;
    return {
      ...(o?.id !== undefined && { id: o.id }),
      leaseMs: o?.leaseMs ?? 30_000,
      ...(typeof o?.maxSessions === 'number' && { maxSessions: o.maxSessions }),
      pollMs: o?.pollMs ?? 1000,
      maxDeliveries: o?.maxDeliveries ?? 5,
    };
  });

/** The `worker` option resolved: `false` (producer only) or the worker's settings. @internal */
export type WorkerSetting =
  | false
  | {
      readonly id?: string;
      readonly leaseMs: number;
      readonly maxSessions?: number;
      readonly pollMs: number;
      readonly maxDeliveries: number;
    };

/** Store, lock, limits (with their defaults), logger and clock. */
export const servicesSchema = z.object({
  store: z
    .custom<CheckpointStore>(
      hasMethods(['load', 'save', 'delete', 'list']),
      expected('a CheckpointStore { load, save, delete, list }'),
    )
    .optional(),
  lock: z.custom<SessionLock>(hasMethods(['withLock']), expected('a SessionLock { withLock }')).optional(),
  maxConcurrentSessions: limit(64),
  maxHistoryMessages: limit(1000),
  closeTimeoutMs: z
    .number(expected('a finite number of milliseconds >= 0'))
    .min(0, expected('a finite number of milliseconds >= 0'))
    .nullish()
    .transform((v) => v ?? 10_000),
  logger: z.custom<RunnerLogger>(hasMethods(['debug', 'warn']), expected('a logger { debug, warn }')).optional(),
  explainDecisions: z
    .boolean(expected('true or false'))
    .nullish()
    .transform((v) => v ?? false),
  timeline: timelineSchema,
  maxCausePayloadBytes: z
    .number(expected('a whole number of bytes >= 0'))
    .int(expected('a whole number of bytes >= 0'))
    .min(0, expected('a whole number of bytes >= 0'))
    .nullish()
    .transform((v) => v ?? 16 * 1024),
  redact: z
    .custom<(value: string, path: readonly (string | number)[]) => string>(
      (v) => typeof v === 'function',
      expected('a function (value: string, path) => string'),
    )
    .optional(),
  clock: z
    .custom<Clock>(isClock, expected('a Clock { now(): number }'))
    .nullish()
    .transform((v) => v ?? systemClock),
  inbox: z
    .custom<Inbox>(
      (v) => hasMethods(INBOX_METHODS)(v) && typeof (v as { durable?: unknown }).durable === 'boolean',
      expected(`an Inbox { durable, ${INBOX_METHODS.join(', ')} }`),
    )
    .optional(),
  worker: workerSchema,
  outcomeTtlMs: z
    .int(expected('an integer number of milliseconds >= 1'))
    .min(1, expected('an integer number of milliseconds >= 1'))
    .nullish()
    .transform((v) => v ?? 600_000),
  maxOutcomeBytes: z
    .int(expected('an integer number of bytes >= 0'))
    .min(0, expected('an integer number of bytes >= 0'))
    .nullish()
    .transform((v) => v ?? 256 * 1024),
});

/**
 * Parses `value` with `schema`: the parsed value (`undefined` on a problem) and the problems,
 * their paths below `at` (`['agents', 0]`).
 */
export function parseAt<T>(
  schema: z.ZodType<T>,
  value: unknown,
  at: readonly PropertyKey[],
): { readonly value: T | undefined; readonly problems: ConfigProblem[]; readonly issues: readonly $ZodIssue[] } {
  const parsed = schema.safeParse(value);
  if (parsed.success) return { value: parsed.data, problems: [], issues: [] };
  const { issues } = parsed.error;
  return { value: undefined, problems: configProblemsFromZod(issues, { mapPath: (p) => [...at, ...p] }), issues };
}
