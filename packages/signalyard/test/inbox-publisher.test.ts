// The worker's stream publisher (an entry's turn events to the receipt's log): what it writes
// and when, over an inbox whose writes the test finishes by hand.
import type { Inbox, TurnEvent } from '@signalyard/core';
import { deferred, type Deferred } from '@signalyard/test-utils';
import { describe, expect, it } from 'vitest';
import { EntryPublisher } from '../src/inbox-publisher.js';

/** An inbox whose `publish` writes wait until the test resolves them; `written` lists what landed. */
function slowInbox() {
  const writes: Deferred[] = [];
  const written: string[] = [];
  const inbox = {
    publish: async (_receiptId: string, attempt: number, event: TurnEvent) => {
      const write = deferred();
      writes.push(write);
      await write.promise;
      written.push(`${attempt}:${event.type === 'text_delta' ? event.delta : event.type}`);
    },
  } as unknown as Inbox;
  return { inbox, writes, written };
}

const delta = (text: string): TurnEvent => ({ type: 'text_delta', agentId: 'a', delta: text });
const settle = () => new Promise((resolve) => setImmediate(resolve));
const outcome = { status: 'completed', sessionKey: 's', agentId: 'a' } as never;

describe('EntryPublisher', () => {
  it('writes an event queued while a drain is ending (its loop saw the queue empty) without waiting for another', async () => {
    // The model's last token before it pauses may arrive at any promise hop after the previous
    // write finished: in the drain's loop, after it saw the queue empty, or after it ended.
    for (let hops = 0; hops < 12; hops++) {
      const { inbox, writes, written } = slowInbox();
      const publisher = new EntryPublisher(inbox, `r-${hops}`, () => undefined);
      publisher.begin(1);
      publisher.sink(delta('Refunded $42 '));
      let later: Promise<unknown> = writes[0]!.promise;
      for (let i = 0; i < hops; i++) later = later.then(() => undefined);
      void later.then(() => publisher.sink(delta('to your card.')));
      writes[0]!.resolve();
      await settle();
      expect(writes, `pushed ${hops} hops after the write`).toHaveLength(2);
      writes[1]!.resolve();
      await settle();
      expect(written).toEqual(['1:Refunded $42 ', '1:to your card.']);
    }
  });

  it('finish resolves only once the outcome is written after every queued event; a redelivery starts with restarted', async () => {
    const { inbox, writes, written } = slowInbox();
    const publisher = new EntryPublisher(inbox, 'r2', () => undefined);
    publisher.sink(delta('a')); // before the delivery began: waits
    publisher.begin(2);
    let finished = false;
    const done = publisher.finish(outcome, 2).then(() => (finished = true));
    for (let i = 0; i < 3; i++) {
      await settle();
      expect(finished).toBe(false);
      writes[i]!.resolve();
    }
    await done;
    expect(written).toEqual(['2:restarted', '2:a', '2:outcome']);
    publisher.sink(delta('late'));
    await settle();
    expect(writes).toHaveLength(3); // nothing after the outcome
  });

  it('finish called at any hop as a drain ends resolves only after its outcome is written', async () => {
    for (let hops = 0; hops < 12; hops++) {
      const { inbox, writes, written } = slowInbox();
      const publisher = new EntryPublisher(inbox, `f-${hops}`, () => undefined);
      publisher.begin(1);
      publisher.sink(delta('x'));
      let later: Promise<unknown> = writes[0]!.promise;
      for (let i = 0; i < hops; i++) later = later.then(() => undefined);
      const done = later.then(() => publisher.finish(outcome, 1));
      writes[0]!.resolve();
      await settle();
      writes[1]?.resolve();
      await done;
      expect(written, `finished ${hops} hops after the write`).toEqual(['1:x', '1:outcome']);
    }
  });

  it('an abandoned delivery (its lease lost) writes nothing more', async () => {
    const { inbox, writes, written } = slowInbox();
    const publisher = new EntryPublisher(inbox, 'r3', () => undefined);
    publisher.begin(1);
    publisher.sink(delta('x'));
    publisher.sink(delta('y'));
    publisher.abandon();
    writes[0]!.resolve();
    await settle();
    expect(written).toEqual(['1:x']);
    await expect(publisher.finish(outcome, 1)).resolves.toBeUndefined();
    expect(writes).toHaveLength(1);
  });
});
