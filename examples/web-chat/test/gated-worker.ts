// A desk worker (src/worker.ts) whose model streams only as fast as its test allows: before each
// text delta it tells its parent `{ type: 'chunk', delta }` over IPC and waits for
// `{ type: 'go' }` — or for `{ type: 'open' }`, after which it streams freely (still telling its
// parent each delta, with `free: true`) until `{ type: 'close' }`. The test kills
// it mid-reply with SIGKILL, or cuts the page's connection, at a point of its choosing.
import type { ChatModel, ChatStreamPart } from '@signalyard/core';
import { scriptedDeskModel } from '../src/desk.js';
import { serveDeskWorker } from '../src/desk-workers.js';

let open = false;
const waiting: (() => void)[] = [];
process.on('message', (message: { type?: string }) => {
  if (message.type === 'go') waiting.shift()?.();
  if (message.type === 'open') {
    open = true;
    for (const go of waiting.splice(0)) go();
  }
  if (message.type === 'close') open = false;
});

function gated(model: ChatModel): ChatModel {
  return {
    generate: (request) => model.generate(request),
    async *stream(request): AsyncGenerator<ChatStreamPart> {
      for await (const part of model.stream?.(request) ?? []) {
        if (part.type === 'text-delta' && open) {
          process.send?.({ type: 'chunk', delta: part.delta, free: true });
        } else if (part.type === 'text-delta') {
          await new Promise<void>((go) => {
            waiting.push(go);
            process.send?.({ type: 'chunk', delta: part.delta });
          });
        }
        yield part;
      }
    },
  };
}

serveDeskWorker(gated(scriptedDeskModel({ chunkChars: 3 })));
