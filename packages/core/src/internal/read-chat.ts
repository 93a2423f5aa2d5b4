import type { ChatModel, ChatRequest, ChatStreamPart } from '../model.js';
import { checkModel, checkRequest } from '../stream-chat.js';
import { checkResponse } from '../stream-check.js';
import { throwIfAborted } from './abort.js';
import { untilAborted, type AbortRace } from './abort-race.js';
import { CheckedStream } from './checked-stream.js';

/**
 * Reads one model reply as `streamChat(model, request)` yields it — the same parts, checked by
 * the same rules, the same errors, abort and closing of the model's stream — handing each part
 * to `onPart` as soon as it is accepted instead of through an async iterator, so a part costs
 * no promise or microtask hop beyond the model's own. Resolves once `finish` was handed over;
 * rejects as the pending `next()` of `streamChat` would, or with what `onPart` throws (the
 * model's stream is then closed, as when a reader stops early).
 *
 * `race`: an `AbortRace` on `request.abortSignal` (a run keeps one for all its model calls),
 * through which the read listens for the abort instead of with a listener of its own.
 *
 * @throws InvalidArgumentError `CHAT_MODEL_INVALID` / `CHAT_REQUEST_INVALID` (as a rejection),
 * as `streamChat` does.
 */
export function readChatStream(
  model: ChatModel,
  request: ChatRequest,
  onPart: (part: ChatStreamPart) => void,
  race?: AbortRace,
): Promise<void> {
  try {
    checkModel(model);
    checkRequest(request);
  } catch (error) {
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- a thrown value passes through unchanged
    return Promise.reject(error);
  }
  if (model.stream === undefined) return readGenerated(model, request, onPart);
  return new CheckedStream(model, request, race).readAll(onPart);
}

/** A model without `stream`: its `generate` reply as parts (as `streamChat` makes them). */
async function readGenerated(
  model: ChatModel,
  request: ChatRequest,
  onPart: (part: ChatStreamPart) => void,
): Promise<void> {
  const abortSignal = request.abortSignal;
  throwIfAborted(abortSignal);
  const reply: unknown = await untilAborted(model.generate(request), abortSignal);
  const response = checkResponse(reply, request.agentId, 'model.generate() resolved');
  if (response.content !== '') {
    onPart({ type: 'text-delta', delta: response.content });
    throwIfAborted(abortSignal);
  }
  for (const call of response.toolCalls ?? []) {
    onPart({ type: 'tool-call', call });
    throwIfAborted(abortSignal);
  }
  onPart({ type: 'finish', response });
}
