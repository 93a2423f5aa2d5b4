import { describeValue } from '@signalyard/core';
import { jsonSchema, tool, type JSONSchema7, type ToolSet } from 'ai';
import { ModelRequestError } from './errors/model-request-error.js';

const fail = (path: string, problem: string): ModelRequestError => new ModelRequestError({ path, problem });

/**
 * Maps Signalyard `ToolSpec`s to an AI SDK `ToolSet` keyed by name: each becomes
 * `tool({ description, inputSchema: jsonSchema(parameters) })` **without** `execute`, so the AI
 * SDK hands the model's tool calls back instead of running them (Signalyard runs tools itself,
 * validating their arguments). `undefined` or an empty list → `undefined` (no tools sent).
 *
 * @throws ModelRequestError `MODEL_REQUEST_INVALID` for a list that is not an array, a spec
 * without a non-empty string `name` or an object `parameters`, a non-string `description`, or two
 * specs with the same name.
 * @internal
 */
export function toAiSdkTools(tools: unknown): ToolSet | undefined {
  if (tools === undefined) return undefined;
  if (!Array.isArray(tools)) throw fail('tools', `expected a list of ToolSpecs, got ${describeValue(tools)}`);
  if (tools.length === 0) return undefined;
  const set: ToolSet = Object.create(null) as ToolSet;
  for (let i = 0; i < tools.length; i++) {
    const path = `tools[${i}]`;
    const spec: unknown = tools[i];
    if (typeof spec !== 'object' || spec === null)
      throw fail(path, `expected a ToolSpec ({ name, description?, parameters }), got ${describeValue(spec)}`);
    const { name, description, parameters } = spec as Record<string, unknown>;
    if (typeof name !== 'string' || name === '')
      throw fail(`${path}.name`, `expected a non-empty string, got ${describeValue(name)}`);
    if (Object.hasOwn(set, name))
      throw fail(
        `${path}.name`,
        `duplicate tool name ${JSON.stringify(name)}: each tool offered to a model needs its own name`,
      );
    if (description !== undefined && typeof description !== 'string') {
      throw fail(`${path}.description`, `expected a string, got ${describeValue(description)}`);
    }
    if (typeof parameters !== 'object' || parameters === null || Array.isArray(parameters)) {
      throw fail(`${path}.parameters`, `expected a JSON Schema object, got ${describeValue(parameters)}`);
    }
    set[name] = tool({
      ...(description === undefined ? {} : { description }),
      inputSchema: jsonSchema(parameters as JSONSchema7),
    });
  }
  return set;
}
