import { describeValue } from '@signalyard/core';
import { frozenCopy, isRecord } from '@signalyard/core/internal';
import * as z from 'zod';
import { PipelineUsageError } from '../errors/pipeline-usage-error.js';
import { formatPath, parseWithSchema } from '../shared/schema-problem.js';
import { copyRecord } from './copy-record.js';
import { orderEnvelopeKeys, type EnvelopeJSON, type StageErrorRecord, type TraceEntry } from './envelope-json.js';
import { INTERRUPT_KINDS, type Interrupt, type ResolvedInterrupt } from './interrupt.js';
import { interruptResponseSchema } from './interrupt-response.js';
import { TERMINAL_REASONS, type TerminalReason } from './terminal-reason.js';

// The schema of an envelope's JSON. Each issue's message is what was expected; `parseEnvelopeJSON`
// names the path and the value: `Invalid envelope JSON at trace[2].stage: got "", expected a
// non-empty string`.

const expected = (text: string): { error: () => string } => ({ error: () => text });
const strict = <S extends z.ZodRawShape>(shape: S, notObject = 'an object'): z.ZodObject<S, z.core.$strict> =>
  z.strictObject(shape, {
    error: (issue) =>
      issue.code === 'unrecognized_keys' ? `no such key (allowed: ${Object.keys(shape).join(', ')})` : notObject,
  });
const isCount = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

const NON_NEGATIVE = 'a non-negative integer';
const ISO = 'an ISO 8601 timestamp string';
const nonEmpty = z.string(expected('a non-empty string')).min(1, expected('a non-empty string'));
const text = z.string(expected('a string'));
const isoTime = z.string(expected(ISO)).refine((v) => !Number.isNaN(Date.parse(v)), expected(ISO));
const count = z.custom<number>(isCount, expected(NON_NEGATIVE));
const record = z.custom<Record<string, unknown>>(isRecord, expected('an object'));
const edgeCounts = record.superRefine((edges, ctx) => {
  for (const key of Object.keys(edges)) {
    const value = edges[key];
    if (!isCount(value)) ctx.addIssue({ code: 'custom', message: NON_NEGATIVE, input: value, path: [key] });
  }
});
const interruptShape = {
  id: nonEmpty,
  kind: z.enum(INTERRUPT_KINDS as [string, ...string[]], expected(`one of ${INTERRUPT_KINDS.join(', ')}`)),
  stage: nonEmpty,
  payload: z.unknown().optional(),
  createdAt: isoTime,
  expiresAt: isoTime.optional(),
};
const interruptSchema = strict(interruptShape);
const resolvedSchema = strict({ ...interruptShape, response: interruptResponseSchema, resolvedAt: isoTime });
const errorSchema = strict({ stage: text, error: text, code: text.optional(), at: isoTime });
const traceSchema = strict({ stage: nonEmpty, startedAt: isoTime, endedAt: isoTime, next: nonEmpty });
const list = <T extends z.ZodType>(item: T): z.ZodArray<T> => z.array(item, expected('an array'));

const envelopeSchema = strict(
  {
    id: nonEmpty,
    input: z.unknown().optional(),
    outputs: record,
    currentStage: nonEmpty,
    iteration: count,
    llmCalls: count,
    agentHops: count,
    edgeTraversals: edgeCounts,
    terminated: z.boolean(expected('a boolean')),
    terminalReason: z.enum(TERMINAL_REASONS as [string, ...string[]], expected(terminalReasonExpected())).optional(),
    terminationReason: text.optional(),
    interrupt: interruptSchema.optional(),
    resolvedInterrupts: list(resolvedSchema),
    errors: list(errorSchema),
    trace: list(traceSchema),
    droppedTraceEntries: count.optional(),
    mode: z.enum(['sequential', 'parallel'], expected('"sequential" or "parallel"')),
    completedStages: list(nonEmpty),
    skippedStages: list(nonEmpty),
  },
  'an envelope JSON object',
).superRefine((o, ctx) => {
  if (o.terminated) {
    if (o.terminalReason === undefined)
      ctx.addIssue({ code: 'custom', message: terminalReasonExpected(), input: undefined, path: ['terminalReason'] });
    if (o.interrupt !== undefined)
      ctx.addIssue({
        code: 'custom',
        message: 'no interrupt on a terminated envelope',
        input: o.interrupt,
        path: ['interrupt'],
      });
  } else if (o.terminalReason !== undefined) {
    ctx.addIssue({
      code: 'custom',
      message: 'no terminal reason since terminated is false',
      input: o.terminalReason,
      path: ['terminalReason'],
    });
  }
});

function terminalReasonExpected(): string {
  return `a terminal reason (${TERMINAL_REASONS.join(', ')}) since terminated is true`;
}

/**
 * Validates an envelope's JSON and returns its fields with fresh containers: input, outputs,
 * payloads and responses are deep, frozen copies, so later changes to `json` never reach the
 * envelope.
 *
 * @throws PipelineUsageError `PIPELINE_ENVELOPE_INVALID` naming the first bad path and its value.
 * @internal
 */
export function parseEnvelopeJSON(json: unknown): EnvelopeJSON {
  const parsed = parseWithSchema(envelopeSchema, json);
  if (!parsed.ok) {
    const { path, message, input } = parsed.problem;
    const at = formatPath('', path);
    throw new PipelineUsageError({
      code: 'PIPELINE_ENVELOPE_INVALID',
      argument: at,
      message: `Invalid envelope JSON at ${at === '' ? '(root)' : at}: got ${describeValue(input)}, expected ${message}`,
    });
  }
  const o = parsed.value;
  const source = json as { outputs: Record<string, unknown>; edgeTraversals: Record<string, number> };
  const outputs = copyRecord(source.outputs);
  for (const key of Object.keys(outputs)) outputs[key] = frozenCopy(outputs[key]);
  const out: EnvelopeJSON = {
    id: o.id,
    input: frozenCopy(o.input),
    outputs,
    currentStage: o.currentStage,
    iteration: o.iteration,
    llmCalls: o.llmCalls,
    agentHops: o.agentHops,
    edgeTraversals: copyRecord(source.edgeTraversals),
    terminated: o.terminated,
    resolvedInterrupts: o.resolvedInterrupts.map((r) => resolvedOf(r)),
    errors: o.errors.map(errorOf),
    trace: o.trace.map(traceOf),
    mode: o.mode,
    completedStages: [...o.completedStages],
    skippedStages: [...o.skippedStages],
  };
  if (o.terminalReason !== undefined) out.terminalReason = o.terminalReason as TerminalReason;
  if (o.terminationReason !== undefined) out.terminationReason = o.terminationReason;
  if (o.interrupt !== undefined) out.interrupt = interruptOf(o.interrupt);
  if (o.droppedTraceEntries !== undefined && o.droppedTraceEntries > 0) out.droppedTraceEntries = o.droppedTraceEntries;
  return orderEnvelopeKeys(out);
}

type ParsedInterrupt = z.output<typeof interruptSchema>;

function interruptOf(i: ParsedInterrupt): Interrupt {
  const out: Interrupt = { id: i.id, kind: i.kind as Interrupt['kind'], stage: i.stage, createdAt: '' };
  if (i.payload !== undefined) out.payload = frozenCopy(i.payload);
  out.createdAt = i.createdAt;
  if (i.expiresAt !== undefined) out.expiresAt = i.expiresAt;
  return out;
}

function resolvedOf(r: z.output<typeof resolvedSchema>): ResolvedInterrupt {
  return { ...interruptOf(r), response: frozenCopy(r.response), resolvedAt: r.resolvedAt };
}

function errorOf(e: z.output<typeof errorSchema>): StageErrorRecord {
  const out: StageErrorRecord = { stage: e.stage, error: e.error, at: e.at };
  if (e.code !== undefined) out.code = e.code;
  return out;
}

function traceOf(t: z.output<typeof traceSchema>): TraceEntry {
  return Object.freeze({ stage: t.stage, startedAt: t.startedAt, endedAt: t.endedAt, next: t.next });
}
