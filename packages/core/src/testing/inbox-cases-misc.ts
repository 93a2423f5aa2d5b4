import assert from 'node:assert/strict';
import type { InboxEntry, InboxLease, InboxNotice, SignalJson } from '../inbox.js';
import type { OutcomeJson } from '../outcome-json.js';
import {
  acceptMany,
  doneOutcome,
  drain,
  eventually,
  fails,
  leaseOn,
  newId,
  newKey,
  readAll,
  rejects,
  text,
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

/** The conformance cases of notices. */
export function notifyCases(test: InboxTest): void {
  test('accept sends (key, "entry"); notify sends what it is told; in every instance where possible', async (t) => {
    const other = await t.another();
    const heard: (readonly [string, InboxNotice])[] = [];
    const heardHere: (readonly [string, InboxNotice])[] = [];
    const off = other.onNotify((key, what) => heard.push([key, what]));
    t.inbox.onNotify((key, what) => heardHere.push([key, what]));
    // a listener hears the notices sent once it listens (which may take a moment: a connection of
    // its own, in each instance): wait until both hear one
    const probe = newKey('probe');
    await eventually(
      t,
      async () => {
        await t.inbox.notify(probe, 'entry');
        return heard.some(([k]) => k === probe) && heardHere.some(([k]) => k === probe);
      },
      'both instances to listen',
    );
    const key = newKey();
    await t.inbox.accept({ sessionKey: key, signal: text('x'), id: newId() });
    await t.inbox.notify(key, 'stop');
    const has = (list: typeof heard, what: InboxNotice): boolean => list.some(([k, w]) => k === key && w === what);
    await eventually(t, () => has(heard, 'entry') && has(heard, 'stop'), 'the notices in the other instance');
    await eventually(t, () => has(heardHere, 'entry') && has(heardHere, 'stop'), 'the notices in this instance');
    off();
    const before = heard.length;
    const later = newKey('later');
    await t.inbox.notify(later, 'stop');
    await eventually(t, () => heardHere.some(([k]) => k === later), 'the later notice here');
    assert.equal(heard.length, before, 'an unsubscribed listener hears nothing more');
  });

  test('a listener that throws does not stop the others', async (t) => {
    const heard: string[] = [];
    t.inbox.onNotify(() => {
      throw new Error('listener bug');
    });
    t.inbox.onNotify((key) => heard.push(key));
    const key = newKey();
    await eventually(
      t,
      async () => {
        await t.inbox.notify(key, 'entry'); // until the inbox listens
        return heard.includes(key);
      },
      'the second listener',
    );
  });
}

/** The conformance cases of dead letters. */
export function deadLetterCases(test: InboxTest): void {
  test('deadLetters lists the entries whose stored outcome is INBOX_POISONED, with that outcome, oldest first', async (t) => {
    const keys = [newKey('a'), newKey('b'), newKey('c')];
    for (const key of keys) await acceptMany(t.inbox, key, 1, key);
    const entries: InboxEntry[] = [];
    for (const key of keys) {
      const [entry] = await readAll(t.inbox, await leaseOn(t.inbox, key));
      entries.push(entry as InboxEntry);
    }
    const [a, b, c] = entries as [InboxEntry, InboxEntry, InboxEntry];
    for (let i = 0; i < 3; i++) await t.inbox.beginDelivery(a);
    await t.inbox.putOutcome(a.receiptId, poisoned(a.sessionKey), 60_000);
    await t.inbox.ack(a);
    await t.inbox.putOutcome(b.receiptId, doneOutcome(b.sessionKey), 60_000);
    await t.inbox.ack(b);
    await t.inbox.beginDelivery(c);
    await t.inbox.putOutcome(c.receiptId, poisoned(c.sessionKey), 60_000);
    await t.inbox.ack(c);
    const letters = await drain((await t.another()).deadLetters());
    assert.deepEqual(
      letters.map((l) => l.entry.receiptId),
      [a.receiptId, c.receiptId],
    );
    const [first] = letters;
    assert.ok(first !== undefined);
    assert.equal(first.entry.sessionKey, a.sessionKey);
    assert.equal(first.entry.seq, a.seq);
    assert.deepEqual(first.entry.signal, a.signal);
    assert.equal(first.entry.attempts, 3);
    assert.deepEqual(first.outcome, poisoned(a.sessionKey));
    assert.equal((await drain(t.inbox.deadLetters({ limit: 1 }))).length, 1);
  });

  test('a dead letter goes with its outcome, after the TTL', async (t) => {
    const key = newKey();
    await acceptMany(t.inbox, key, 1);
    const [entry] = await readAll(t.inbox, await leaseOn(t.inbox, key));
    await t.inbox.putOutcome((entry as InboxEntry).receiptId, poisoned(key), 300);
    await t.inbox.ack(entry as InboxEntry);
    assert.equal((await drain(t.inbox.deadLetters())).length, 1);
    await t.elapse(500);
    assert.deepEqual(await drain(t.inbox.deadLetters()), []);
  });
}

/** The conformance cases of `close`. */
export function closeCases(test: InboxTest): void {
  test('close rejects waiting outcome() and events(), is idempotent, and later calls reject with INBOX_CLOSED', async (t) => {
    const key = newKey();
    await acceptMany(t.inbox, key, 1);
    const lease = await leaseOn(t.inbox, key);
    const [entry] = await readAll(t.inbox, lease);
    assert.ok(entry !== undefined);
    await t.inbox.beginDelivery(entry);
    const waiting = rejects(t.inbox.outcome(entry.receiptId), 'INBOX_CLOSED');
    const reading = rejects(drain(t.inbox.events({ receiptId: entry.receiptId })), 'INBOX_CLOSED');
    await t.elapse(20);
    await t.inbox.close();
    await t.inbox.close();
    await waiting;
    await reading;
    const closed = t.inbox;
    await fails(() => closed.accept({ sessionKey: key, signal: text('x'), id: newId() }), 'INBOX_CLOSED');
    await fails(() => closed.acquire('w', { leaseMs: 1000, max: 1 }), 'INBOX_CLOSED');
    await fails(() => closed.renew(lease), 'INBOX_CLOSED');
    await fails(() => closed.release(lease), 'INBOX_CLOSED');
    await fails(() => closed.read(lease), 'INBOX_CLOSED');
    await fails(() => closed.beginDelivery(entry), 'INBOX_CLOSED');
    await fails(() => closed.ack(entry), 'INBOX_CLOSED');
    await fails(() => closed.putOutcome(entry.receiptId, doneOutcome(key), 1000), 'INBOX_CLOSED');
    await fails(() => closed.outcome(entry.receiptId), 'INBOX_CLOSED');
    await fails(() => closed.publish(entry.receiptId, 1, { type: 'restarted', attempt: 1 }), 'INBOX_CLOSED');
    await fails(() => closed.events({ receiptId: entry.receiptId }), 'INBOX_CLOSED');
    await fails(() => closed.notify(key, 'entry'), 'INBOX_CLOSED');
    await fails(() => closed.deadLetters(), 'INBOX_CLOSED');
    closed.onNotify(() => undefined)(); // subscribing to a closed inbox is harmless
    if (t.hasAnother) {
      // the storage and the other instances go on: the entry is still there, and can be settled
      const other = await t.another();
      await other.putOutcome(entry.receiptId, doneOutcome(key), 60_000);
      assert.deepEqual(await other.outcome(entry.receiptId), doneOutcome(key));
    }
  });
}

/** The conformance cases of bad input. */
export function inputCases(test: InboxTest): void {
  test('accept refuses a bad session key, signal, payload, id or control with INBOX_INPUT_INVALID and writes nothing', async ({
    inbox,
  }) => {
    const key = newKey();
    const good = { sessionKey: key, signal: text('x'), id: newId() };
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    const bad: unknown[] = [
      undefined,
      'text',
      { ...good, sessionKey: '' },
      { ...good, sessionKey: 42 },
      { ...good, sessionKey: 'a\u0000b' },
      { ...good, sessionKey: 'x\ud800' },
      { ...good, sessionKey: 'k'.repeat(1025) },
      { ...good, signal: 'hello' },
      { ...good, signal: { kind: 'usr_message', payload: 'x' } },
      { ...good, signal: { kind: 'user_message', payload: Number.NaN } },
      { ...good, signal: { kind: 'user_message', payload: { n: 10n } } },
      { ...good, signal: { kind: 'user_message', payload: { f: () => 1 } } },
      { ...good, signal: { kind: 'user_message', payload: cycle } },
      { ...good, signal: { kind: 'user_message' } },
      { ...good, id: '' },
      { ...good, id: 7 },
      { ...good, control: 'restart' },
      { ...good, agentId: '' },
      { ...good, extra: true },
    ];
    for (const entry of bad) {
      await fails(
        () => inbox.accept(entry as { sessionKey: string; signal: SignalJson; id: string }),
        'INBOX_INPUT_INVALID',
      );
    }
    assert.deepEqual(await inbox.acquire('w', { leaseMs: 60_000, max: 10 }), [], 'nothing was written');
    await inbox.accept(good); // and the inbox goes on serving
  });

  test('every other method refuses bad arguments with INBOX_INPUT_INVALID', async ({ inbox }) => {
    const key = newKey();
    await acceptMany(inbox, key, 1);
    const lease = await leaseOn(inbox, key);
    const [entry] = await readAll(inbox, lease);
    assert.ok(entry !== undefined);
    const notLease = { key } as unknown as InboxLease;
    const notEntry = { receiptId: entry.receiptId } as unknown as InboxEntry;
    const code = 'INBOX_INPUT_INVALID';
    await fails(() => inbox.acquire('', { leaseMs: 1000, max: 1 }), code);
    await fails(() => inbox.acquire('w', { leaseMs: 0, max: 1 }), code);
    await fails(() => inbox.acquire('w', { leaseMs: 1.5, max: 1 }), code);
    await fails(() => inbox.acquire('w', { leaseMs: 1000, max: 0 }), code);
    await fails(() => inbox.acquire('w', undefined as unknown as { leaseMs: number; max: number }), code);
    await fails(() => inbox.renew(notLease), code);
    await fails(() => inbox.release(undefined as unknown as InboxLease), code);
    await fails(() => inbox.read(notLease), code);
    await fails(() => inbox.read(lease, 'abc'), code);
    await fails(() => inbox.read(lease, '-1'), code);
    await fails(() => inbox.beginDelivery(notEntry), code);
    await fails(() => inbox.ack(null as unknown as InboxEntry), code);
    await fails(() => inbox.putOutcome('', doneOutcome(key), 1000), code);
    await fails(() => inbox.putOutcome(entry.receiptId, doneOutcome(key), 0), code);
    await fails(() => inbox.putOutcome(entry.receiptId, 'done' as unknown as OutcomeJson, 1000), code);
    await fails(() => inbox.putOutcome(entry.receiptId, { ...doneOutcome(key), output: Number.NaN }, 1000), code);
    await fails(() => inbox.outcome(''), code);
    await fails(() => inbox.outcome(entry.receiptId, { timeoutMs: -1 }), code);
    await fails(() => inbox.publish(entry.receiptId, 0, { type: 'restarted', attempt: 1 }), code);
    await fails(() => inbox.publish(entry.receiptId, 1, null as unknown as never), code);
    await fails(() => inbox.publish(entry.receiptId, 1, { type: 'restarted', attempt: 0 }), code);
    await fails(() => inbox.events({} as unknown as { receiptId: string }), code);
    await fails(() => inbox.events({ receiptId: 'r', sessionKey: key }), code);
    await fails(() => inbox.events({ sessionKey: key }, { from: '1' }), code);
    await fails(() => inbox.events({ receiptId: entry.receiptId }, { from: 'x' }), code);
    await fails(() => inbox.notify(key, 'wake' as InboxNotice), code);
    await fails(() => inbox.notify('', 'entry'), code);
    await fails(() => inbox.deadLetters({ limit: 0 }), code);
    // nothing changed: the entry is still there, undelivered
    const [still] = await readAll(inbox, lease);
    assert.equal(still?.attempts, 0);
    await rejects(inbox.outcome(entry.receiptId, { timeoutMs: 10 }), 'OUTCOME_TIMEOUT');
  });
}
