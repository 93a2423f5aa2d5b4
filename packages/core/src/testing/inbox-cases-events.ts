import assert from 'node:assert/strict';
import type { Inbox, InboxEntry, InboxStreamEvent } from '../inbox.js';
import { isSignalyardError } from '../errors/signalyard-error.js';
import type { Outcome } from '../runner-event.js';
import type { TurnEvent } from '../turn-event.js';
import {
  acceptMany,
  drain,
  leaseOn,
  newKey,
  readAll,
  rejects,
  settle,
  type InboxTest,
} from './inbox-conformance-support.js';

const delta = (text: string): TurnEvent => ({ type: 'text_delta', agentId: 'desk', delta: text });

function outcomeEvent(sessionKey: string, status: Outcome['status'] = 'completed'): TurnEvent {
  return {
    type: 'outcome',
    outcome: {
      sessionKey,
      agentId: 'desk',
      action: { type: 'continue' },
      decidedBy: undefined,
      status,
      output: 'done',
    },
  };
}

/** The deltas' texts and the other events' types, in order: what a reader showed. */
function shown(events: readonly InboxStreamEvent[]): string[] {
  return events.map(({ event, attempt }) =>
    event.type === 'text_delta' ? `${attempt}:${event.delta}` : `${attempt}:${event.type}`,
  );
}

/** Accepts one entry and reads it under a lease, its delivery begun. */
async function streamingEntry(inbox: Inbox, key = newKey()): Promise<InboxEntry> {
  await acceptMany(inbox, key, 1);
  const [entry] = await readAll(inbox, await leaseOn(inbox, key));
  assert.ok(entry !== undefined);
  await inbox.beginDelivery(entry);
  return entry;
}

/** The conformance cases of stream logs. */
export function eventCases(test: InboxTest): void {
  test('events by receipt: every event in order with its attempt, ending after the outcome (published by another instance where possible)', async (t) => {
    const entry = await streamingEntry(t.inbox);
    const other = await t.another();
    await other.publish(entry.receiptId, 1, {
      type: 'routed',
      sessionKey: entry.sessionKey,
      agentId: 'desk',
      action: { type: 'continue' },
    });
    await other.publish(entry.receiptId, 1, delta('Hel'));
    await other.publish(entry.receiptId, 1, delta('lo'));
    await other.publish(entry.receiptId, 1, {
      type: 'engine_event',
      event: { type: 'handoff', from: 'a', to: 'b', at: 1n },
    });
    await other.publish(entry.receiptId, 1, outcomeEvent(entry.sessionKey));
    const events = await drain(t.inbox.events({ receiptId: entry.receiptId }));
    assert.deepEqual(shown(events), ['1:routed', '1:Hel', '1:lo', '1:engine_event', '1:outcome']);
    const offsets = events.map((e) => e.offset);
    assert.equal(new Set(offsets).size, offsets.length, 'offsets are distinct');
    const engine = events[3]?.event;
    assert.deepEqual(engine, { type: 'engine_event', event: { type: 'handoff', from: 'a', to: 'b', at: '1' } });
    const last = events[4]?.event;
    assert.ok(last?.type === 'outcome');
    assert.equal(last.outcome.status, 'completed');
    assert.equal(last.outcome.output, 'done');
  });

  test('a reader that stops after N events and resumes from its last offset gets exactly the rest, nothing twice', async (t) => {
    const entry = await streamingEntry(t.inbox);
    for (let i = 0; i < 6; i++) await t.inbox.publish(entry.receiptId, 1, delta(`d${i}`));
    const first: InboxStreamEvent[] = [];
    for await (const event of t.inbox.events({ receiptId: entry.receiptId })) {
      first.push(event);
      if (first.length === 3) break;
    }
    await t.inbox.publish(entry.receiptId, 1, delta('d6'));
    await t.inbox.publish(entry.receiptId, 1, outcomeEvent(entry.sessionKey));
    const rest = await drain((await t.another()).events({ receiptId: entry.receiptId }, { from: first[2]?.offset }));
    assert.deepEqual(shown([...first, ...rest]), ['1:d0', '1:d1', '1:d2', '1:d3', '1:d4', '1:d5', '1:d6', '1:outcome']);
  });

  test('a live reader gets events as they are published, and an outcome event carries a rebuilt error', async (t) => {
    const entry = await streamingEntry(t.inbox);
    const reading = drain((await t.another()).events({ receiptId: entry.receiptId }));
    await t.elapse(20);
    await t.inbox.publish(entry.receiptId, 1, delta('a'));
    await t.elapse(20);
    await t.inbox.publish(entry.receiptId, 1, delta('b'));
    const failed: Outcome = {
      sessionKey: entry.sessionKey,
      agentId: 'desk',
      action: undefined,
      decidedBy: undefined,
      status: 'failed',
      error: Object.assign(new Error('engine broke'), {
        code: 'ENGINE_FAILED',
        detail: { n: 1 },
      }) as unknown as Outcome['error'],
    };
    await t.inbox.publish(entry.receiptId, 1, { type: 'outcome', outcome: failed });
    const events = await reading;
    assert.deepEqual(shown(events), ['1:a', '1:b', '1:outcome']);
    const last = events[2]?.event;
    assert.ok(last?.type === 'outcome');
    assert.ok(isSignalyardError(last.outcome.error, 'ENGINE_FAILED'));
    assert.equal(last.outcome.error.message, 'engine broke');
    assert.deepEqual((last.outcome.error as unknown as { detail: unknown }).detail, { n: 1 });
  });
}

/** The conformance cases of attempts in stream logs, reads by session key, and the end of a read. */
export function eventAttemptCases(test: InboxTest): void {
  test('restarted: events of an attempt below the latest restarted are dropped, from the start and from an offset', async (t) => {
    const entry = await streamingEntry(t.inbox);
    const { receiptId } = entry;
    await t.inbox.publish(receiptId, 1, delta('old-1'));
    await t.inbox.publish(receiptId, 1, delta('old-2'));
    const [, mid] = await drainUntil(t.inbox.events({ receiptId }), 2);
    await t.inbox.publish(receiptId, 2, { type: 'restarted', attempt: 2 });
    await t.inbox.publish(receiptId, 2, delta('new-1'));
    await t.inbox.publish(receiptId, 1, delta('late-from-a-partitioned-worker'));
    await t.inbox.publish(receiptId, 2, delta('new-2'));
    await t.inbox.publish(receiptId, 2, outcomeEvent(entry.sessionKey));
    assert.deepEqual(shown(await drain(t.inbox.events({ receiptId }))), [
      '1:old-1',
      '1:old-2',
      '2:restarted',
      '2:new-1',
      '2:new-2',
      '2:outcome',
    ]);
    assert.deepEqual(shown(await drain(t.inbox.events({ receiptId }, { from: mid?.offset }))), [
      '2:restarted',
      '2:new-1',
      '2:new-2',
      '2:outcome',
    ]);
    const after = (await drain(t.inbox.events({ receiptId }))).find(
      (e) => e.event.type === 'text_delta' && e.event.delta === 'new-1',
    );
    assert.deepEqual(shown(await drain(t.inbox.events({ receiptId }, { from: after?.offset }))), [
      '2:new-2',
      '2:outcome',
    ]);
  });

  test('events by session key: the latest in-flight receipt, from the first event of its latest attempt', async (t) => {
    const key = newKey();
    await acceptMany(t.inbox, key, 2);
    const lease = await leaseOn(t.inbox, key);
    const [first, second] = await readAll(t.inbox, lease);
    assert.ok(first !== undefined && second !== undefined);
    await t.inbox.beginDelivery(first);
    await t.inbox.publish(first.receiptId, 1, delta('first reply'));
    await t.inbox.publish(first.receiptId, 1, outcomeEvent(key));
    await settle(t.inbox, first);
    await t.inbox.beginDelivery(second);
    await t.inbox.publish(second.receiptId, 1, delta('dying'));
    await t.inbox.beginDelivery(second);
    await t.inbox.publish(second.receiptId, 2, { type: 'restarted', attempt: 2 });
    await t.inbox.publish(second.receiptId, 2, delta('second '));
    const reader = (await t.another()).events({ sessionKey: key });
    const reading = drain(reader);
    await t.elapse(20);
    await t.inbox.publish(second.receiptId, 2, delta('reply'));
    await t.inbox.publish(second.receiptId, 2, outcomeEvent(key));
    assert.deepEqual(shown(await reading), ['2:second ', '2:reply', '2:outcome']);
  });

  test('events by session key end at once when nothing is in flight', async (t) => {
    const key = newKey();
    assert.deepEqual(await drain(t.inbox.events({ sessionKey: key })), []);
    await acceptMany(t.inbox, key, 1);
    assert.deepEqual(await drain(t.inbox.events({ sessionKey: key })), [], 'an entry not started has no stream yet');
  });
}

/** The conformance cases of how a read ends. */
export function eventEndCases(test: InboxTest): void {
  test('a reader by receipt ends when the entry was acknowledged and nothing is left; publish after ack is LEASE_LOST', async (t) => {
    const entry = await streamingEntry(t.inbox);
    await t.inbox.publish(entry.receiptId, 1, delta('only'));
    const reading = drain(t.inbox.events({ receiptId: entry.receiptId }));
    await t.elapse(20);
    await settle(t.inbox, entry);
    assert.deepEqual(shown(await reading), ['1:only']);
    await rejects(t.inbox.publish(entry.receiptId, 1, delta('late')), 'LEASE_LOST');
    assert.deepEqual(shown(await drain(t.inbox.events({ receiptId: entry.receiptId }))), ['1:only']);
    assert.deepEqual(await drain(t.inbox.events({ receiptId: 'never-accepted' })), []);
  });

  test('an abortSignal ends a waiting reader with ABORTED', async (t) => {
    const entry = await streamingEntry(t.inbox);
    const controller = new AbortController();
    const reading = drain(t.inbox.events({ receiptId: entry.receiptId }, { abortSignal: controller.signal }));
    await t.elapse(20);
    controller.abort();
    await rejects(reading, 'ABORTED');
  });
}

/** The first `n` events of a stream (the reader then stops). */
async function drainUntil(stream: AsyncIterable<InboxStreamEvent>, n: number): Promise<InboxStreamEvent[]> {
  const out: InboxStreamEvent[] = [];
  for await (const event of stream) {
    out.push(event);
    if (out.length === n) break;
  }
  return out;
}
