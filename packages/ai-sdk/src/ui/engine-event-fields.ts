import { describeValue, type ToolCall } from '@signalyard/core';
import { isRecord } from '@signalyard/core/internal';

/** A plain object's own fields, or `undefined`. @internal */
export function asRecord(value: unknown): Readonly<Record<string, unknown>> | undefined {
  return isRecord(value) ? value : undefined;
}

/** `value` when it is a string, else `undefined`. @internal */
export function asString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** A `ToolCall` (`{ id, name, arguments }`) read from an engine event; `undefined` when `value` is not one. @internal */
export function readToolCall(value: unknown): ToolCall | undefined {
  const call = asRecord(value);
  if (call === undefined) return undefined;
  const { id, name } = call;
  if (typeof id !== 'string' || id === '' || typeof name !== 'string' || name === '') return undefined;
  return { id, name, arguments: call.arguments };
}

/**
 * The tool call a `tool_result` / `tool_start` event is about: the crew's `call`, or the flat
 * `toolCallId` + `name` (or `toolName`) fields. The name is `undefined` when the event has none.
 * @internal
 */
export function readEventCall(
  event: Readonly<Record<string, unknown>>,
): { id: string; name?: string; input: unknown } | undefined {
  const call = readToolCall(event.call);
  if (call !== undefined) return { id: call.id, name: call.name, input: call.arguments };
  const id = asString(event.toolCallId);
  if (id === undefined || id === '') return undefined;
  const name = asString(event.name) ?? asString(event.toolName);
  return name === undefined || name === '' ? { id, input: event.arguments } : { id, name, input: event.arguments };
}

/**
 * True when a tool result says the call was refused: a person or a policy denied it. The crew
 * answers such a call with a tool message whose content starts with `denied` (then `: <reason>`).
 * @internal
 */
export function isDeniedResult(result: unknown): boolean {
  const text = result instanceof Error ? result.message : result;
  return typeof text === 'string' && /^denied(?::|$)/.test(text);
}

/** The text a UI shows for a failed tool: an error's message (never its stack), a string as it is, else JSON. @internal */
export function errorText(result: unknown): string {
  if (result instanceof Error) return result.message;
  if (typeof result === 'string') return result;
  const message = asRecord(result)?.message;
  if (typeof message === 'string') return message;
  return jsonText(result) ?? describeValue(result);
}

/**
 * `value` as the JSON the UI message stream will carry: what `JSON.parse(JSON.stringify(value))`
 * gives (dates become strings, `undefined` fields disappear), so reading the stream directly
 * and reading it over HTTP give the same message. A value JSON cannot hold becomes text: a
 * bigint its digits, anything else (a cycle, a function) a short description.
 * @internal
 */
export function jsonSafe(value: unknown): unknown {
  if (value === undefined) return undefined;
  const text = jsonText(value);
  if (text !== undefined) return JSON.parse(text) as unknown;
  return typeof value === 'bigint' ? value.toString() : describeValue(value);
}

function jsonText(value: unknown): string | undefined {
  try {
    // undefined for undefined, functions and symbols, whatever the declared type says
    const text: string | undefined = JSON.stringify(value);
    return text;
  } catch {
    return undefined;
  }
}
