// Helpers of the cross-worker stream tests: an engine streaming a model's reply token by token,
// a producer/worker pair over one inbox, and a compact view of a stream's events.
import {
  MemoryCheckpointStore,
  type ChatModel,
  type CheckpointStore,
  type Inbox,
  type TurnEvent,
} from '@signalyard/core';
import { deferred, type Deferred } from '@signalyard/test-utils';
import type { EngineFn, Runner, RunnerOptions } from 'signalyard';

/** An engine that streams the model's reply (`model.stream`) as text deltas and keeps it. */
export function tokenEngine(model: ChatModel): EngineFn {
  return async (ctx) => {
    const request = { messages: [...ctx.history] };
    let text = '';
    if (ctx.streaming && model.stream !== undefined) {
      for await (const part of model.stream(request)) {
        if (part.type === 'text-delta') {
          text += part.delta;
          ctx.emitText(part.delta);
        }
      }
    } else text = (await model.generate(request)).content;
    return { messages: [{ role: 'assistant', content: text }], output: text };
  };
}

/** Each event as one string: `delta:<text>`, `outcome:<status>`, `restarted:<attempt>`, else its type. */
export function shown(events: readonly TurnEvent[]): string[] {
  return events.map((e) => {
    if (e.type === 'text_delta') return `delta:${e.delta}`;
    if (e.type === 'outcome') return `outcome:${e.outcome.status}`;
    if (e.type === 'restarted') return `restarted:${e.attempt}`;
    return e.type;
  });
}

/**
 * A worker whose engine streams `Hel`, `lo `, `wor`, then waits for `release` before `ld`, and a
 * producer (`worker: false`) over the same inbox and store. `started` resolves once the first
 * three deltas were emitted.
 */
export function streamingPair(
  make: (options: Partial<RunnerOptions> & { inbox: Inbox }, engine: EngineFn) => Runner,
  inbox: Inbox,
  store: CheckpointStore = new MemoryCheckpointStore(),
): { producer: Runner; worker: Runner; release: Deferred; started: Promise<void> } {
  const release = deferred();
  const started = deferred();
  const worker = make({ inbox, store, worker: { pollMs: 10 } }, async (ctx) => {
    for (const piece of ['Hel', 'lo ', 'wor']) ctx.emitText(piece);
    started.resolve();
    await release.promise;
    ctx.emitText('ld');
    return { messages: [{ role: 'assistant', content: 'Hello world' }], output: 'Hello world' };
  });
  const producer = make({ inbox, store, worker: false }, async () => ({ messages: [] }));
  return { producer, worker, release, started: started.promise };
}
