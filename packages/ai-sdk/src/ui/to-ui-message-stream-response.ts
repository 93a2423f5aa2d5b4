import type { TurnEvent } from '@signalyard/core';
import { createUIMessageStreamResponse } from 'ai';
import { describeValue } from '@signalyard/core';
import { UIMessageError } from '../errors/ui-message-error.js';
import type { ToUIMessageStreamOptions } from './to-ui-message-stream.js';
import { uiMessageStreamOf } from './to-ui-message-stream.js';
import { assertTurn, readUIStreamOptions } from './ui-stream-options.js';

/** The init of {@link toUIMessageStreamResponse}: a `ResponseInit` plus the stream's options. */
export type ToUIMessageStreamResponseInit = ResponseInit & ToUIMessageStreamOptions;

/**
 * A `Response` streaming a turn to the AI SDK client as Server-Sent Events — the UI message
 * stream of {@link toUIMessageStream}, sent with the AI SDK's own helper
 * (`createUIMessageStreamResponse`) and so with its headers (`content-type: text/event-stream`,
 * `x-vercel-ai-ui-message-stream: v1`, no caching or proxy buffering). `status`, `statusText`
 * and `headers` of `init` apply as in `new Response(body, init)`; headers you set win.
 *
 * Return it from any `fetch`-style handler (Next.js route handlers, Hono, Bun, Deno, …). When the
 * client disconnects, the body is cancelled and the turn is no longer read; the turn itself runs
 * to its end unless you pass an `abortSignal` to `runner.stream`.
 *
 * @throws UIMessageError `UI_STREAM_ARGUMENT_INVALID` (at once) when `turn` is not an async
 * iterable, `init` is not an object, or `messageId` / `sendRouting` / `includeSignals` is bad.
 *
 * @example
 * ```ts
 * // app/api/chat/route.ts (Next.js): the browser uses `useChat()` from '@ai-sdk/react'
 * export async function POST(request: Request): Promise<Response> {
 *   const { id, messages } = await request.json();
 *   const text = messages.at(-1).parts.filter((p) => p.type === 'text').map((p) => p.text).join('');
 *   return toUIMessageStreamResponse(runner.stream({ channel: 'web', peer: { kind: 'dm', id }, text }));
 * }
 * ```
 */
export function toUIMessageStreamResponse(
  turn: AsyncIterable<TurnEvent>,
  init?: ToUIMessageStreamResponseInit,
): Response {
  assertTurn(turn);
  const raw: unknown = init;
  if (raw !== undefined && (typeof raw !== 'object' || raw === null)) {
    throw new UIMessageError({
      code: 'UI_STREAM_ARGUMENT_INVALID',
      path: 'init',
      problem: `expected a ResponseInit object, got ${describeValue(raw)}`,
    });
  }
  const options = readUIStreamOptions(init, 'init', false);
  const {
    messageId: _messageId,
    sendRouting: _sendRouting,
    includeSignals: _includeSignals,
    ...responseInit
  } = init ?? {};
  return createUIMessageStreamResponse({ ...responseInit, stream: uiMessageStreamOf(turn, options) });
}
