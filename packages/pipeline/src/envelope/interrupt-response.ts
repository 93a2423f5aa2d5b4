import { describeValue } from '@signalyard/core';
import { frozenCopy } from '@signalyard/core/internal';
import * as z from 'zod';
import { PipelineUsageError } from '../errors/pipeline-usage-error.js';
import { messageOf } from '../shared/error-message.js';
import { formatPath, parseWithSchema } from '../shared/schema-problem.js';
import type { InterruptResponse } from './interrupt.js';

/** The fields of an {@link InterruptResponse} and what each must be (any other key is kept as is). @internal */
const RESPONSE_FIELDS = {
  text: 'a string',
  approved: 'a boolean',
  decision: 'a string',
} as const;

const expected = (text: string): { error: () => string } => ({ error: () => text });

/**
 * An interrupt response: an object whose `text` and `decision` are strings and `approved` a
 * boolean when present; `data` and any other key may hold anything. Each issue's message is
 * what was expected (callers name the path and value). @internal
 */
export const interruptResponseSchema: z.ZodType<InterruptResponse> = z.looseObject(
  {
    text: z.string(expected(RESPONSE_FIELDS.text)).optional(),
    approved: z.boolean(expected(RESPONSE_FIELDS.approved)).optional(),
    decision: z.string(expected(RESPONSE_FIELDS.decision)).optional(),
    data: z.unknown().optional(),
  },
  expected('an object { text?, approved?, decision?, data? }'),
);

/**
 * Validates the answer given to `resume`: a deep, frozen copy of it, so later changes by the
 * caller never reach the envelope (and the stage that reads it cannot change it).
 *
 * @throws PipelineUsageError `PIPELINE_ARGUMENT_INVALID` naming the bad field (`response.approved`) and value.
 * @internal
 */
export function parseResponseArgument(value: unknown, path: string): InterruptResponse {
  const parsed = parseWithSchema(interruptResponseSchema, value);
  if (!parsed.ok) {
    const at = formatPath(path, parsed.problem.path);
    throw new PipelineUsageError({
      code: 'PIPELINE_ARGUMENT_INVALID',
      argument: at,
      message: `Invalid ${at} ${describeValue(parsed.problem.input)}: expected ${parsed.problem.message}`,
    });
  }
  try {
    return frozenCopy(parsed.value);
  } catch (error) {
    throw new PipelineUsageError({
      code: 'PIPELINE_ARGUMENT_INVALID',
      argument: path,
      message: `Invalid ${path}: copying it threw: ${messageOf(error)}`,
    });
  }
}
