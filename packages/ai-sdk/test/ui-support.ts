import type { Outcome, PendingApproval, ToolCall, TurnEvent } from '@signalyard/core';
import { deferred } from './support.js';
import {
  AbstractChat,
  readUIMessageStream,
  type ChatInit,
  type ChatState,
  type ChatStatus,
  type UIMessage,
  type UIMessageChunk,
} from 'ai';

/** A turn that yields `events` in order, recording whether its iterator was closed with `return()`. */
export function turnOf(
  events: readonly TurnEvent[],
): AsyncIterable<TurnEvent> & { returned: () => boolean; whenReturned: Promise<void>; read: () => number } {
  let returned = false;
  let read = 0;
  const whenReturned = deferred<undefined>();
  return {
    returned: () => returned,
    whenReturned: whenReturned.promise,
    read: () => read,
    [Symbol.asyncIterator]() {
      let i = 0;
      return {
        next: async () => {
          if (returned || i >= events.length) return { done: true, value: undefined };
          read++;
          return { done: false, value: events[i++]! };
        },
        return: async () => {
          returned = true;
          whenReturned.resolve(undefined);
          return { done: true, value: undefined };
        },
      };
    },
  };
}

/** A crew agent's visible text delta, as the Runner streams it. */
export const delta = (crewAgentId: string, text: string, path?: readonly string[]): TurnEvent => ({
  type: 'text_delta',
  agentId: 'support',
  delta: text,
  source: path === undefined ? { crewAgentId } : { crewAgentId, path },
});

/** An engine event, as the Runner forwards it. */
export const engine = (event: { type: string } & Record<string, unknown>): TurnEvent => ({
  type: 'engine_event',
  event,
});

export const agentResponse = (agentId: string, content: string, toolCalls?: readonly ToolCall[]): TurnEvent =>
  engine(
    toolCalls === undefined
      ? { type: 'agent_response', agentId, content }
      : { type: 'agent_response', agentId, content, toolCalls },
  );

export const handoff = (from: string, to: string, signal: string): TurnEvent =>
  engine({ type: 'handoff', from, to, via: 'signal', signal, handoffs: 1 });

export const routed: TurnEvent = {
  type: 'routed',
  sessionKey: 'agent:support:web:dm:42',
  agentId: 'support',
  action: { type: 'continue' },
  tier: 'agent',
  routeName: 'chat',
};

export function outcome(status: Outcome['status'], extra: Partial<Outcome> = {}): TurnEvent {
  return {
    type: 'outcome',
    outcome: {
      sessionKey: 'agent:support:web:dm:42',
      agentId: 'support',
      action: { type: 'continue' },
      decidedBy: undefined,
      status,
      ...extra,
    },
  };
}

export function pendingApproval(id: string, call: ToolCall, agentId = 'clerk'): PendingApproval {
  return {
    id,
    toolCallId: call.id,
    toolName: call.name,
    arguments: call.arguments,
    agentId,
    requestedAt: '2025-01-01T00:00:00.000Z',
  };
}

/** Every chunk of a UI message stream, in order. */
export async function chunksOf(stream: ReadableStream<UIMessageChunk>): Promise<UIMessageChunk[]> {
  const out: UIMessageChunk[] = [];
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return out;
    out.push(value);
  }
}

/**
 * Reads a UI message stream with the AI SDK's own `readUIMessageStream`: the last message state
 * and the errors it reported (`error` chunks and stream problems).
 */
export async function readMessage(
  stream: ReadableStream<UIMessageChunk>,
  message?: UIMessage,
): Promise<{ message: UIMessage | undefined; errors: Error[] }> {
  const errors: Error[] = [];
  let last: UIMessage | undefined;
  for await (const state of readUIMessageStream({
    stream,
    ...(message === undefined ? {} : { message }),
    onError: (error) => errors.push(error as Error),
  })) {
    last = state;
  }
  return { message: last, errors };
}

/** The texts of a message's text parts. */
export const texts = (message: UIMessage | undefined): string[] =>
  (message?.parts ?? []).flatMap((p) => (p.type === 'text' ? [p.text] : []));

/** The AI SDK's client (`useChat` / `Chat` without a UI framework), keeping its state in plain fields. */
export class TestChat extends AbstractChat<UIMessage> {
  constructor({ messages = [], ...init }: ChatInit<UIMessage>) {
    const state = new ArrayChatState();
    state.messages = [...messages];
    super({ ...init, state });
  }
}

class ArrayChatState implements ChatState<UIMessage> {
  status: ChatStatus = 'ready';
  error: Error | undefined = undefined;
  messages: UIMessage[] = [];
  pushMessage = (message: UIMessage): void => {
    this.messages = [...this.messages, message];
  };
  popMessage = (): void => {
    this.messages = this.messages.slice(0, -1);
  };
  replaceMessage = (index: number, message: UIMessage): void => {
    this.messages = [...this.messages.slice(0, index), message, ...this.messages.slice(index + 1)];
  };
  snapshot = <T>(thing: T): T => structuredClone(thing);
}
