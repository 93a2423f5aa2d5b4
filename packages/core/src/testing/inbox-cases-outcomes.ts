import assert from 'node:assert/strict';
import type { Inbox, InboxEntry } from '../inbox.js';
import type { OutcomeJson } from '../outcome-json.js';
import {
  acceptMany,
  doneOutcome,
  leaseOn,
  newKey,
  readAll,
  rejects,
  type InboxCase,
  type InboxTest,
} from './inbox-conformance-support.js';

/** Accepts one entry for a new key and reads it under a lease, its delivery begun. */
async function oneEntry(inbox: Inbox): Promise<InboxEntry> {
  const key = newKey();
  await acceptMany(inbox, key, 1);
  const [entry] = await readAll(inbox, await leaseOn(inbox, key));
  assert.ok(entry !== undefined);
  await inbox.beginDelivery(entry);
  return entry;
}

/** An outcome with every field an OutcomeJson may carry. */
function fullOutcome(sessionKey: string): OutcomeJson {
  return {
    sessionKey,
    agentId: 'desk',
    action: { type: 'transition', target: 'check' },
    decidedBy: {
      tier: 'strategy',
      route: { kind: 'user_message', action: { type: 'continue' }, priority: 5, name: 'main' },
    },
    status: 'failed',
    output: { text: 'a\u0000 ✓', list: [1, 2.5, null, true], nested: { deep: [{ x: 'y' }] } },
    error: {
      code: 'CHECKPOINT_CONFLICT',
      message: 'Checkpoint "k" is at version 2, expected version 1',
      fields: { key: 'k', expected: 1, actual: 2 },
      cause: { name: 'TypeError', message: 'boom' },
    },
    pendingApprovals: [],
    mergedWith: 2,
  };
}

/** Waits until `inbox.outcome(receiptId)` has registered its wait (the promise is still pending after a few turns). */
async function pendingAfterTurns(t: InboxCase, promise: Promise<unknown>): Promise<void> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  await t.elapse(20);
  assert.equal(settled, false, 'outcome() settled before the outcome was put');
}

/** The conformance cases of outcomes. */
export function outcomeCases(test: InboxTest): void {
  test('an outcome put is returned by outcome(), every field kept as JSON', async ({ inbox }) => {
    const entry = await oneEntry(inbox);
    const outcome = fullOutcome(entry.sessionKey);
    await inbox.putOutcome(entry.receiptId, outcome, 60_000);
    await inbox.ack(entry);
    assert.deepEqual(await inbox.outcome(entry.receiptId), outcome);
    assert.deepEqual(await inbox.outcome(entry.receiptId), outcome, 'it can be asked for again');
  });

  test('outcome() waits until the outcome is put (by another instance where possible)', async (t) => {
    const entry = await oneEntry(t.inbox);
    const waiting = t.inbox.outcome(entry.receiptId);
    await pendingAfterTurns(t, waiting);
    const other = await t.another();
    await other.putOutcome(entry.receiptId, doneOutcome(entry.sessionKey, 'from the other'), 60_000);
    await other.ack(entry);
    assert.deepEqual(await waiting, doneOutcome(entry.sessionKey, 'from the other'));
  });

  test('several waiters on one receipt, in two instances, all get the outcome', async (t) => {
    const entry = await oneEntry(t.inbox);
    const other = await t.another();
    const waiters = [t.inbox.outcome(entry.receiptId), other.outcome(entry.receiptId), other.outcome(entry.receiptId)];
    await pendingAfterTurns(t, Promise.race(waiters));
    await t.inbox.putOutcome(entry.receiptId, doneOutcome(entry.sessionKey), 60_000);
    for (const outcome of await Promise.all(waiters)) assert.deepEqual(outcome, doneOutcome(entry.sessionKey));
  });

  test('the first outcome put stays: a later put for the receipt is ignored', async ({ inbox }) => {
    const entry = await oneEntry(inbox);
    await inbox.putOutcome(entry.receiptId, doneOutcome(entry.sessionKey, 'first'), 60_000);
    await inbox.putOutcome(entry.receiptId, doneOutcome(entry.sessionKey, 'late'), 60_000);
    assert.deepEqual(await inbox.outcome(entry.receiptId), doneOutcome(entry.sessionKey, 'first'));
  });

  test('OUTCOME_TIMEOUT when timeoutMs passes first; the entry still waits and is settled later', async (t) => {
    const entry = await oneEntry(t.inbox);
    const error = await rejects(t.inbox.outcome(entry.receiptId, { timeoutMs: 50 }), 'OUTCOME_TIMEOUT');
    assert.equal((error as { receiptId?: string }).receiptId, entry.receiptId);
    await t.inbox.putOutcome(entry.receiptId, doneOutcome(entry.sessionKey), 60_000);
    assert.deepEqual(await t.inbox.outcome(entry.receiptId, { timeoutMs: 50 }), doneOutcome(entry.sessionKey));
  });

  test('an abortSignal ends only the wait (ABORTED); the outcome is still put and returned', async (t) => {
    const entry = await oneEntry(t.inbox);
    const controller = new AbortController();
    const waiting = t.inbox.outcome(entry.receiptId, { abortSignal: controller.signal });
    await pendingAfterTurns(t, waiting);
    controller.abort();
    await rejects(waiting, 'ABORTED');
    await rejects(t.inbox.outcome(entry.receiptId, { abortSignal: controller.signal }), 'ABORTED');
    await t.inbox.putOutcome(entry.receiptId, doneOutcome(entry.sessionKey), 60_000);
    assert.deepEqual(await t.inbox.outcome(entry.receiptId), doneOutcome(entry.sessionKey));
  });

  test('OUTCOME_EXPIRED once the outcome TTL passed', async (t) => {
    const entry = await oneEntry(t.inbox);
    await t.inbox.putOutcome(entry.receiptId, doneOutcome(entry.sessionKey), 300);
    await t.inbox.ack(entry);
    assert.deepEqual(await t.inbox.outcome(entry.receiptId), doneOutcome(entry.sessionKey));
    await t.elapse(500);
    await rejects(t.inbox.outcome(entry.receiptId), 'OUTCOME_EXPIRED');
  });

  test('OUTCOME_EXPIRED for a receipt never accepted, and for an entry acknowledged without an outcome', async (t) => {
    await rejects(t.inbox.outcome('no-such-receipt'), 'OUTCOME_EXPIRED');
    const entry = await oneEntry(t.inbox);
    const waiting = t.inbox.outcome(entry.receiptId);
    await pendingAfterTurns(t, waiting);
    await t.inbox.ack(entry);
    await rejects(waiting, 'OUTCOME_EXPIRED');
  });
}
