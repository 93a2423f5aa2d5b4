import { streamChat, type ChatModel, type ChatRequest, type ChatResponse } from '@signalyard/core';
import type { SignalHider } from './signal-hider.js';

/**
 * One model call read as a stream (`streamChat`: the model's own `stream`, else `generate`),
 * one call = one stream. Each piece of text goes to `onText` as it arrives — through `hider`
 * when markers are hidden, so only released text does, and what the end of the reply releases
 * comes last — then the checked response is returned. Rejects as `streamChat` does (the
 * model's error, `MODEL_STREAM_INVALID`, `ABORTED`); held text is then never released.
 * @internal
 */
export async function streamedReply(
  model: ChatModel,
  request: ChatRequest,
  hider: SignalHider | undefined,
  onText: (text: string) => void,
): Promise<ChatResponse> {
  let response: ChatResponse | undefined;
  for await (const part of streamChat(model, request)) {
    if (part.type === 'text-delta') {
      const text = hider === undefined ? part.delta : hider.push(part.delta);
      if (text !== '') onText(text);
    } else if (part.type === 'finish') {
      response = part.response;
    }
  }
  if (hider !== undefined) {
    const rest = hider.end();
    if (rest !== '') onText(rest);
  }
  return response as ChatResponse; // a stream streamChat lets end has had its finish part
}
