import type { TurnEvent } from '@signalyard/core';
import type { UIMessageChunk } from 'ai';
import { TurnChunkMapper, type TurnChunkMapperOptions } from './turn-chunk-mapper.js';
import { assertTurn, readUIStreamOptions } from './ui-stream-options.js';

/** Options of {@link toUIMessageStream}. */
export interface ToUIMessageStreamOptions {
  /**
   * The id of the assistant message the stream writes, sent with `start`. Pass the previous
   * turn's message id to continue that message — the turn that resumes after a tool approval.
   * Default: none (the AI SDK client assigns one).
   */
  readonly messageId?: string;
  /** Send the route decision as a `data-route` part. Default `true`. */
  readonly sendRouting?: boolean;
  /**
   * Put how each handoff was made (`via`) and the routing marker that made it (`signal`, e.g.
   * `[TO_BILLING]`) on its `data-handoff` part, for debugging views. Default `false`: a handoff
   * part is `{ from, to }` (plus `group` for a parallel group's members), with no marker text,
   * so a page that prints data parts as they are never shows one.
   */
  readonly includeSignals?: boolean;
}

/**
 * Turns the events of a streamed turn (`runner.stream(message)`, `streamDispatch`,
 * `streamApprove`) into the AI SDK 6 **UI message stream** that `useChat` / `Chat` and
 * `readUIMessageStream` read — one assistant message per turn:
 *
 * - `start` first (with `messageId` when given), `finish` last;
 * - text: each speaking agent's deltas form one `text-start` / `text-delta`… / `text-end` block
 *   with its own id, opened at the agent's first delta and closed when its reply ends, the
 *   speaker changes or the turn ends (an agent turn with no visible text opens no block).
 *   Members of a parallel group (and pipeline stages running at once) each keep their own block,
 *   so their deltas interleave. Routing markers never reach the text: the crew hides them.
 * - tools: every call of an `agent_response` (held ones too) → `tool-input-available`; its
 *   `tool_result` → `tool-output-available`, `tool-output-error` (the error's message), or
 *   `tool-output-denied` for a call a person or a policy denied; each pending approval of
 *   `approval_requested` → `tool-approval-request` with `approvalId` = the approval's `id`,
 *   after the call's `tool-input-available`;
 * - data parts (see {@link SignalyardUIDataTypes}): a handoff → `data-handoff` `{ from, to }`
 *   (plus `group` for a parallel group's members; with `includeSignals: true` also `via` and the
 *   marker, `signal`: never otherwise); the route decision → `data-route` `{ tier, routeName, action }`
 *   (unless `sendRouting: false`); outcome `rejected` → `data-rejected` `{ reason }`;
 * - outcome `failed` → an `error` chunk with the error's message (never a stack), then `finish`;
 * - `restarted` (with a durable inbox, the turn started over on another worker after the one
 *   applying it died or lost its lease) → the open text blocks end and the stream closes
 *   **without `finish`**: what it showed is void. A client that resumes then
 *   ({@link resumeUIMessageStreamResponse}, the AI SDK's `resumeStream()`) replays the new
 *   attempt from its start into the same message;
 * - if iterating `turn` throws (e.g. the runner was closed) → an `error` chunk with its
 *   message, and the stream closes.
 *
 * Events are read as the stream is read. Cancelling the stream (the browser went away) stops
 * reading `turn` — it calls the iterator's `return()`, which for a Runner's `TurnStream` does
 * not abort the turn (its `abortSignal` does).
 *
 * @throws UIMessageError `UI_STREAM_ARGUMENT_INVALID` (at once) when `turn` is not an async
 * iterable or an option is bad or unknown.
 *
 * @example
 * ```ts
 * import { readUIMessageStream } from 'ai';
 *
 * const stream = toUIMessageStream(runner.stream(message), { messageId: 'm1' });
 * for await (const uiMessage of readUIMessageStream({ stream })) render(uiMessage);
 * ```
 */
export function toUIMessageStream(
  turn: AsyncIterable<TurnEvent>,
  opts?: ToUIMessageStreamOptions,
): ReadableStream<UIMessageChunk> {
  assertTurn(turn);
  return uiMessageStreamOf(turn, readUIStreamOptions(opts, 'opts', true));
}

/**
 * The UI message stream of a checked turn and options; `started` is the turn's iterator when the
 * caller already read from it (a cancel then reaches it before the first pull). @internal
 */
export function uiMessageStreamOf(
  turn: AsyncIterable<TurnEvent>,
  options: TurnChunkMapperOptions,
  started?: AsyncIterator<TurnEvent>,
): ReadableStream<UIMessageChunk> {
  const mapper = new TurnChunkMapper(options);
  let iterator: AsyncIterator<TurnEvent> | undefined = started;
  let closed = false;
  // Read through a call: `cancel` may set it while `pull` awaits the turn.
  const isClosed = (): boolean => closed;

  const finish = (controller: ReadableStreamDefaultController<UIMessageChunk>, chunks: UIMessageChunk[]): void => {
    for (const chunk of chunks) controller.enqueue(chunk);
    closed = true;
    controller.close();
  };

  return new ReadableStream<UIMessageChunk>(
    {
      start(controller) {
        for (const chunk of mapper.start()) controller.enqueue(chunk);
      },
      async pull(controller) {
        // Reads events until one maps to at least one chunk, so every pull makes progress.
        while (!closed) {
          let result: IteratorResult<TurnEvent>;
          try {
            iterator ??= turn[Symbol.asyncIterator]();
            result = await iterator.next();
          } catch (error) {
            if (!isClosed()) finish(controller, mapper.fail(error));
            return;
          }
          if (isClosed()) return; // cancelled while waiting
          if (result.done === true) {
            finish(controller, mapper.end());
            return;
          }
          let chunks: UIMessageChunk[];
          try {
            chunks = mapper.next(result.value);
          } catch (error) {
            // Not expected (the mapper reads events defensively), but never leave the client hanging.
            finish(controller, mapper.fail(error));
            release(iterator);
            return;
          }
          if (mapper.done) {
            finish(controller, chunks);
            // The outcome is the last event: let the turn's iterator go.
            release(iterator);
            return;
          }
          if (chunks.length > 0) {
            for (const chunk of chunks) controller.enqueue(chunk);
            return;
          }
        }
      },
      cancel() {
        closed = true;
        // Stop reading the turn (an iterator never asked for has read nothing).
        if (iterator !== undefined) release(iterator);
      },
    },
    { highWaterMark: 0 },
  );
}

/**
 * Calls the iterator's `return()`, without waiting for it (a turn stuck in an `await` cannot hold
 * the caller) and ignoring a failure: the UI stream is closed, nobody is left to tell.
 */
function release(iterator: AsyncIterator<TurnEvent>): void {
  try {
    iterator.return?.().catch(() => undefined);
  } catch {
    // A return() that throws at once: nothing to do either.
  }
}
