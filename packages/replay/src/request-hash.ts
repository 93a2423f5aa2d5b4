import { createHash } from 'node:crypto';
import type { ChatRequest } from '@signalyard/core';

/**
 * `value` as canonical JSON: object keys sorted (code-unit order), no whitespace, `undefined`
 * members left out (as `JSON.stringify` does), so equal values give equal text whatever order
 * their keys were written in.
 */
export function canonicalJson(value: unknown): string {
  const text: unknown = JSON.stringify(sorted(value)); // undefined for undefined, functions, symbols
  return typeof text === 'string' ? text : 'null';
}

function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (typeof value !== 'object' || value === null) return value;
  const withJson = value as { toJSON?: unknown };
  if (typeof withJson.toJSON === 'function') return sorted((withJson.toJSON as () => unknown).call(value));
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(value).sort()) {
    const v = (value as Record<string, unknown>)[key];
    if (v !== undefined) Object.defineProperty(out, key, { value: sorted(v), enumerable: true });
  }
  return out;
}

/**
 * The hash a recorder cassette keeps of a model request: hex SHA-256 of the canonical JSON of
 * its agent, messages and tools — volatile values left out (tool call ids and the `toolCallId`
 * of tool messages, which a model or a run may draw afresh; the abort signal). Two requests that
 * differ only there hash alike; an edited prompt, a changed tool list or different history does not.
 */
export function requestHash(request: ChatRequest): string {
  const messages = request.messages.map((m) => ({
    role: m.role,
    content: m.content,
    name: m.name,
    toolCalls: m.toolCalls?.map((c) => ({ name: c.name, arguments: c.arguments })),
  }));
  const tools = request.tools?.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters }));
  return createHash('sha256')
    .update(canonicalJson({ agentId: request.agentId, messages, tools }))
    .digest('hex');
}
