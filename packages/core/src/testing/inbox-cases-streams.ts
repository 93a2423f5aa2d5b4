import assert from 'node:assert/strict';
import type { Inbox, InboxEntry, InboxStreamEvent } from '../inbox.js';
import type { TurnEvent } from '../turn-event.js';
import {
  acceptMany,
  delta,
  outcomeEvent,
  shown,
  drain,
  leaseOn,
  newKey,
  readAll,
  rejects,
  settle,
  type InboxTest,
} from './inbox-conformance-support.js';

const restarted = (attempt: number): TurnEvent => ({ type: 'restarted', attempt });

/** Accepts one entry and reads it under a lease, its delivery begun once. */
async function deliveredEntry(inbox: Inbox): Promise<InboxEntry> {
  const key = newKey();
  await acceptMany(inbox, key, 1);
  const [entry] = await readAll(inbox, await leaseOn(inbox, key));
  assert.ok(entry !== undefined);
  await inbox.beginDelivery(entry);
  return entry;
}

/** A reader that collects events as they come, and can be stopped after a given count. */
function liveReader(
  stream: AsyncIterable<InboxStreamEvent>,
  stopAfter = Number.POSITIVE_INFINITY,
): { readonly events: InboxStreamEvent[]; readonly done: Promise<void> } {
  const events: InboxStreamEvent[] = [];
  const done = (async () => {
    for await (const event of stream) {
      events.push(event);
      if (events.length >= stopAfter) break;
    }
  })();
  return { events, done };
}

/** The conformance cases of readers that resume, and of late events of older attempts, while events are being published. */
export function eventResumeCases(test: InboxTest): void {
  test('a live reader that disconnects after N deltas and resumes from its last offset gets exactly the remaining events, nothing twice', async (t) => {
    const entry = await deliveredEntry(t.inbox);
    const { receiptId } = entry;
    const reader = await t.another();
    const first = liveReader(reader.events({ receiptId }), 3);
    for (let i = 0; i < 3; i++) await t.inbox.publish(receiptId, 1, delta(`d${i}`));
    await first.done; // disconnected after 3
    for (let i = 3; i < 6; i++) await t.inbox.publish(receiptId, 1, delta(`d${i}`)); // published meanwhile
    const last = first.events.at(-1);
    assert.ok(last !== undefined);
    const rest = liveReader(reader.events({ receiptId }, { from: last.offset }));
    await t.elapse(20);
    for (let i = 6; i < 9; i++) await t.inbox.publish(receiptId, 1, delta(`d${i}`));
    await t.inbox.publish(receiptId, 1, outcomeEvent(entry.sessionKey));
    await rest.done;
    const all = [...first.events, ...rest.events];
    assert.deepEqual(shown(all), [...Array.from({ length: 9 }, (_, i) => `1:d${i}`), '1:outcome']);
    assert.equal(new Set(all.map((e) => e.offset)).size, all.length, 'no offset twice');
    const again = await drain(t.inbox.events({ receiptId }, { from: rest.events[4]?.offset }));
    assert.deepEqual(shown(again), ['1:d8', '1:outcome'], 'resuming again from a later offset');
  });

  test("a partitioned worker's late events are dropped by live readers: by receipt, from an offset, and by session", async (t) => {
    const entry = await deliveredEntry(t.inbox);
    const { receiptId, sessionKey } = entry;
    const reader = await t.another();
    await t.inbox.publish(receiptId, 1, delta('old'));
    const byReceipt = liveReader(reader.events({ receiptId }));
    const [oldEvent] = await drain(liveEventsUntil(t.inbox.events({ receiptId }), 1));
    await t.inbox.beginDelivery(entry); // the next worker's delivery: attempt 2
    await t.inbox.publish(receiptId, 2, restarted(2));
    await t.inbox.publish(receiptId, 2, delta('new-1'));
    const bySession = liveReader(reader.events({ sessionKey }));
    const fromOld = liveReader(reader.events({ receiptId }, { from: oldEvent?.offset }));
    await t.elapse(20);
    await t.inbox.publish(receiptId, 1, delta('late-from-the-partitioned-worker'));
    await t.inbox.publish(receiptId, 2, delta('new-2'));
    await t.inbox.publish(receiptId, 1, delta('later-still'));
    await t.inbox.publish(receiptId, 2, outcomeEvent(sessionKey));
    await Promise.all([byReceipt.done, bySession.done, fromOld.done]);
    const attempt2 = ['2:new-1', '2:new-2', '2:outcome'];
    assert.deepEqual(shown(byReceipt.events), ['1:old', '2:restarted', ...attempt2]);
    assert.deepEqual(shown(fromOld.events), ['2:restarted', ...attempt2]);
    assert.deepEqual(shown(bySession.events), attempt2);
  });

  test('a restarted marker that voids nothing a reader showed is skipped (a redelivery of an entry whose log was empty)', async (t) => {
    const entry = await deliveredEntry(t.inbox);
    const { receiptId, sessionKey } = entry;
    await t.inbox.beginDelivery(entry);
    await t.inbox.publish(receiptId, 2, restarted(2));
    await t.inbox.publish(receiptId, 2, delta('only attempt'));
    const bySession = await drain(liveEventsUntil(t.inbox.events({ sessionKey }), 1));
    assert.deepEqual(shown(bySession), ['2:only attempt']);
    await t.inbox.publish(receiptId, 2, outcomeEvent(sessionKey));
    const all = await drain((await t.another()).events({ receiptId }));
    assert.deepEqual(shown(all), ['2:only attempt', '2:outcome']);
  });

  test('events stay readable after the entry is settled, while its outcome is kept', async (t) => {
    const entry = await deliveredEntry(t.inbox);
    const { receiptId, sessionKey } = entry;
    await t.inbox.publish(receiptId, 1, delta('kept'));
    await t.inbox.publish(receiptId, 1, outcomeEvent(sessionKey));
    await settle(t.inbox, entry);
    const events = await drain((await t.another()).events({ receiptId }));
    assert.deepEqual(shown(events), ['1:kept', '1:outcome']);
    assert.deepEqual(await drain(t.inbox.events({ sessionKey })), [], 'a settled receipt is not in flight');
  });
}

/** The conformance cases of `publishMany`, for a transport that has it. */
export function publishManyCases(test: InboxTest): void {
  test('publishMany (when the transport has it) appends events in order under one attempt, after those published before', async (t) => {
    if (t.inbox.publishMany === undefined) return; // optional: a worker then publishes one event at a time
    const publishMany = t.inbox.publishMany.bind(t.inbox);
    const entry = await deliveredEntry(t.inbox);
    const { receiptId, sessionKey } = entry;
    const reading = liveReader((await t.another()).events({ receiptId }));
    await t.elapse(20);
    await t.inbox.publish(receiptId, 1, delta('a'));
    await publishMany(receiptId, 1, [delta('b'), delta('c'), delta('d')]);
    await publishMany(receiptId, 1, []);
    await publishMany(receiptId, 1, [delta('e'), outcomeEvent(sessionKey)]);
    await reading.done;
    assert.deepEqual(shown(reading.events), ['1:a', '1:b', '1:c', '1:d', '1:e', '1:outcome']);
    await rejects(publishMany(receiptId, 1, 'nope' as never), 'INBOX_INPUT_INVALID');
    await rejects(publishMany(receiptId, 1, [delta('x'), { type: '' } as never]), 'INBOX_INPUT_INVALID');
    await rejects(publishMany(receiptId, 0, [delta('x')]), 'INBOX_INPUT_INVALID');
    await settle(t.inbox, entry);
    await rejects(publishMany(receiptId, 1, [delta('late'), delta('later')]), 'LEASE_LOST');
    assert.deepEqual(
      shown(await drain(t.inbox.events({ receiptId }))),
      shown(reading.events),
      'nothing appended after',
    );
  });
}

/** The first `n` events of a live stream (the reader then stops). */
async function* liveEventsUntil(
  stream: AsyncIterable<InboxStreamEvent>,
  n: number,
): AsyncGenerator<InboxStreamEvent, void, undefined> {
  let count = 0;
  for await (const event of stream) {
    yield event;
    if (++count >= n) return;
  }
}
