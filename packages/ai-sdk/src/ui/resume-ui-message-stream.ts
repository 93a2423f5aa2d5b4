import type { TurnEvent } from '@signalyard/core';
import { createUIMessageStreamResponse, type UIMessageChunk } from 'ai';
import { describeValue } from '@signalyard/core';
import { UIMessageError } from '../errors/ui-message-error.js';
import type { ToUIMessageStreamOptions } from './to-ui-message-stream.js';
import type { ToUIMessageStreamResponseInit } from './to-ui-message-stream-response.js';
import { uiMessageStreamOf } from './to-ui-message-stream.js';
import type { TurnChunkMapperOptions } from './turn-chunk-mapper.js';
import { readUIStreamOptions } from './ui-stream-options.js';

/**
 * What resuming needs of a Runner: `resumeStream({ sessionKey })`, which serves the session's
 * latest in-flight turn from the first event of its latest attempt and ends at once when nothing
 * is in flight. The `Runner` of `signalyard` has it (with a durable inbox its turns can be read
 * from any process: a web tier that only accepts, `worker: false`, resumes the turns its workers
 * apply).
 */
export interface TurnStreamResumer {
  /** The session's in-flight turn, from the first event of its latest attempt; no events when nothing is in flight. */
  resumeStream(ref: { sessionKey: string }): AsyncIterable<TurnEvent>;
}

const fail = (path: string, problem: string): UIMessageError =>
  new UIMessageError({ code: 'UI_STREAM_ARGUMENT_INVALID', path, problem });

/** Throws unless `runner` has a `resumeStream` method and `sessionKey` is a non-empty string. */
function assertResumeArguments(runner: unknown, sessionKey: unknown): asserts runner is TurnStreamResumer {
  const record = typeof runner === 'object' && runner !== null ? (runner as Record<string, unknown>) : undefined;
  if (typeof record?.resumeStream !== 'function') {
    throw fail(
      'runner',
      `expected a Runner (an object with resumeStream({ sessionKey })), got ${describeValue(runner)}`,
    );
  }
  if (typeof sessionKey !== 'string' || sessionKey === '') {
    throw fail('sessionKey', `expected the chat's session key, a non-empty string, got ${describeValue(sessionKey)}`);
  }
}

/**
 * The session's in-flight turn as the AI SDK's **UI message stream**, for the client's resume
 * (`useChat({ resume: true })`, `chat.resumeStream()`): the turn's latest attempt replayed from
 * its first event — `start`, everything it streamed so far, then the rest as it arrives — or
 * `undefined` when nothing is in flight (no turn of the session is being applied). The same
 * mapping as {@link toUIMessageStream}; a `restarted` event before anything else is skipped (the
 * replay starts from the new attempt anyway), a later one ends the stream without `finish` so
 * the client resumes again.
 *
 * Pass the same `messageId` the turn's first stream (the `POST`) sent, so the replay writes the
 * same assistant message instead of adding one; the AI SDK's default transport
 * (`resumeStreamIsReplay: true`) resets that message at the replay's `start`.
 *
 * Iterating the turn fails (e.g. the runner was closed): the returned promise rejects with that
 * error, before any chunk (answer it as a server error).
 *
 * @throws UIMessageError `UI_STREAM_ARGUMENT_INVALID` (at once, nothing read) when `runner` has
 * no `resumeStream`, `sessionKey` is not a non-empty string, or an option is bad or unknown.
 *
 * @example
 * ```ts
 * const stream = await resumeUIMessageStream(runner, sessionKey);
 * if (stream === undefined) console.log('nothing in flight');
 * else for await (const message of readUIMessageStream({ stream })) render(message);
 * ```
 */
export function resumeUIMessageStream(
  runner: TurnStreamResumer,
  sessionKey: string,
  opts?: ToUIMessageStreamOptions,
): Promise<ReadableStream<UIMessageChunk> | undefined> {
  assertResumeArguments(runner, sessionKey);
  return resumed(runner, sessionKey, readUIStreamOptions(opts, 'opts', true));
}

/**
 * The `GET` of a chat's active stream, the route the AI SDK's resumable transport calls
 * (`DefaultChatTransport` asks `GET {api}/{chatId}/stream` when `useChat({ resume: true })`
 * mounts or `chat.resumeStream()` runs), built on `runner.resumeStream({ sessionKey })`:
 *
 * - a turn of the session in flight → `200`, the UI message stream of
 *   {@link resumeUIMessageStream} (its latest attempt replayed from the start, then live), with
 *   the AI SDK's headers, as {@link toUIMessageStreamResponse} sends them;
 * - nothing in flight → `204 No Content`, which the client takes as "no stream to resume".
 *
 * The chat id is the session: map it to the session key the `POST` used (a web chat's DM key).
 * `init`'s `headers` apply to both answers, its `status` / `statusText` to the `200` only;
 * `messageId` should be the one the `POST` sent (see {@link resumeUIMessageStream}).
 *
 * @throws UIMessageError `UI_STREAM_ARGUMENT_INVALID` (at once, nothing read) for a `runner`
 * without `resumeStream`, an empty or non-string `sessionKey`, an `init` that is not an object,
 * or a bad `messageId` / `sendRouting` / `includeSignals`. The promise rejects with the turn's
 * own error when reading it fails before its first event.
 *
 * @example
 * ```ts
 * // app/api/chat/[id]/stream/route.ts (Next.js); the page uses useChat({ id, resume: true })
 * export async function GET(_request: Request, { params }: { params: Promise<{ id: string }> }) {
 *   const { id } = await params;
 *   return resumeUIMessageStreamResponse(runner, sessionKeyOfChat(id));
 * }
 * ```
 */
export function resumeUIMessageStreamResponse(
  runner: TurnStreamResumer,
  sessionKey: string,
  init?: ToUIMessageStreamResponseInit,
): Promise<Response> {
  assertResumeArguments(runner, sessionKey);
  const raw: unknown = init;
  if (raw !== undefined && (typeof raw !== 'object' || raw === null)) {
    throw fail('init', `expected a ResponseInit object, got ${describeValue(raw)}`);
  }
  const options = readUIStreamOptions(init, 'init', false);
  const {
    messageId: _messageId,
    sendRouting: _sendRouting,
    includeSignals: _includeSignals,
    ...responseInit
  } = init ?? {};
  return resumed(runner, sessionKey, options).then((stream) =>
    stream === undefined
      ? new Response(null, {
          status: 204,
          ...(responseInit.headers === undefined ? {} : { headers: responseInit.headers }),
        })
      : createUIMessageStreamResponse({ ...responseInit, stream }),
  );
}

/** Reads up to the turn's first event: `undefined` when there is none, else the UI stream from it. */
async function resumed(
  runner: TurnStreamResumer,
  sessionKey: string,
  options: TurnChunkMapperOptions,
): Promise<ReadableStream<UIMessageChunk> | undefined> {
  const iterator = runner.resumeStream({ sessionKey })[Symbol.asyncIterator]();
  let first: IteratorResult<TurnEvent>;
  do {
    first = await iterator.next();
    if (first.done === true) return undefined;
  } while ((first.value as { type?: unknown } | undefined)?.type === 'restarted');
  const rest = prepend(first.value, iterator);
  return uiMessageStreamOf({ [Symbol.asyncIterator]: () => rest }, options, rest);
}

/** `head`, then `iterator`'s events; `return()` reaches `iterator`. */
function prepend(head: TurnEvent, iterator: AsyncIterator<TurnEvent>): AsyncIterator<TurnEvent> {
  let pending: TurnEvent | undefined = head;
  const rest: AsyncIterator<TurnEvent> = {
    next: () => {
      if (pending === undefined) return iterator.next();
      const value = pending;
      pending = undefined;
      return Promise.resolve({ done: false, value });
    },
    return: () => {
      pending = undefined;
      return iterator.return?.() ?? Promise.resolve({ done: true, value: undefined });
    },
  };
  return rest;
}
