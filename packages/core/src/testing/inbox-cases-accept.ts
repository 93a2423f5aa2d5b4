import assert from 'node:assert/strict';
import type { Inbox, InboxReceipt } from '../inbox.js';
import {
  acceptMany,
  leaseOn,
  newId,
  newKey,
  readAll,
  rejects,
  seededRandom,
  seqOrder,
  settle,
  text,
  type InboxTest,
} from './inbox-conformance-support.js';

/** The conformance cases of `accept` and `seq`. */
export function acceptCases(test: InboxTest): void {
  test('accept resolves a receipt: a receipt id, the session key, a decimal seq and an ISO time', async ({ inbox }) => {
    const key = newKey();
    const receipt = await inbox.accept({ sessionKey: key, signal: text('hello'), id: newId() });
    assert.equal(typeof receipt.receiptId, 'string');
    assert.ok(receipt.receiptId.length > 0);
    assert.equal(receipt.sessionKey, key);
    assert.match(receipt.seq, /^(0|[1-9][0-9]*)$/);
    assert.ok(!Number.isNaN(Date.parse(receipt.acceptedAt)), `acceptedAt ${receipt.acceptedAt} is not a date`);
  });

  test('seq strictly increases per session key in accept order, and keys are independent', async ({ inbox }) => {
    const a = newKey('a');
    const b = newKey('b');
    const seqs: Record<string, string[]> = { [a]: [], [b]: [] };
    for (const key of [a, b, a, a, b, a, b, b]) {
      const receipt = await inbox.accept({ sessionKey: key, signal: text(key), id: newId() });
      seqs[key]?.push(receipt.seq);
    }
    for (const key of [a, b]) {
      const list = seqs[key] as string[];
      for (let i = 1; i < list.length; i++) {
        assert.ok(
          seqOrder(list[i - 1] as string, list[i] as string) < 0,
          `${key}: ${list.join(', ')} is not increasing`,
        );
      }
    }
    // each key's entries are its own, in seq order
    const entries = await readAll(inbox, await leaseOn(inbox, a));
    assert.deepEqual(
      entries.map((e) => e.seq),
      seqs[a],
    );
    assert.ok(entries.every((e) => e.sessionKey === a));
  });

  test('receipt ids are unique across session keys', async ({ inbox }) => {
    const ids = new Set<string>();
    for (let i = 0; i < 20; i++) {
      ids.add((await inbox.accept({ sessionKey: newKey(String(i % 3)), signal: text('x'), id: newId() })).receiptId);
    }
    assert.equal(ids.size, 20);
  });

  test('an entry keeps its signal, agent id and control exactly', async ({ inbox }) => {
    const key = newKey();
    const payload = {
      text: 'a\u0000b \ud800 👩‍👩‍👧 שלום',
      nested: [[1, [2, { deep: true }]], null],
      n: Number.MAX_SAFE_INTEGER,
      tiny: 1e-300,
    };
    await inbox.accept({ sessionKey: key, signal: { kind: 'custom:order', payload }, id: newId(), agentId: 'billing' });
    await inbox.accept({ sessionKey: key, signal: { kind: 'stop', payload: null }, id: newId(), control: 'rewind' });
    const [first, second] = await readAll(inbox, await leaseOn(inbox, key));
    assert.ok(first !== undefined && second !== undefined);
    assert.deepEqual(first.signal, { kind: 'custom:order', payload });
    assert.equal(first.agentId, 'billing');
    assert.equal(first.control, undefined);
    assert.equal(first.attempts, 0);
    assert.deepEqual(second.signal, { kind: 'stop', payload: null });
    assert.equal(second.agentId, undefined);
    assert.equal(second.control, 'rewind');
  });
}

/** The conformance case of concurrent accepts: seq in commit order. */
export function concurrentAcceptCases(test: InboxTest): void {
  test('concurrent accepts (two instances where possible): distinct seqs per key, and a reader never sees a later seq before an earlier one', async (t) => {
    const other = await t.another();
    for (const seed of [11, 23, 37]) {
      const random = seededRandom(seed);
      const keys = [newKey('a'), newKey('b'), newKey('c')];
      const expected = new Map<string, InboxReceipt[]>();
      for (const key of keys) expected.set(key, await acceptMany(t.inbox, key, 1, 'seed'));
      const leases = [];
      for (const key of keys) leases.push(await leaseOn(t.inbox, key, `observer-${seed}`));
      const seen = new Map<string, string[][]>(keys.map((k) => [k, []]));
      let done = false;
      const observer = (async () => {
        while (!done) {
          for (const lease of leases) {
            const visible = (await readAll(t.inbox, lease)).map((e) => e.seq);
            seen.get(lease.key)?.push(visible);
          }
        }
      })();
      const accepts = Array.from({ length: 40 }, (_, i) => {
        const key = keys[Math.floor(random() * keys.length)] as string;
        const via: Inbox = random() < 0.5 ? t.inbox : other;
        return via.accept({ sessionKey: key, signal: text(`c${i}`), id: newId() }).then((receipt) => {
          expected.get(key)?.push(receipt);
          return receipt;
        });
      });
      await Promise.all(accepts);
      done = true;
      await observer;
      for (const lease of leases) {
        const final = (await readAll(t.inbox, lease)).map((e) => e.seq);
        const mine = (expected.get(lease.key) as InboxReceipt[]).map((r) => r.seq).sort(seqOrder);
        assert.deepEqual(
          final,
          mine,
          `seed ${seed}: ${lease.key} reads ${final.join(',')} for accepted ${mine.join(',')}`,
        );
        assert.equal(new Set(final).size, final.length, `seed ${seed}: duplicate seqs ${final.join(',')}`);
        for (const visible of seen.get(lease.key) ?? []) {
          assert.deepEqual(
            visible,
            final.slice(0, visible.length),
            `seed ${seed}: saw ${visible.join(',')} before ${final.join(',')}`,
          );
        }
      }
    }
  });
}

/** The conformance cases of dedupe ids. */
export function dedupeCases(test: InboxTest): void {
  test('an id accepted within the window returns the first receipt and appends nothing', async ({ inbox }) => {
    const key = newKey();
    const id = newId();
    const first = await inbox.accept({ sessionKey: key, signal: text('once'), id });
    const again = await inbox.accept({ sessionKey: key, signal: text('once, retried'), id });
    assert.deepEqual(again, first);
    const entries = await readAll(inbox, await leaseOn(inbox, key));
    assert.equal(entries.length, 1);
    assert.deepEqual(entries[0]?.signal, text('once'));
  });

  test('an id is remembered across session keys and instances: the first receipt, nothing appended', async (t) => {
    const a = newKey('a');
    const b = newKey('b');
    const id = newId();
    const first = await t.inbox.accept({ sessionKey: a, signal: text('x'), id });
    const other = await t.another();
    assert.deepEqual(await other.accept({ sessionKey: b, signal: text('y'), id }), first);
    assert.deepEqual(await t.inbox.acquire('w', { leaseMs: 60_000, max: 10 }).then((l) => l.map((x) => x.key)), [a]);
  });

  test('an id is remembered after its entry was settled', async ({ inbox }) => {
    const key = newKey();
    const id = newId();
    const first = await inbox.accept({ sessionKey: key, signal: text('x'), id });
    const lease = await leaseOn(inbox, key);
    const [entry] = await readAll(inbox, lease);
    assert.ok(entry !== undefined);
    await inbox.beginDelivery(entry);
    await settle(inbox, entry);
    assert.deepEqual(await inbox.accept({ sessionKey: key, signal: text('x'), id }), first);
    assert.deepEqual(await readAll(inbox, lease), []);
  });

  test('concurrent accepts with one id: one entry, every call gets its receipt', async (t) => {
    const key = newKey();
    const id = newId();
    const other = await t.another();
    const receipts = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        (i % 2 === 0 ? t.inbox : other).accept({ sessionKey: key, signal: text('x'), id }),
      ),
    );
    for (const receipt of receipts) assert.deepEqual(receipt, receipts[0]);
    assert.equal((await readAll(t.inbox, await leaseOn(t.inbox, key))).length, 1);
  });

  test(
    'after dedupeWindowMs the id is forgotten: a new entry with a new receipt',
    async (t) => {
      const key = newKey();
      const id = newId();
      const first = await t.inbox.accept({ sessionKey: key, signal: text('x'), id });
      await t.elapse(600);
      const second = await t.inbox.accept({ sessionKey: key, signal: text('x'), id });
      assert.notEqual(second.receiptId, first.receiptId);
      assert.ok(seqOrder(first.seq, second.seq) < 0);
      assert.equal((await readAll(t.inbox, await leaseOn(t.inbox, key))).length, 2);
    },
    { dedupeWindowMs: 300 },
  );
}

/** The conformance cases of back-pressure. */
export function backPressureCases(test: InboxTest): void {
  test(
    'INBOX_FULL per session at maxPendingPerSession, with retryAfterMs; other sessions go on; an ack makes room',
    async ({ inbox }) => {
      const key = newKey();
      await acceptMany(inbox, key, 3);
      const error = await rejects(
        inbox.accept({ sessionKey: key, signal: text('too many'), id: newId() }),
        'INBOX_FULL',
      );
      const retryAfterMs = (error as { retryAfterMs?: unknown }).retryAfterMs;
      assert.ok(typeof retryAfterMs === 'number' && retryAfterMs > 0, `retryAfterMs ${String(retryAfterMs)}`);
      await inbox.accept({ sessionKey: newKey('other'), signal: text('fine'), id: newId() });
      const lease = await leaseOn(inbox, key);
      const entries = await readAll(inbox, lease);
      assert.equal(entries.length, 3, 'the refused entry was not written');
      await inbox.beginDelivery(entries[0] as (typeof entries)[number]);
      await settle(inbox, entries[0] as (typeof entries)[number]);
      await inbox.accept({ sessionKey: key, signal: text('room again'), id: newId() });
      assert.equal((await readAll(inbox, lease)).length, 3);
    },
    { maxPendingPerSession: 3 },
  );

  test(
    'INBOX_FULL for the whole inbox at maxPending, with retryAfterMs',
    async ({ inbox }) => {
      for (let i = 0; i < 4; i++) await inbox.accept({ sessionKey: newKey(String(i)), signal: text('x'), id: newId() });
      const error = await rejects(
        inbox.accept({ sessionKey: newKey('5'), signal: text('x'), id: newId() }),
        'INBOX_FULL',
      );
      assert.ok(((error as { retryAfterMs?: number }).retryAfterMs ?? 0) > 0);
      assert.equal((await inbox.acquire('w', { leaseMs: 60_000, max: 100 })).length, 4);
    },
    { maxPending: 4 },
  );

  test(
    'a retry of an accepted id is answered even when the session is full',
    async ({ inbox }) => {
      const key = newKey();
      const id = newId();
      const first = await inbox.accept({ sessionKey: key, signal: text('x'), id });
      await acceptMany(inbox, key, 1);
      await rejects(inbox.accept({ sessionKey: key, signal: text('x'), id: newId() }), 'INBOX_FULL');
      assert.deepEqual(await inbox.accept({ sessionKey: key, signal: text('x'), id }), first);
    },
    { maxPendingPerSession: 2 },
  );
}
