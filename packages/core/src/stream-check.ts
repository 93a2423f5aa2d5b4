import { ModelStreamError } from './errors/model-stream-error.js';
import { jsonEqual } from './internal/json-equal.js';
import type { ChatResponse, ChatStreamPart, ToolCall } from './model.js';
import { describeValue } from './signal.js';

/** The `MODEL_STREAM_INVALID` error for a stream (of `agentId`'s request) that broke a rule. @internal */
export function streamInvalid(agentId: string | undefined, problem: string): ModelStreamError {
  const whose = agentId === undefined ? 'A model stream' : `The model stream of agent ${JSON.stringify(agentId)}`;
  return new ModelStreamError({
    message: `${whose} broke the ChatModel.stream rules: ${problem}`,
    ...(agentId === undefined ? {} : { agentId }),
  });
}

/** Why `call` is not a `ToolCall` (`{ id: string, name: non-empty string, arguments }`), or `undefined`. */
function toolCallProblem(call: unknown): string | undefined {
  if (typeof call !== 'object' || call === null) return 'expected a ToolCall { id, name, arguments }';
  const c = call as Partial<Record<keyof ToolCall, unknown>>;
  if (typeof c.id !== 'string') return `its id ${describeValue(c.id)} is not a string`;
  if (typeof c.name !== 'string' || c.name === '') return `its name ${describeValue(c.name)} is not a non-empty string`;
  return undefined;
}

/**
 * `reply` as a `ChatResponse` (`content` a string, `toolCalls` absent or a list of `ToolCall`s,
 * `usage` absent or an object), or a `MODEL_STREAM_INVALID` error naming what is wrong. @internal
 */
export function checkResponse(reply: unknown, agentId: string | undefined, where: string): ChatResponse {
  const fail = (problem: string): ModelStreamError =>
    streamInvalid(agentId, `${where} ${describeValue(reply)}: ${problem}`);
  if (typeof reply !== 'object' || reply === null)
    throw fail('expected a ChatResponse { content, toolCalls?, usage? }');
  const r = reply as Partial<Record<keyof ChatResponse, unknown>>;
  if (typeof r.content !== 'string') throw fail(`its content ${describeValue(r.content)} is not a string`);
  if (r.toolCalls !== undefined) {
    if (!Array.isArray(r.toolCalls)) throw fail(`its toolCalls ${describeValue(r.toolCalls)} are not an array`);
    const calls = r.toolCalls as readonly unknown[];
    for (let i = 0; i < calls.length; i++) {
      const problem = toolCallProblem(calls[i]);
      if (problem !== undefined) throw fail(`its toolCalls[${i}] ${describeValue(calls[i])}: ${problem}`);
    }
  }
  if (r.usage !== undefined && (typeof r.usage !== 'object' || r.usage === null)) {
    throw fail(`its usage ${describeValue(r.usage)} is not an object`);
  }
  return reply as ChatResponse;
}

/**
 * The rules of one model stream, checked part by part: each part well-formed, the text deltas
 * concatenating to `finish.response.content`, the tool calls equal to `finish.response.toolCalls`,
 * one `finish` and nothing after it, and no end without it. `finish` is held back until the end
 * is seen. @internal
 */
export class StreamCheck {
  readonly #agentId: string | undefined;
  #text = '';
  readonly #calls: ToolCall[] = [];
  #finish: ChatStreamPart | undefined = undefined;
  #index = 0;

  constructor(agentId: string | undefined) {
    this.#agentId = agentId;
  }

  /** The part to yield for the model's next part (`undefined`: none — an empty delta, or the held `finish`); throws on a broken rule. */
  accept(part: unknown): ChatStreamPart | undefined {
    const index = this.#index++;
    if (this.#finish !== undefined) {
      throw this.#invalid(`part ${index} ${describeValue(part)} came after the finish part (finish must be last)`);
    }
    const type = typeof part === 'object' && part !== null ? (part as { type?: unknown }).type : undefined;
    if (type === 'text-delta') return this.#delta(part as { delta?: unknown }, index);
    if (type === 'tool-call') return this.#toolCall(part as { call?: unknown }, index);
    if (type === 'finish') {
      const response = checkResponse(
        (part as { response?: unknown }).response,
        this.#agentId,
        `its finish part's response`,
      );
      this.#compare(response);
      this.#finish = part as ChatStreamPart;
      return undefined;
    }
    throw this.#invalid(
      `part ${index} ${describeValue(part)} is not a stream part: expected { type: 'text-delta', delta } | { type: 'tool-call', call } | { type: 'finish', response }`,
    );
  }

  /** The held `finish` part, once the model's stream has ended; throws when there was none. */
  end(): ChatStreamPart {
    if (this.#finish === undefined) {
      throw this.#invalid(`it ended after ${this.#index} part${this.#index === 1 ? '' : 's'} without a finish part`);
    }
    return this.#finish;
  }

  #delta(part: { delta?: unknown }, index: number): ChatStreamPart | undefined {
    const delta = part.delta;
    if (typeof delta !== 'string') {
      throw this.#invalid(`text-delta part ${index} has delta ${describeValue(delta)}: expected a string`);
    }
    if (delta === '') return undefined;
    this.#text += delta;
    return part as ChatStreamPart;
  }

  #toolCall(part: { call?: unknown }, index: number): ChatStreamPart {
    const problem = toolCallProblem(part.call);
    if (problem !== undefined) {
      throw this.#invalid(`tool-call part ${index} has call ${describeValue(part.call)}: ${problem}`);
    }
    this.#calls.push(part.call as ToolCall);
    return part as ChatStreamPart;
  }

  #compare(response: ChatResponse): void {
    if (response.content !== this.#text) {
      throw this.#invalid(
        `the text deltas concatenate to ${describeValue(this.#text)} (${this.#text.length} code units), but finish.response.content is ${describeValue(response.content)} (${response.content.length} code units)`,
      );
    }
    const calls = response.toolCalls ?? [];
    const streamed = this.#calls;
    if (calls.length !== streamed.length) {
      throw this.#invalid(
        `${streamed.length} tool-call part${streamed.length === 1 ? '' : 's'} streamed, but finish.response.toolCalls holds ${calls.length}`,
      );
    }
    for (let i = 0; i < calls.length; i++) {
      const a = streamed[i] as ToolCall;
      const b = calls[i] as ToolCall;
      if (a.id !== b.id || a.name !== b.name || !jsonEqual(a.arguments, b.arguments)) {
        throw this.#invalid(
          `tool call ${i} differs: streamed ${describeValue(a)}, but finish.response.toolCalls[${i}] is ${describeValue(b)} (expected the same id, name and arguments, in the same order)`,
        );
      }
    }
  }

  #invalid(problem: string): ModelStreamError {
    return streamInvalid(this.#agentId, problem);
  }
}
