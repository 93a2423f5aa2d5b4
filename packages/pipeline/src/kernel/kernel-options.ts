import type { Clock } from '@signalyard/core';
import { MAX_TIMEOUT_MS, clockProblem, isAbortSignal, isClock, isTimerDelay } from '@signalyard/core/internal';
import * as z from 'zod';
import type { PipelineMode } from '../envelope/envelope-json.js';
import { KernelError } from '../errors/kernel-error.js';
import { formatPath, invalid, parseWithSchema, strictObjectError } from '../shared/schema-problem.js';
import { PRIORITIES, type Priority } from './priority.js';
import { QUOTA_KEYS, type ResourceQuota } from './resource-quota.js';

/** Options of the {@link Kernel} constructor. */
export interface KernelOptions {
  /** At most this many processes run at once, over all services. A positive integer or `Infinity`; default 4. */
  maxRunning?: number;
  /**
   * How long a terminated process stays visible (`status`, state `zombie`) before the kernel
   * forgets it, in ms: `0` or more, or `Infinity` (kept until `reap`). Default 300000 (5 minutes).
   */
  retainTerminatedMs?: number;
  /**
   * Where the kernel reads the time: each process's `usage.elapsedMs`, and the times its runs
   * record (trace, errors, interrupts) and check interrupt expiry against. Default `systemClock`
   * (`Date.now()`); a test drives it with a clock of its own. Deadlines stay timers.
   */
  clock?: Clock;
}

/** Options of {@link Kernel.registerService}. */
export interface ServiceOptions {
  /** At most this many of the service's processes run at once. A positive integer or `Infinity` (the default). */
  maxConcurrent?: number;
}

/** Options of {@link Kernel.submit}. */
export interface SubmitOptions {
  /** The service to run on. Default: the first registered service. */
  service?: string;
  /** Default `normal`. */
  priority?: Priority;
  /** Limits enforced while the process runs; see {@link ResourceQuota}. */
  quota?: ResourceQuota;
  /** Cancels the process (like {@link Kernel.cancel}), in any state, for its whole life. */
  abortSignal?: AbortSignal;
  /** The run mode of its pipeline: `sequential` (default) or `parallel` (DAG mode). */
  mode?: PipelineMode;
}

/** Options of {@link Kernel.events}. */
export interface KernelEventsOptions {
  /** Ends the iteration at once (events buffered but not yet read are dropped). */
  abortSignal?: AbortSignal;
}

const isLimit = (value: unknown): value is number =>
  value === Infinity || (typeof value === 'number' && Number.isSafeInteger(value) && value >= 1);
const isRetention = (value: unknown): value is number =>
  value === Infinity || (typeof value === 'number' && value >= 0 && value <= MAX_TIMEOUT_MS);
const limit = (name: string) => z.custom<number>(isLimit, invalid(name, 'a positive integer or Infinity')).optional();
const abortSignal = z.custom<AbortSignal>(isAbortSignal, invalid('abortSignal', 'an AbortSignal')).optional();

const kernelShape = {
  maxRunning: limit('maxRunning'),
  retainTerminatedMs: z
    .custom<number>(
      isRetention,
      invalid('retainTerminatedMs', `a number of milliseconds from 0 to ${MAX_TIMEOUT_MS}, or Infinity`),
    )
    .optional(),
  clock: z.custom<Clock>(isClock, { error: (issue) => `Invalid clock: ${clockProblem(issue.input)}` }).optional(),
};
const kernelOptionsSchema = z.strictObject(kernelShape, strictObjectError('options', Object.keys(kernelShape)));
const serviceShape = { maxConcurrent: limit('maxConcurrent') };
const serviceOptionsSchema = z.strictObject(serviceShape, strictObjectError('opts', Object.keys(serviceShape)));
const quotaCount = (key: string) =>
  z
    .int(invalid(`quota ${key}`, 'a positive integer'))
    .min(1, invalid(`quota ${key}`, 'a positive integer'))
    .optional();
const quotaSchema = z.strictObject(
  {
    maxLlmCalls: quotaCount('maxLlmCalls'),
    maxToolCalls: quotaCount('maxToolCalls'),
    maxAgentHops: quotaCount('maxAgentHops'),
    maxIterations: quotaCount('maxIterations'),
    timeoutMs: z
      .custom<number>(
        isTimerDelay,
        invalid('quota timeoutMs', `a positive number of milliseconds up to ${MAX_TIMEOUT_MS}`),
      )
      .optional(),
  },
  strictObjectError('opts.quota', QUOTA_KEYS),
);
const submitShape = {
  service: z
    .string(invalid('service', 'a non-empty service name'))
    .min(1, invalid('service', 'a non-empty service name'))
    .optional(),
  priority: z
    .enum(PRIORITIES as [Priority, ...Priority[]], invalid('priority', `one of ${PRIORITIES.join(', ')}`))
    .optional(),
  quota: quotaSchema.optional(),
  abortSignal,
  mode: z.enum(['sequential', 'parallel'], invalid('mode', '"sequential" or "parallel"')).optional(),
};
const submitOptionsSchema = z.strictObject(submitShape, strictObjectError('opts', Object.keys(submitShape)));
const eventsShape = { abortSignal };
const eventsOptionsSchema = z.strictObject(eventsShape, strictObjectError('opts', Object.keys(eventsShape)));

/** @throws KernelError `KERNEL_ARGUMENT_INVALID` naming the bad option (unknown keys included). @internal */
export function parseKernelOptions(options: unknown): KernelOptions {
  return parse(kernelOptionsSchema, options, 'options');
}

/** @throws KernelError `KERNEL_ARGUMENT_INVALID` naming the bad option. @internal */
export function parseServiceOptions(opts: unknown): ServiceOptions {
  return parse(serviceOptionsSchema, opts, 'opts');
}

/** Submit options, with the quota's set keys only, frozen. @throws KernelError `KERNEL_ARGUMENT_INVALID`. @internal */
export function parseSubmitOptions(opts: unknown): SubmitOptions & { quota: Readonly<ResourceQuota> } {
  const o = parse(submitOptionsSchema, opts, 'opts');
  const quota: ResourceQuota = {};
  for (const key of QUOTA_KEYS) {
    const v = o.quota?.[key];
    if (v !== undefined) quota[key] = v;
  }
  return { ...o, quota: Object.freeze(quota) };
}

/** @throws KernelError `KERNEL_ARGUMENT_INVALID` naming the bad option. @internal */
export function parseEventsOptions(opts: unknown): KernelEventsOptions {
  return parse(eventsOptionsSchema, opts, 'opts');
}

/** A `KERNEL_ARGUMENT_INVALID` error for `argument`. @internal */
export function argumentError(argument: string, message: string, cause?: unknown): KernelError {
  return new KernelError({ code: 'KERNEL_ARGUMENT_INVALID', argument, message, cause });
}

function parse<T>(schema: z.ZodType<T>, value: unknown, root: string): T {
  const parsed = parseWithSchema(schema, value);
  if (parsed.ok) return parsed.value;
  throw argumentError(formatPath(root, parsed.problem.path), parsed.problem.message);
}
