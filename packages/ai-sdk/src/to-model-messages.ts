import { describeValue, type ChatMessage } from '@signalyard/core';
import { isRecord as isObject } from '@signalyard/core/internal';
import type { ModelMessage, ToolCallPart } from 'ai';
import { ModelRequestError } from './errors/model-request-error.js';

const ROLES: ReadonlySet<string> = new Set(['system', 'user', 'assistant', 'tool']);

const fail = (path: string, problem: string): ModelRequestError => new ModelRequestError({ path, problem });

const idList = (ids: Iterable<string>): string => [...ids].map((id) => JSON.stringify(id)).join(', ');

/**
 * Maps Signalyard chat messages to AI SDK `ModelMessage`s, one for one and in order:
 *
 * - `system` and `user` → the same role with the text as content;
 * - `assistant` → text content, or — with `toolCalls` — a text part (when the text is not empty)
 *   followed by one `tool-call` part per call (`{ toolCallId, toolName, input }`);
 * - `tool` → one `tool-result` part answering `toolCallId`, with the tool name taken from the
 *   assistant message that made the call and the text as `{ type: 'text', value }` output.
 *
 * `name` has no AI SDK counterpart and is not sent.
 *
 * @throws ModelRequestError `MODEL_REQUEST_INVALID` for an empty or malformed list, a `tool`
 * message answering an unknown call id, or a tool call left unanswered before the next `user` or
 * `system` message or the end of the list (the AI SDK would reject those prompts).
 * @internal
 */
export function toModelMessages(messages: unknown): ModelMessage[] {
  if (!Array.isArray(messages))
    throw fail('messages', `expected a list of ChatMessages, got ${describeValue(messages)}`);
  if (messages.length === 0) throw fail('messages', 'expected at least one message, got an empty list');
  const out: ModelMessage[] = new Array<ModelMessage>(messages.length);
  // Calls made by assistant messages so far: call id → tool name, for the tool messages answering them.
  const calls = new Map<string, string>();
  // Calls not answered yet: call id → the path of the assistant message that made it.
  const pending = new Map<string, string>();
  for (let i = 0; i < messages.length; i++) {
    const path = `messages[${i}]`;
    const m: unknown = messages[i];
    if (!isObject(m)) throw fail(path, `expected a ChatMessage ({ role, content }), got ${describeValue(m)}`);
    const { role, content, toolCalls, toolCallId } = m as Partial<Record<keyof ChatMessage, unknown>>;
    if (typeof role !== 'string' || !ROLES.has(role)) {
      throw fail(`${path}.role`, `expected "system", "user", "assistant" or "tool", got ${describeValue(role)}`);
    }
    if (typeof content !== 'string') throw fail(`${path}.content`, `expected a string, got ${describeValue(content)}`);
    if (toolCalls !== undefined && role !== 'assistant') {
      throw fail(
        `${path}.toolCalls`,
        `only assistant messages carry tool calls, but this message's role is ${JSON.stringify(role)}`,
      );
    }
    if (toolCallId !== undefined && role !== 'tool') {
      throw fail(
        `${path}.toolCallId`,
        `only tool messages carry a toolCallId, but this message's role is ${JSON.stringify(role)}`,
      );
    }
    if ((role === 'user' || role === 'system') && pending.size > 0) throw unanswered(pending, path);
    switch (role) {
      case 'system':
        out[i] = { role: 'system', content };
        break;
      case 'user':
        out[i] = { role: 'user', content };
        break;
      case 'assistant':
        out[i] = assistantMessage(content, toolCalls, path, calls, pending);
        break;
      default: {
        if (typeof toolCallId !== 'string' || toolCallId === '') {
          throw fail(
            `${path}.toolCallId`,
            `a tool message must name the call it answers: expected a non-empty string, got ${describeValue(toolCallId)}`,
          );
        }
        const toolName = calls.get(toolCallId);
        if (toolName === undefined) {
          const known =
            calls.size === 0
              ? 'no earlier assistant message made a tool call'
              : `the calls made so far are ${idList(calls.keys())}`;
          throw fail(`${path}.toolCallId`, `answers unknown tool call ${JSON.stringify(toolCallId)}: ${known}`);
        }
        pending.delete(toolCallId);
        out[i] = {
          role: 'tool',
          content: [{ type: 'tool-result', toolCallId, toolName, output: { type: 'text', value: content } }],
        };
      }
    }
  }
  if (pending.size > 0) throw unanswered(pending, undefined);
  return out;
}

function assistantMessage(
  content: string,
  toolCalls: unknown,
  path: string,
  calls: Map<string, string>,
  pending: Map<string, string>,
): ModelMessage {
  if (toolCalls === undefined) return { role: 'assistant', content };
  if (!Array.isArray(toolCalls))
    throw fail(`${path}.toolCalls`, `expected a list of ToolCalls, got ${describeValue(toolCalls)}`);
  if (toolCalls.length === 0) return { role: 'assistant', content };
  const parts: (ToolCallPart | { type: 'text'; text: string })[] = [];
  if (content !== '') parts.push({ type: 'text', text: content });
  for (let j = 0; j < toolCalls.length; j++) {
    const callPath = `${path}.toolCalls[${j}]`;
    const call: unknown = toolCalls[j];
    if (!isObject(call))
      throw fail(callPath, `expected a ToolCall ({ id, name, arguments }), got ${describeValue(call)}`);
    const { id, name } = call;
    if (typeof id !== 'string' || id === '')
      throw fail(`${callPath}.id`, `expected a non-empty string, got ${describeValue(id)}`);
    if (typeof name !== 'string' || name === '')
      throw fail(`${callPath}.name`, `expected a non-empty string, got ${describeValue(name)}`);
    calls.set(id, name);
    pending.set(id, callPath);
    parts.push({ type: 'tool-call', toolCallId: id, toolName: name, input: call.arguments });
  }
  return { role: 'assistant', content: parts };
}

function unanswered(pending: ReadonlyMap<string, string>, before: string | undefined): ModelRequestError {
  const [first] = pending.values();
  return fail(
    first ?? '',
    `tool call${pending.size === 1 ? '' : 's'} ${idList(pending.keys())} ${pending.size === 1 ? 'is' : 'are'} not answered by a tool message ${
      before === undefined ? 'before the end of the messages' : `before ${before}`
    }: every tool call needs its result before the conversation goes on`,
  );
}
