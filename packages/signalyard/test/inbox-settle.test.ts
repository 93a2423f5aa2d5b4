// The worker's last writes of a settled entry: one Inbox.settle (events, outcome, acknowledgement)
// when the transport has it, else publishMany/putOutcome then ack — counted calls, same outcomes.
import { MemoryCheckpointStore, MemoryInbox, signal } from '@signalyard/core';
import { createRunner, type EngineFn, type Runner } from 'signalyard';
import { afterEach, describe, expect, it } from 'vitest';
import { MAIN } from './support.js';

const runners: Runner[] = [];
afterEach(async () => {
  for (const r of runners.splice(0)) await r.close();
});

const user = (text: string) => signal('user_message', { channel: 'cli', text });
// A turn that streams nothing: its routed event waits for the outcome and goes out with it.
const echo: EngineFn = () => Promise.resolve({ messages: [{ role: 'assistant', content: 'ok' }], output: { n: 1 } });

/** A MemoryInbox whose finishing calls are counted; `withSettle: false` hides its `settle`. */
function countedInbox(withSettle: boolean): { inbox: MemoryInbox; calls: Record<string, number> } {
  const inbox = new MemoryInbox();
  const calls: Record<string, number> = { settle: 0, putOutcome: 0, ack: 0, publish: 0, publishMany: 0 };
  let settling = 0; // MemoryInbox.settle runs its own putOutcome and ack: those are not the worker's calls
  for (const name of Object.keys(calls) as (keyof MemoryInbox)[]) {
    const original = (inbox[name] as (...args: unknown[]) => Promise<void>).bind(inbox);
    (inbox as unknown as Record<string, unknown>)[name] = async (...args: unknown[]) => {
      if (settling === 0 || name === 'settle') calls[name] = (calls[name] ?? 0) + 1;
      if (name !== 'settle') return original(...args);
      settling++;
      try {
        return await original(...args);
      } finally {
        settling--;
      }
    };
  }
  if (!withSettle) (inbox as { settle?: unknown }).settle = undefined;
  return { inbox, calls };
}

async function settleThree(withSettle: boolean): Promise<{ calls: Record<string, number>; events: string[] }> {
  const { inbox, calls } = countedInbox(withSettle);
  const runner = createRunner({
    agents: [{ id: 'main', engine: echo }],
    store: new MemoryCheckpointStore(),
    inbox,
    worker: { pollMs: 10 },
  });
  runners.push(runner);
  const receipts = [];
  for (const text of ['a', 'b', 'c']) receipts.push(await runner.accept(MAIN, user(text)));
  for (const receipt of receipts) expect((await runner.outcome(receipt.receiptId)).status).toBe('completed');
  const events: string[] = [];
  for await (const { event } of inbox.events({ receiptId: receipts[2]?.receiptId ?? '' })) events.push(event.type);
  return { calls, events };
}

describe('the settle path', () => {
  it('with Inbox.settle: one call per entry, no separate putOutcome, ack or publish; the log ends with the outcome', async () => {
    const { calls, events } = await settleThree(true);
    expect(calls).toEqual({ settle: 3, putOutcome: 0, ack: 0, publish: 0, publishMany: 0 });
    expect(events.at(-1)).toBe('outcome');
    expect(events).toContain('routed');
  });

  it('without it: putOutcome and ack per entry, the events published beside', async () => {
    const { calls, events } = await settleThree(false);
    expect(calls.settle).toBe(0);
    expect(calls.putOutcome).toBe(3);
    expect(calls.ack).toBe(3);
    expect(events.at(-1)).toBe('outcome');
  });
});
