import assert from 'node:assert/strict';
import type { InboxEntry } from '../inbox.js';
import {
  acceptMany,
  eventually,
  fails,
  leaseOn,
  newId,
  newKey,
  readAll,
  rejects,
  settle,
  text,
  type InboxTest,
} from './inbox-conformance-support.js';

/** A lease short enough to wait out in real time. */
const SHORT_LEASE_MS = 200;
/** Long enough to outlive any case. */
const LONG_LEASE_MS = 120_000;

/** The conformance cases of leases. */
export function leaseCases(test: InboxTest): void {
  test('acquire resolves [] when nothing waits', async ({ inbox }) => {
    assert.deepEqual(await inbox.acquire('w', { leaseMs: LONG_LEASE_MS, max: 10 }), []);
  });

  test('acquire gives leases only on keys with entries, at most max, with the worker id, a token and an expiry', async ({
    inbox,
  }) => {
    const keys = [newKey('a'), newKey('b'), newKey('c')];
    for (const key of keys) await acceptMany(inbox, key, 2);
    const first = await inbox.acquire('worker-1', { leaseMs: LONG_LEASE_MS, max: 2 });
    assert.equal(first.length, 2);
    const rest = await inbox.acquire('worker-1', { leaseMs: LONG_LEASE_MS, max: 10 });
    assert.equal(rest.length, 1);
    const all = [...first, ...rest];
    assert.deepEqual(all.map((l) => l.key).sort(), [...keys].sort());
    for (const lease of all) {
      assert.equal(lease.workerId, 'worker-1');
      assert.ok(typeof lease.token === 'string' && lease.token.length > 0);
      assert.ok(!Number.isNaN(Date.parse(lease.expiresAt)), `expiresAt ${lease.expiresAt}`);
    }
    assert.equal(new Set(all.map((l) => l.token)).size, 3);
  });

  test('acquire takes the key whose entries wait longest first', async ({ inbox }) => {
    const older = newKey('older');
    const newer = newKey('newer');
    await acceptMany(inbox, older, 1);
    await acceptMany(inbox, newer, 1);
    const [lease] = await inbox.acquire('w', { leaseMs: LONG_LEASE_MS, max: 1 });
    assert.equal(lease?.key, older);
  });

  test('a key is never leased to two workers while a lease on it is live (two instances where possible)', async (t) => {
    const keys = Array.from({ length: 6 }, (_, i) => newKey(String(i)));
    for (const key of keys) await acceptMany(t.inbox, key, 1);
    const other = await t.another();
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        (i % 2 === 0 ? t.inbox : other).acquire(`w${i}`, { leaseMs: LONG_LEASE_MS, max: 3 }),
      ),
    );
    const leased = results.flat().map((l) => l.key);
    assert.equal(new Set(leased).size, leased.length, `leased twice: ${leased.join(', ')}`);
    assert.deepEqual([...leased].sort(), [...keys].sort());
    assert.deepEqual(await t.inbox.acquire('late', { leaseMs: LONG_LEASE_MS, max: 10 }), []);
  });

  test('a key whose entries were all acknowledged is not acquired', async ({ inbox }) => {
    const key = newKey();
    await acceptMany(inbox, key, 1);
    const lease = await leaseOn(inbox, key);
    const [entry] = await readAll(inbox, lease);
    await inbox.beginDelivery(entry as InboxEntry);
    await settle(inbox, entry as InboxEntry);
    await inbox.release(lease);
    assert.deepEqual(await inbox.acquire('w2', { leaseMs: LONG_LEASE_MS, max: 10 }), []);
  });
}

/** The conformance cases of lease expiry, renewal and release. */
export function leaseLifeCases(test: InboxTest): void {
  test('an expired lease is taken over by another worker, with a new token; the old one cannot renew or read', async (t) => {
    const key = newKey();
    await acceptMany(t.inbox, key, 2);
    const old = await leaseOn(t.inbox, key, 'worker-a', SHORT_LEASE_MS);
    const other = await t.another();
    assert.deepEqual(await other.acquire('worker-b', { leaseMs: LONG_LEASE_MS, max: 10 }), []);
    await t.elapse(SHORT_LEASE_MS + 200);
    const [taken, ...more] = await other.acquire('worker-b', { leaseMs: LONG_LEASE_MS, max: 10 });
    assert.ok(taken !== undefined);
    assert.equal(more.length, 0);
    assert.equal(taken.key, key);
    assert.equal(taken.workerId, 'worker-b');
    assert.notEqual(taken.token, old.token);
    assert.equal(await t.inbox.renew(old), false);
    await fails(() => readAll(t.inbox, old), 'LEASE_LOST');
    assert.equal((await readAll(other, taken)).length, 2);
  });

  test('renew is false once the lease expired, even when nobody took the key', async (t) => {
    const key = newKey();
    await acceptMany(t.inbox, key, 1);
    const lease = await leaseOn(t.inbox, key, 'worker-a', SHORT_LEASE_MS);
    await t.elapse(SHORT_LEASE_MS + 200);
    assert.equal(await t.inbox.renew(lease), false);
  });

  test('renew extends a live lease by its leaseMs, from now', async (t) => {
    const key = newKey();
    await acceptMany(t.inbox, key, 1);
    const leaseMs = 2000;
    const lease = await leaseOn(t.inbox, key, 'worker-a', leaseMs);
    await t.elapse(1200);
    assert.equal(await t.inbox.renew(lease), true);
    await t.elapse(1200); // past the first expiry, within the renewed one
    assert.deepEqual(await t.inbox.acquire('worker-b', { leaseMs: LONG_LEASE_MS, max: 10 }), []);
    assert.equal(await t.inbox.renew(lease), true);
  });

  test('release makes the key acquirable at once, and is not a delivery', async (t) => {
    const key = newKey();
    await acceptMany(t.inbox, key, 1);
    const lease = await leaseOn(t.inbox, key, 'worker-a');
    const [entry] = await readAll(t.inbox, lease);
    assert.equal(await t.inbox.beginDelivery(entry as InboxEntry), 1);
    await t.inbox.release(lease);
    assert.equal(await t.inbox.renew(lease), false);
    const other = await t.another();
    const [next] = await other.acquire('worker-b', { leaseMs: LONG_LEASE_MS, max: 10 });
    assert.equal(next?.key, key);
    const [again] = await readAll(other, next);
    assert.equal(again?.attempts, 0, 'the released delivery does not count');
    assert.equal(await other.beginDelivery(again), 1);
  });

  test('release of a lease already lost is ignored, and leaves the new holder alone', async (t) => {
    const key = newKey();
    await acceptMany(t.inbox, key, 1);
    const old = await leaseOn(t.inbox, key, 'worker-a', SHORT_LEASE_MS);
    await t.elapse(SHORT_LEASE_MS + 200);
    const [taken] = await t.inbox.acquire('worker-b', { leaseMs: LONG_LEASE_MS, max: 10 });
    assert.ok(taken !== undefined);
    await t.inbox.release(old);
    assert.equal(await t.inbox.renew(taken), true);
    assert.deepEqual(await t.inbox.acquire('worker-c', { leaseMs: LONG_LEASE_MS, max: 10 }), []);
  });
}

/** The conformance cases of `read`. */
export function readCases(test: InboxTest): void {
  test('read yields the entries in seq order, skipping those at or below afterSeq', async ({ inbox }) => {
    const key = newKey();
    const receipts = await acceptMany(inbox, key, 5);
    const lease = await leaseOn(inbox, key);
    const all = await readAll(inbox, lease);
    assert.deepEqual(
      all.map((e) => e.receiptId),
      receipts.map((r) => r.receiptId),
    );
    assert.deepEqual(
      all.map((e) => e.signal.payload),
      ['m0', 'm1', 'm2', 'm3', 'm4'],
    );
    const after = await readAll(inbox, lease, receipts[1]?.seq);
    assert.deepEqual(
      after.map((e) => e.seq),
      receipts.slice(2).map((r) => r.seq),
    );
    assert.deepEqual(await readAll(inbox, lease, receipts[4]?.seq), []);
  });

  test('read goes past a page: a backlog of 250 entries, in order', async ({ inbox }) => {
    const key = newKey();
    const receipts = await acceptMany(inbox, key, 250);
    const entries = await readAll(inbox, await leaseOn(inbox, key));
    assert.deepEqual(
      entries.map((e) => e.seq),
      receipts.map((r) => r.seq),
    );
  });

  test('read yields entries accepted while it iterates', async ({ inbox }) => {
    const key = newKey();
    await acceptMany(inbox, key, 1, 'first');
    const lease = await leaseOn(inbox, key);
    const seen: string[] = [];
    for await (const entry of inbox.read(lease)) {
      seen.push(entry.signal.payload as string);
      if (seen.length === 1) await acceptMany(inbox, key, 2, 'later');
    }
    assert.deepEqual(seen, ['first0', 'later0', 'later1']);
  });

  test('an acknowledged entry is no longer read; the others are', async ({ inbox }) => {
    const key = newKey();
    await acceptMany(inbox, key, 3);
    const lease = await leaseOn(inbox, key);
    const [first, second] = await readAll(inbox, lease);
    await inbox.beginDelivery(second as InboxEntry);
    await settle(inbox, second as InboxEntry);
    await inbox.ack(second as InboxEntry); // idempotent
    assert.deepEqual(
      (await readAll(inbox, lease)).map((e) => e.signal.payload),
      ['m0', 'm2'],
    );
    assert.equal(first?.signal.payload, 'm0');
  });

  test('read yields only the lease key entries', async ({ inbox }) => {
    const a = newKey('a');
    const b = newKey('b');
    await acceptMany(inbox, a, 2, 'a');
    await acceptMany(inbox, b, 2, 'b');
    const entries = await readAll(inbox, await leaseOn(inbox, b));
    assert.deepEqual(
      entries.map((e) => e.signal.payload),
      ['b0', 'b1'],
    );
  });
}

/** The conformance cases of delivery counts. */
export function deliveryCases(test: InboxTest): void {
  test('beginDelivery counts every delivery durably, and read shows the count (across instances where possible)', async (t) => {
    const key = newKey();
    await acceptMany(t.inbox, key, 1);
    const lease = await leaseOn(t.inbox, key);
    const [entry] = await readAll(t.inbox, lease);
    assert.equal(entry?.attempts, 0);
    assert.equal(await t.inbox.beginDelivery(entry), 1);
    assert.equal(await t.inbox.beginDelivery(entry), 2);
    const [reread] = await readAll(t.inbox, lease);
    assert.equal(reread?.attempts, 2);
    assert.equal(await t.inbox.beginDelivery(reread), 3);
    const other = await t.another();
    assert.equal(await other.beginDelivery(reread), 4);
  });

  test('a delivery count survives a worker whose lease expired; the next worker counts on', async (t) => {
    const key = newKey();
    await acceptMany(t.inbox, key, 1);
    const first = await leaseOn(t.inbox, key, 'worker-a', SHORT_LEASE_MS);
    const [entry] = await readAll(t.inbox, first);
    assert.equal(await t.inbox.beginDelivery(entry as InboxEntry), 1);
    await t.elapse(SHORT_LEASE_MS + 200); // worker-a died mid-turn
    const other = await t.another();
    const [second] = await other.acquire('worker-b', { leaseMs: LONG_LEASE_MS, max: 10 });
    const [again] = await readAll(other, second as NonNullable<typeof second>);
    assert.equal(again?.attempts, 1);
    assert.equal(await other.beginDelivery(again), 2);
  });

  test('beginDelivery of an entry read under a lost lease rejects with LEASE_LOST', async (t) => {
    const key = newKey();
    await acceptMany(t.inbox, key, 1);
    const first = await leaseOn(t.inbox, key, 'worker-a', SHORT_LEASE_MS);
    const [entry] = await readAll(t.inbox, first);
    await t.elapse(SHORT_LEASE_MS + 200);
    await eventually(
      t,
      async () => (await t.inbox.acquire('worker-b', { leaseMs: LONG_LEASE_MS, max: 10 })).length === 1,
      'the takeover',
    );
    await rejects(t.inbox.beginDelivery(entry as InboxEntry), 'LEASE_LOST');
  });

  test('beginDelivery of an entry another worker acknowledged rejects with LEASE_LOST', async ({ inbox }) => {
    const key = newKey();
    await inbox.accept({ sessionKey: key, signal: text('x'), id: newId() });
    const lease = await leaseOn(inbox, key);
    const [entry] = await readAll(inbox, lease);
    await inbox.beginDelivery(entry as InboxEntry);
    await settle(inbox, entry as InboxEntry);
    await rejects(inbox.beginDelivery(entry as InboxEntry), 'LEASE_LOST');
  });
}
