import type { ChatModel, ChatRequest, ChatResponse, ChatStreamPart } from '@signalyard/core';
import { readChatStream, type AbortRace } from '@signalyard/core/internal';
import type { SignalHider } from './signal-hider.js';

/**
 * One model call read as a stream (as `streamChat` reads it: the model's own `stream`, else
 * `generate`), one call = one stream. Each piece of text goes to `onText` as it arrives —
 * through `hider` when markers are hidden, so only released text does, and what the end of the
 * reply releases comes last — then the checked response is returned. Rejects as `streamChat`
 * does (the model's error, `MODEL_STREAM_INVALID`, `ABORTED`); held text is then never
 * released. The parts are handed over as they are accepted (`readChatStream`: no promise hop
 * per part beyond the model's own); `race`, the run's race on `request.abortSignal`, saves the
 * call a listener of its own.
 * @internal
 */
export function streamedReply(
  model: ChatModel,
  request: ChatRequest,
  hider: SignalHider | undefined,
  onText: (text: string) => void,
  race?: AbortRace,
): Promise<ChatResponse> {
  let response: ChatResponse | undefined;
  const onPart = (part: ChatStreamPart): void => {
    if (part.type === 'text-delta') {
      const text = hider === undefined ? part.delta : hider.push(part.delta);
      if (text !== '') onText(text);
    } else if (part.type === 'finish') {
      response = part.response;
    }
  };
  return readChatStream(model, request, onPart, race).then(() => {
    if (hider !== undefined) {
      const rest = hider.end();
      if (rest !== '') onText(rest);
    }
    return response as ChatResponse; // a read that resolves has handed over its finish part
  });
}
