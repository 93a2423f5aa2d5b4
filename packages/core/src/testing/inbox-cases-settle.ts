import assert from 'node:assert/strict';
import type { Inbox, InboxEntry, InboxLease } from '../inbox.js';
import type { OutcomeJson } from '../outcome-json.js';
import {
  acceptMany,
  delta,
  outcomeEvent,
  shown,
  doneOutcome,
  drain,
  leaseOn,
  newKey,
  readAll,
  rejects,
  type InboxTest,
} from './inbox-conformance-support.js';

function poisoned(sessionKey: string): OutcomeJson {
  return {
    sessionKey,
    agentId: 'desk',
    status: 'failed',
    error: { code: 'INBOX_POISONED', message: 'delivered 6 times without being settled', fields: { attempts: 6 } },
  };
}

/** Accepts `n` entries for a new key and reads them under a lease, the first one's delivery begun. */
async function entries(inbox: Inbox, n: number): Promise<{ read: InboxEntry[]; lease: InboxLease }> {
  const key = newKey();
  await acceptMany(inbox, key, n);
  const lease = await leaseOn(inbox, key);
  const read = await readAll(inbox, lease);
  assert.equal(read.length, n);
  await inbox.beginDelivery(read[0] as InboxEntry);
  return { read, lease };
}

/** The conformance cases of the optional `Inbox.settle` (each passes at once on a transport without it). */
export function settleCases(test: InboxTest): void {
  test('settle appends the last events, stores the outcome and acknowledges the entry', async (t) => {
    if (t.inbox.settle === undefined) return;
    const { read, lease } = await entries(t.inbox, 2);
    const [entry, next] = read as [InboxEntry, InboxEntry];
    const { receiptId, sessionKey } = entry;
    await t.inbox.publish(receiptId, 1, delta('a'));
    const waiting = (await t.another()).outcome(receiptId);
    await t.inbox.settle(entry, doneOutcome(sessionKey, 'settled'), 60_000, {
      attempt: 1,
      events: [delta('b'), outcomeEvent(sessionKey)],
    });
    assert.deepEqual(await waiting, doneOutcome(sessionKey, 'settled'));
    assert.deepEqual(shown(await drain(t.inbox.events({ receiptId }))), ['1:a', '1:b', '1:outcome']);
    const left = await readAll(t.inbox, lease);
    assert.deepEqual(
      left.map((e) => e.receiptId),
      [next.receiptId],
      'only the next entry is left',
    );
  });

  test('settle without events; the first outcome stored stays; an entry settled before gets no events', async (t) => {
    const settle = t.inbox.settle?.bind(t.inbox);
    if (settle === undefined) return;
    const [entry] = (await entries(t.inbox, 1)).read as [InboxEntry];
    const { receiptId, sessionKey } = entry;
    await t.inbox.putOutcome(receiptId, doneOutcome(sessionKey, 'first'), 60_000);
    await settle(entry, doneOutcome(sessionKey, 'late'), 60_000);
    assert.deepEqual(await t.inbox.outcome(receiptId), doneOutcome(sessionKey, 'first'));
    await settle(entry, doneOutcome(sessionKey, 'again'), 60_000, { attempt: 1, events: [delta('late')] });
    assert.deepEqual(shown(await drain(t.inbox.events({ receiptId }))), [], 'nothing appended once acknowledged');
    assert.deepEqual(await t.inbox.outcome(receiptId), doneOutcome(sessionKey, 'first'));
  });

  test('settle with an INBOX_POISONED outcome keeps a dead letter; bad input writes nothing', async (t) => {
    const settle = t.inbox.settle?.bind(t.inbox);
    if (settle === undefined) return;
    const { read, lease } = await entries(t.inbox, 1);
    const [entry] = read as [InboxEntry];
    const { receiptId, sessionKey } = entry;
    await rejects(settle(entry, doneOutcome(sessionKey), 0), 'INBOX_INPUT_INVALID');
    await rejects(settle(entry, doneOutcome(sessionKey), 60_000, { attempt: 0, events: [] }), 'INBOX_INPUT_INVALID');
    await rejects(
      settle(entry, doneOutcome(sessionKey), 60_000, { attempt: 1, events: [{ type: '' } as never] }),
      'INBOX_INPUT_INVALID',
    );
    assert.equal((await readAll(t.inbox, lease)).length, 1, 'still there');
    await settle(entry, poisoned(sessionKey), 60_000);
    const letters = await drain(t.inbox.deadLetters());
    assert.deepEqual(
      letters.map((l) => l.entry.receiptId),
      [receiptId],
    );
    assert.deepEqual(letters[0]?.outcome, poisoned(sessionKey));
  });
}
