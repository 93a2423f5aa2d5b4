import { describeValue } from '@signalyard/core';
import { MAX_TIMEOUT_MS, clockProblem, isAbortSignal, isClock, isTimerDelay } from '@signalyard/core/internal';
import type { ChatModel, Clock } from '@signalyard/core';
import * as z from 'zod';
import type { PipelineMode } from '../envelope/envelope-json.js';
import { PipelineUsageError } from '../errors/pipeline-usage-error.js';
import { formatPath, invalid, parseWithSchema, strictObjectError } from '../shared/schema-problem.js';

/** Options of {@link PipelineRuntime}'s constructor. */
export interface PipelineRuntimeOptions {
  /** The model stages reach as `ctx.model` (each call counted toward `maxLlmCalls`). */
  model?: ChatModel;
  /**
   * At most this many entries in an envelope's `trace`: the most recent ones are kept and
   * `envelope.droppedTraceEntries` counts the older ones dropped. An integer ≥ 0, or `Infinity`
   * to keep every entry. Default 1,000.
   */
  maxTraceEntries?: number;
  /**
   * Where runs read the time they record (trace `startedAt` / `endedAt`, error `at`, interrupt
   * `createdAt` / `expiresAt`, `resolvedAt`) and check interrupt expiry against. Default
   * `systemClock` (`Date.now()`). A run the `Kernel` starts reads the kernel's clock instead.
   */
  clock?: Clock;
}

/** The default `maxTraceEntries` of a {@link PipelineRuntime}: an envelope's trace keeps the last 1,000 stage executions. */
export const DEFAULT_MAX_TRACE_ENTRIES = 1000;

/** Per-run tightening of the pipeline's bounds: for each, the smaller of the two applies. */
export interface RunBounds {
  /** At most this many loop-backs in this run. */
  maxIterations?: number;
  /** At most this many model calls in this run. */
  maxLlmCalls?: number;
  /** At most this many stage executions in this run. */
  maxAgentHops?: number;
}

/** Options of {@link PipelineRuntime.resume} and {@link PipelineRuntime.resumeStream}. */
export interface ResumeOptions {
  /** Cancels the run: it ends `terminated: true`, `terminalReason: 'user_cancelled'`, and the stage in flight is aborted. */
  abortSignal?: AbortSignal;
  /** A deadline for this call, in ms: when it passes the run ends `timeout_exceeded` (the stage in flight is aborted). */
  timeoutMs?: number;
  /** Tightens the pipeline's bounds for this run (counters continue from the envelope). */
  bounds?: RunBounds;
}

/** Options of {@link PipelineRuntime.run} and {@link PipelineRuntime.stream}. */
export interface RunOptions extends ResumeOptions {
  /**
   * `sequential` (default): stages run one after another by routing. `parallel` (DAG mode): each
   * stage runs at most once, as soon as its `requires` / `after` allow, concurrently with the
   * other ready stages; routing settings are not used.
   */
  mode?: PipelineMode;
  /** The new envelope's id. Default: a random UUID. */
  envelopeId?: string;
}

const isChatModel = (value: unknown): value is ChatModel =>
  typeof value === 'object' &&
  value !== null &&
  typeof (value as { generate?: unknown }).generate === 'function' &&
  ((value as { stream?: unknown }).stream === undefined ||
    typeof (value as { stream?: unknown }).stream === 'function');
const positiveInteger = (key: string) =>
  z.int(invalid(key, 'a positive integer')).min(1, invalid(key, 'a positive integer')).optional();
const BOUND_KEYS = ['maxIterations', 'maxLlmCalls', 'maxAgentHops'];

const isTraceCap = (value: unknown): value is number =>
  value === Infinity || (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0);

/** The constructor's options (other keys are ignored). */
const runtimeOptionsSchema = z.looseObject(
  {
    model: z
      .custom<ChatModel>(isChatModel, invalid('model', 'a ChatModel { generate(request), stream?(request) }'))
      .optional(),
    maxTraceEntries: z
      .custom<number>(isTraceCap, invalid('maxTraceEntries', 'an integer >= 0, or Infinity'))
      .optional(),
    clock: z.custom<Clock>(isClock, { error: (issue) => `Invalid clock: ${clockProblem(issue.input)}` }).optional(),
  },
  {
    error: (issue) =>
      `Invalid runtime options ${describeValue(issue.input)}: expected an object { model?, maxTraceEntries?, clock? }`,
  },
);
const resumeShape = {
  abortSignal: z.custom<AbortSignal>(isAbortSignal, invalid('abortSignal', 'an AbortSignal')).optional(),
  timeoutMs: z
    .custom<number>(isTimerDelay, invalid('timeoutMs', `a positive number of milliseconds up to ${MAX_TIMEOUT_MS}`))
    .optional(),
  bounds: z
    .strictObject(
      {
        maxIterations: positiveInteger('maxIterations'),
        maxLlmCalls: positiveInteger('maxLlmCalls'),
        maxAgentHops: positiveInteger('maxAgentHops'),
      },
      strictObjectError('bounds', BOUND_KEYS, 'bound'),
    )
    .optional(),
};
const resumeOptionsSchema = z.strictObject(resumeShape, strictObjectError('opts', Object.keys(resumeShape)));
const runShape = {
  ...resumeShape,
  mode: z.enum(['sequential', 'parallel'], invalid('run mode', '"sequential" or "parallel"')).optional(),
  envelopeId: z
    .string(invalid('envelopeId', 'a non-empty string'))
    .min(1, invalid('envelopeId', 'a non-empty string'))
    .optional(),
};
const runOptionsSchema = z.strictObject(runShape, strictObjectError('opts', Object.keys(runShape)));

/** @throws PipelineUsageError `PIPELINE_ARGUMENT_INVALID` naming the bad option. @internal */
export function parseRuntimeOptions(options: unknown): PipelineRuntimeOptions {
  return parse(runtimeOptionsSchema, options, 'options');
}

/** @throws PipelineUsageError `PIPELINE_ARGUMENT_INVALID` naming the bad option. @internal */
export function parseRunOptions(opts: unknown): RunOptions {
  return opts === undefined ? {} : parse(runOptionsSchema, opts, 'opts');
}

/** @throws PipelineUsageError `PIPELINE_ARGUMENT_INVALID` naming the bad option. @internal */
export function parseResumeOptions(opts: unknown): ResumeOptions {
  return opts === undefined ? {} : parse(resumeOptionsSchema, opts, 'opts');
}

function parse<T>(schema: z.ZodType<T>, value: unknown, root: string): T {
  const parsed = parseWithSchema(schema, value);
  if (parsed.ok) return parsed.value;
  throw new PipelineUsageError({
    code: 'PIPELINE_ARGUMENT_INVALID',
    argument: formatPath(root, parsed.problem.path),
    message: parsed.problem.message,
  });
}
