import { describeValue, type ChatMessage, type ToolCall } from '@signalyard/core';
import { errorCode, errorText } from '@signalyard/core/internal';

/**
 * The messages of one model request: the agent's `system` message (when it has one), then the
 * last `max` messages of `history`, moved forward past any leading `tool` messages so that a
 * tool result is never sent without the assistant message that asked for it — or, when that
 * would leave no message at all, moved back to keep the last tool-call group whole. (An
 * assistant message with tool calls is always followed by its results, so keeping the window's
 * start off a `tool` message is enough.) One array allocated: the one returned.
 * @internal
 */
export function requestMessages(
  history: readonly ChatMessage[],
  max: number,
  system: ChatMessage | undefined,
): ChatMessage[] {
  const length = history.length;
  const cut = length > max ? length - max : 0;
  let start = cut;
  if (start > 0) while (start < length && (history[start] as ChatMessage).role === 'tool') start++;
  if (start === length && cut > 0) {
    // Only tool results would be left: keep the whole last tool-call group instead (a little
    // over `max`), so the model sees the results it asked for with the call that asked.
    start = cut;
    while (start > 0 && (history[start] as ChatMessage).role === 'tool') start--;
  }
  const offset = system === undefined ? 0 : 1;
  const out = new Array<ChatMessage>(length - start + offset);
  if (system !== undefined) out[0] = system;
  for (let i = start; i < length; i++) out[i - start + offset] = history[i] as ChatMessage;
  return out;
}

/**
 * The one `user` message holding a parallel group's results: each succeeded member's content
 * labelled with its agent id (`student: …`), in group-declaration order, separated by a blank
 * line.
 * @internal
 */
export function aggregateResults(results: readonly { readonly agentId: string; readonly content: string }[]): string {
  let out = '';
  for (let i = 0; i < results.length; i++) {
    const r = results[i] as { readonly agentId: string; readonly content: string };
    out += `${i === 0 ? '' : '\n\n'}${r.agentId}: ${r.content}`;
  }
  return out;
}

/**
 * The content of a `tool` message answering a tool that returned `result`: a string as it is, a
 * bigint in decimal, anything else as JSON (`String(result)` where JSON has no text: undefined,
 * functions, symbols). A result with no text either way (a cycle, a BigInt inside an object, a
 * throwing `toJSON` or getter, a null-prototype object JSON skips) gives `{ problem }`, the reason.
 * @internal
 */
export function toolResultContent(result: unknown): string | { readonly problem: string } {
  if (typeof result === 'string') return result;
  if (typeof result === 'bigint') return result.toString();
  try {
    const json = JSON.stringify(result) as string | undefined; // undefined for undefined, functions, symbols
    return json ?? String(result);
  } catch (error) {
    return { problem: errorText(error) };
  }
}

/**
 * The content of a `tool` message answering a tool that failed with `error`: `Error: <message>`;
 * for an MCP call whose connection dropped mid-call on a tool that is not safe to repeat
 * (`MCP_OUTCOME_UNKNOWN`), the bare `outcome unknown: not retried` the crew sends for a claimed
 * call it will not run again (approvals.md's rule), so the model reads one phrase for one case.
 * @internal
 */
export function toolErrorContent(error: unknown): string {
  if (errorCode(error) === 'MCP_OUTCOME_UNKNOWN') return OUTCOME_UNKNOWN_TEXT;
  const message = errorText(error);
  return `Error: ${message}`;
}

/** What the model is told of a call that may or may not have run and is not run again. @internal */
export const OUTCOME_UNKNOWN_TEXT = 'outcome unknown: not retried';

/** A `tool` message answering `call`. @internal */
export function toolMessage(call: ToolCall, content: string): ChatMessage {
  return { role: 'tool', content, toolCallId: call.id };
}

const ROLES: ReadonlySet<string> = new Set(['system', 'user', 'assistant', 'tool']);

/**
 * Why `value` is not a usable `ChatMessage` (`undefined` when it is): the role must be one of
 * the four, `content` a string, `name` / `toolCallId` strings when present, `toolCalls` a list
 * of `{ id, name }` with string fields when present.
 * @internal
 */
export function messageProblem(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return `expected a ChatMessage object, got ${describeValue(value)}`;
  const m = value as Readonly<Record<string, unknown>>;
  if (typeof m.role !== 'string' || !ROLES.has(m.role))
    return `invalid role ${describeValue(m.role)}: expected "system", "user", "assistant" or "tool"`;
  if (typeof m.content !== 'string') return `invalid content ${describeValue(m.content)}: expected a string`;
  if (m.name !== undefined && typeof m.name !== 'string')
    return `invalid name ${describeValue(m.name)}: expected a string`;
  if (m.toolCallId !== undefined && typeof m.toolCallId !== 'string')
    return `invalid toolCallId ${describeValue(m.toolCallId)}: expected a string`;
  if (m.toolCalls !== undefined) return toolCallsProblem(m.toolCalls);
  return undefined;
}

/** Why `value` is not a list of tool calls (`undefined` when it is). @internal */
export function toolCallsProblem(value: unknown): string | undefined {
  if (!Array.isArray(value))
    return `invalid toolCalls ${describeValue(value)}: expected a list of { id, name, arguments }`;
  for (let i = 0; i < value.length; i++) {
    const call: unknown = value[i];
    if (typeof call !== 'object' || call === null)
      return `invalid tool call ${describeValue(call)} at toolCalls[${i}]: expected { id, name, arguments }`;
    const c = call as Readonly<Record<string, unknown>>;
    if (typeof c.id !== 'string' || c.id === '')
      return `invalid tool call id ${describeValue(c.id)} at toolCalls[${i}]: expected a non-empty string`;
    if (typeof c.name !== 'string')
      return `invalid tool name ${describeValue(c.name)} at toolCalls[${i}]: expected a string`;
  }
  return undefined;
}
