import { safeParseAsync, toJSONSchema, type $ZodIssue, type $ZodType, type output } from 'zod/v4/core';
import { InvalidArgumentError } from './errors/invalid-argument-error.js';
import { ToolArgumentsError } from './errors/tool-arguments-error.js';
import type { Tool, ToolContext } from './model.js';
import { describeValue } from './signal.js';

/**
 * What {@link defineTool} takes: a name, a zod schema for the arguments, and the function that
 * runs on arguments that passed it.
 */
export interface ToolDefinition<S extends $ZodType> {
  /** The name the model calls the tool by (and a crew agent's `tools` list names). */
  readonly name: string;
  /** Shown to the model. A `.describe()` on the schema's fields documents each argument. */
  readonly description?: string;
  /** The arguments' schema (zod 4, classic or mini). Becomes the tool's JSON Schema `parameters`. */
  readonly input: S;
  /** Runs the tool on validated (and transformed) arguments. */
  execute(args: output<S>, ctx: ToolContext): Promise<unknown>;
  /**
   * Whether a call must be approved by a person before it runs (see `decideApproval`): a flag,
   * or a function of the validated (and transformed) arguments. Arguments that fail the schema
   * need no approval (the call is answered with `TOOL_ARGUMENTS_INVALID` without running).
   */
  readonly needsApproval?: boolean | ((args: output<S>, ctx: ToolContext) => boolean | Promise<boolean>);
}

function formatIssuePath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const seg of path) {
    if (typeof seg === 'number') out += `[${seg}]`;
    else if (typeof seg === 'string' && /^[A-Za-z_$][\w$]*$/.test(seg)) out += out === '' ? seg : `.${seg}`;
    else out += `[${JSON.stringify(String(seg))}]`;
  }
  return out;
}

function definitionError(message: string, cause?: unknown): InvalidArgumentError {
  return new InvalidArgumentError({ code: 'TOOL_DEFINITION_INVALID', message, cause });
}

/**
 * Makes a {@link Tool} from a zod schema: `parameters` is `z.toJSONSchema(input)` (for a schema
 * with `.transform()`s, which that cannot express, its input side), and arguments are validated
 * with the schema before `execute` runs.
 *
 * A call whose arguments fail validation is not thrown at the engine: the tool's `execute`
 * rejects with {@link ToolArgumentsError} (`TOOL_ARGUMENTS_INVALID`) naming every problem, and
 * the engine answers the model with that message as a tool error (`isError: true`), so the
 * model can retry. A hand-written `Tool` receives its arguments unvalidated.
 *
 * `needsApproval` passes through to the tool (a function receives the validated arguments; for
 * arguments the schema rejects it is not called, and the call needs no approval: it will fail
 * validation without running).
 *
 * @throws InvalidArgumentError `TOOL_DEFINITION_INVALID` when `name` is not a non-empty string,
 * `input` is not a zod schema, `execute` is not a function, `needsApproval` is neither a boolean
 * nor a function, or the schema has no JSON Schema form (e.g. `z.date()`, `z.bigint()`).
 *
 * @example
 * ```ts
 * import * as z from 'zod';
 * const lookup = defineTool({
 *   name: 'lookup',
 *   description: 'Look a word up in the glossary',
 *   input: z.object({ word: z.string().describe('the word'), limit: z.number().int().max(10).default(3) }),
 *   execute: async ({ word, limit }) => glossary.find(word, limit),   // word: string, limit: number
 * });
 * lookup.parameters;   // { type: 'object', properties: { word: …, limit: … }, required: ['word'], … }
 * ```
 */
export function defineTool<S extends $ZodType>(def: ToolDefinition<S>): Tool {
  const d: unknown = def;
  if (typeof d !== 'object' || d === null)
    throw definitionError(`Invalid tool definition ${describeValue(d)}: expected { name, input, execute }`);
  const { name, description, input, execute, needsApproval } = d as {
    readonly [K in keyof ToolDefinition<S>]?: unknown;
  };
  if (typeof name !== 'string' || name === '') {
    throw definitionError(`Invalid tool name ${describeValue(name)}: expected a non-empty string`);
  }
  if (typeof input !== 'object' || input === null || !('_zod' in input)) {
    throw definitionError(
      `Invalid input schema for tool ${JSON.stringify(name)}: expected a zod 4 schema, got ${describeValue(input)}`,
    );
  }
  if (typeof execute !== 'function') {
    throw definitionError(
      `Invalid execute for tool ${JSON.stringify(name)}: expected a function, got ${describeValue(execute)}`,
    );
  }
  if (description !== undefined && typeof description !== 'string') {
    throw definitionError(
      `Invalid description for tool ${JSON.stringify(name)}: expected a string, got ${describeValue(description)}`,
    );
  }
  if (needsApproval !== undefined && typeof needsApproval !== 'boolean' && typeof needsApproval !== 'function') {
    throw definitionError(
      `Invalid needsApproval for tool ${JSON.stringify(name)}: expected a boolean or a function, got ${describeValue(needsApproval)}`,
    );
  }
  let parameters: Record<string, unknown>;
  try {
    // What z.toJSONSchema(schema) gives; schemas it cannot express as output (transforms) are
    // described by their input side, which is what the model sends anyway.
    try {
      parameters = toJSONSchema(input as S);
    } catch {
      parameters = toJSONSchema(input as S, { io: 'input' });
    }
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw definitionError(`The input schema of tool ${JSON.stringify(name)} has no JSON Schema form: ${why}`, error);
  }
  const run = (execute as ToolDefinition<S>['execute']).bind(def);
  return Object.freeze({
    name,
    ...(description === undefined ? {} : { description }),
    parameters,
    ...(needsApproval === undefined ? {} : { needsApproval: approvalCheck(input as S, needsApproval, def) }),
    async execute(args: unknown, ctx: ToolContext): Promise<unknown> {
      const result = await safeParseAsync(input as S, args);
      if (!result.success) {
        const issues = result.error.issues.map((issue: $ZodIssue) => ({
          path: formatIssuePath(issue.path),
          message: issue.message,
        }));
        throw new ToolArgumentsError({ toolName: name, issues });
      }
      return run(result.data, ctx);
    },
  });
}

/** The tool's `needsApproval`: the flag itself, or the function called with validated arguments. */
function approvalCheck<S extends $ZodType>(
  input: S,
  needsApproval: unknown,
  def: ToolDefinition<S>,
): NonNullable<Tool['needsApproval']> {
  if (typeof needsApproval === 'boolean') return needsApproval;
  const decide = needsApproval as (args: output<S>, ctx: ToolContext) => boolean | Promise<boolean>;
  return async (args: unknown, ctx: ToolContext): Promise<boolean> => {
    const result = await safeParseAsync(input, args);
    if (!result.success) return false;
    return decide.call(def, result.data, ctx);
  };
}
