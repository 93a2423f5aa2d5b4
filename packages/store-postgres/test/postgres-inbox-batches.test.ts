// PostgresInbox sends the reads, delivery counts, settles and stream appends made while one of
// their kind is in flight together, in one statement: each call must end exactly as it would
// alone. The calls here are made all at once, so all but the first go out in a batch.
import { InboxError, type InboxEntry, type InboxLease, type OutcomeJson } from '@signalyard/core';
import { PostgresInbox } from '@signalyard/store-postgres';
import { collect, rejectsCode } from '@signalyard/test-utils';
import {
  DATABASE_URL,
  adminPool,
  describePostgres,
  dropTablesAndEnd,
  uniqueTable,
} from '@signalyard/test-utils/postgres';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { finishManyKey } from '../src/postgres-inbox-batch-statements.js';
import { Batcher } from '../src/postgres-batcher.js';
import { inboxNames } from '../src/postgres-inbox-names.js';
import { inboxSql } from '../src/postgres-inbox-statements.js';
import { parseTableName, type TableName } from '../src/postgres-table-name.js';
import { dropInbox } from './inbox-support.js';

const tables: string[] = [];
const open: PostgresInbox[] = [];
const text = (payload: string) => ({ kind: 'user_message', payload }) as const;
const KEYS = Array.from({ length: 6 }, (_, i) => `agent:main:batch-${String(i)}`);

afterEach(async () => {
  for (const inbox of open.splice(0)) await inbox.close();
});
afterAll(async () => {
  for (const table of tables) await dropInbox(table);
  await dropTablesAndEnd([]);
});

async function freshInbox(): Promise<PostgresInbox> {
  const table = uniqueTable('inboxb');
  tables.push(table);
  const inbox = new PostgresInbox({ connectionString: DATABASE_URL, table, maxConnections: 4 });
  open.push(inbox);
  await inbox.migrate();
  return inbox;
}

/** `perKey` entries accepted for each of KEYS, every key leased, and the entries read: by key. */
async function leasedEntries(
  inbox: PostgresInbox,
  perKey: number,
): Promise<{ leases: InboxLease[]; entries: Map<string, InboxEntry[]> }> {
  for (let n = 0; n < perKey; n++)
    for (const key of KEYS)
      await inbox.accept({ sessionKey: key, signal: text(`${key} ${String(n)}`), id: `${key}-${String(n)}` });
  const leases = await inbox.acquire('w', { leaseMs: 60_000, max: KEYS.length });
  expect(leases).toHaveLength(KEYS.length);
  const pages = await Promise.all(leases.map((lease) => collect(inbox.read(lease))));
  return { leases, entries: new Map(leases.map((lease, i) => [lease.key, pages[i] as InboxEntry[]])) };
}

const completed = (receiptId: string): OutcomeJson =>
  ({
    status: 'completed',
    sessionKey: 'agent:main:x',
    agentId: 'main',
    output: receiptId,
    decidedBy: { tier: 'fsm', route: { kind: 'user_message', action: 'continue' } },
  }) as unknown as OutcomeJson;

describe('Batcher', () => {
  it('sends one call at once, and the calls made meanwhile together; ids never share a batch; a failed batch fails each call', async () => {
    const sent: string[][] = [];
    let fail = false;
    const batcher = new Batcher<string, string>(
      {
        one: async (input) => {
          sent.push([input]);
          await Promise.resolve();
          if (fail) throw new Error('down');
          return `${input}!`;
        },
        many: async (inputs) => {
          sent.push([...inputs]);
          await Promise.resolve();
          if (fail) throw new Error('down');
          return inputs.map((i) => `${i}!`);
        },
        idOf: (input) => input[0] as string,
      },
      1,
    );
    const results = await Promise.all(['a1', 'b1', 'c1', 'a2', 'd1'].map((i) => batcher.run(i)));
    expect(results).toEqual(['a1!', 'b1!', 'c1!', 'a2!', 'd1!']);
    // a2 shares its id with a1, not with anything of the second batch
    expect(sent).toEqual([['a1'], ['b1', 'c1', 'a2', 'd1']]);
    sent.length = 0;
    const first = batcher.run('x1');
    const again = [batcher.run('y1'), batcher.run('y2')]; // same id: two batches
    await Promise.all([first, ...again]);
    expect(sent).toEqual([['x1'], ['y1'], ['y2']]);
    fail = true;
    const failed = await Promise.allSettled(['p', 'q', 'r'].map((i) => batcher.run(i)));
    expect(failed.map((f) => f.status)).toEqual(['rejected', 'rejected', 'rejected']);
  });
});

describePostgres('PostgresInbox batches', () => {
  it('accepts made at once: seq in call order per key, a retried id gets its first receipt, a full session refuses alone', async () => {
    const table = uniqueTable('inboxa');
    tables.push(table);
    const inbox = new PostgresInbox({
      connectionString: DATABASE_URL,
      table,
      maxConnections: 4,
      maxPendingPerSession: 5,
    });
    open.push(inbox);
    await inbox.migrate();
    const first = await inbox.accept({ sessionKey: KEYS[0] as string, signal: text('first'), id: 'first' });
    const calls = Array.from({ length: 24 }, (_, i) => ({
      sessionKey: KEYS[i % 4] as string,
      signal: text(String(i)),
      id: i === 5 ? 'first' : i === 9 ? 'twice' : i === 13 ? 'twice' : `call-${String(i)}`,
    }));
    const settled = await Promise.allSettled(calls.map((call) => inbox.accept(call)));
    const receipts = settled.map((r) => (r.status === 'fulfilled' ? r.value : undefined));
    expect(receipts[5]).toEqual(first);
    expect(receipts[13]?.receiptId).toBe(receipts[9]?.receiptId);
    for (let k = 0; k < 4; k++) {
      const mine = settled.flatMap((r, i) => (i % 4 === k && i !== 5 && i !== 13 ? [r] : []));
      const seqs = mine.flatMap((r) => (r.status === 'fulfilled' ? [Number(r.value.seq)] : []));
      const start = k === 0 ? 2 : 1;
      // in call order, up to the limit of 5 pending (KEYS[0] held one already); the rest refused
      const accepted = Math.min(mine.length, 6 - start);
      expect(seqs).toEqual(Array.from({ length: accepted }, (_, i) => start + i));
      for (const r of mine.slice(seqs.length)) {
        expect(r.status).toBe('rejected');
        expect(InboxError.isInstance((r as PromiseRejectedResult).reason)).toBe(true);
        expect(((r as PromiseRejectedResult).reason as InboxError).code).toBe('INBOX_FULL');
      }
    }
    const pending = await inbox.pending();
    expect(pending.map((e) => e.signal)).toEqual(
      [...pending]
        .sort((a, b) => a.sessionKey.localeCompare(b.sessionKey) || Number(a.seq) - Number(b.seq))
        .map((e) => e.signal),
    );
    expect(pending).toHaveLength(19);
  });

  it('accepts made at once are made one by one when the batch is refused (here: a database without the batch function)', async () => {
    const inbox = await freshInbox();
    await adminPool().query(`DROP FUNCTION "${inbox.table}_accept_many"`);
    const receipts = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        inbox.accept({ sessionKey: KEYS[0] as string, signal: text(String(i)), id: `one-${String(i)}` }),
      ),
    );
    expect(receipts.map((r) => r.seq)).toEqual(['1', '2', '3', '4', '5', '6']);
  });

  it('reads of several leases at once each get their own entries, in seq order; a lost lease still reads as lost', async () => {
    const inbox = await freshInbox();
    const { leases, entries } = await leasedEntries(inbox, 3);
    for (const lease of leases) {
      const got = entries.get(lease.key) ?? [];
      expect(got.map((e) => e.sessionKey)).toEqual([lease.key, lease.key, lease.key]);
      expect(got.map((e) => e.seq)).toEqual(['1', '2', '3']);
    }
    const stale = { ...(leases[0] as InboxLease), token: 'not-the-token' };
    const results = await Promise.allSettled([
      ...leases.map((lease) => collect(inbox.read(lease, '1'))),
      collect(inbox.read(stale)),
    ]);
    for (const [i, r] of results.slice(0, leases.length).entries()) {
      expect(r.status).toBe('fulfilled');
      const page = (r as PromiseFulfilledResult<InboxEntry[]>).value;
      expect(page.map((e) => [e.sessionKey, e.seq])).toEqual([
        [leases[i]?.key, '2'],
        [leases[i]?.key, '3'],
      ]);
    }
    const lost = results[leases.length] as PromiseRejectedResult;
    expect(InboxError.isInstance(lost.reason) && lost.reason.code).toBe('LEASE_LOST');
  });

  it('delivery counts made at once: each entry counted once; an entry gone or under a lost lease rejects (LEASE_LOST) as alone', async () => {
    const inbox = await freshInbox();
    const { leases, entries } = await leasedEntries(inbox, 2);
    const firsts = leases.map((lease) => (entries.get(lease.key) ?? [])[0] as InboxEntry);
    const gone = (entries.get(KEYS[0] as string) ?? [])[1] as InboxEntry;
    await inbox.ack(gone);
    // Another worker's lease on the last key: entries read under the old one are no longer counted.
    const lastKey = leases[leases.length - 1]?.key as string;
    await adminPool().query(`UPDATE "${inbox.table}_keys" SET lease_expires = clock_timestamp() WHERE key = $1`, [
      lastKey,
    ]);
    const [taken] = await inbox.acquire('other', { leaseMs: 60_000, max: 1 });
    expect(taken?.key).toBe(lastKey);
    const results = await Promise.allSettled([...firsts, gone].map((e) => inbox.beginDelivery(e)));
    expect(results.slice(0, -2).map((r) => (r as PromiseFulfilledResult<number>).value)).toEqual(
      firsts.slice(0, -1).map(() => 1),
    );
    const lost = (results[results.length - 2] as PromiseRejectedResult).reason as InboxError;
    expect([lost.code, lost.message]).toEqual(['LEASE_LOST', expect.stringContaining('expired or was taken over')]);
    const settled = (results[results.length - 1] as PromiseRejectedResult).reason as InboxError;
    expect([settled.code, settled.message]).toEqual(['LEASE_LOST', expect.stringContaining('no longer in the inbox')]);
    // Counted once each: a second round counts 2.
    const again = await Promise.all(firsts.slice(0, -1).map((e) => inbox.beginDelivery(e)));
    expect(again).toEqual(firsts.slice(0, -1).map(() => 2));
  });

  it('settles made at once: outcomes stored, events appended after the log, dead letters kept, entries and counters gone', async () => {
    const inbox = await freshInbox();
    const { entries } = await leasedEntries(inbox, 2);
    const all = [...entries.values()].flat();
    const first = all.filter((e) => e.seq === '1');
    await inbox.publish(first[0]?.receiptId as string, 1, { type: 'text_delta', agentId: 'main', delta: 'before' });
    const poisoned = first[1] as InboxEntry;
    const poison = {
      status: 'failed',
      sessionKey: poisoned.sessionKey,
      agentId: 'main',
      error: { code: 'INBOX_POISONED', message: 'poisoned', fields: {} },
    } as unknown as OutcomeJson;
    // Waiters in another process (another inbox instance) learn of the batch's outcomes by its notices.
    const other = new PostgresInbox({ connectionString: DATABASE_URL, table: inbox.table, maxConnections: 2 });
    open.push(other);
    const waits = first.map((e) => other.outcome(e.receiptId, { timeoutMs: 20_000 }));
    await other.listening();
    await Promise.all(
      first.map((e) =>
        inbox.settle(e, e === poisoned ? poison : completed(e.receiptId), 60_000, {
          attempt: 1,
          events: [{ type: 'text_delta', agentId: 'main', delta: `for ${e.receiptId}` }],
        }),
      ),
    );
    expect((await Promise.all(waits)).map((o) => o.status)).toEqual(
      first.map((e) => (e === poisoned ? 'failed' : 'completed')),
    );
    for (const e of first) {
      const outcome = await inbox.outcome(e.receiptId, { timeoutMs: 5000 });
      expect(outcome.status).toBe(e === poisoned ? 'failed' : 'completed');
    }
    const log = await collect(inbox.events({ receiptId: first[0]?.receiptId as string }));
    expect(log.map((v) => v.offset)).toEqual(['1', '2']);
    expect(log.map((v) => (v.event as { delta?: string }).delta)).toEqual([
      'before',
      `for ${first[0]?.receiptId as string}`,
    ]);
    const dead = await collect(inbox.deadLetters());
    expect(dead.map((d) => d.entry.receiptId)).toEqual([poisoned.receiptId]);
    const pending = await inbox.pending();
    expect(pending.map((e) => e.seq)).toEqual(KEYS.map(() => '2'));
    const { rows } = await adminPool().query<{ pending: string }>(
      `SELECT sum(pending)::text AS pending FROM "${inbox.table}_counters"`,
    );
    expect(rows[0]?.pending).toBe(String(KEYS.length));
    const keys = await adminPool().query<{ pending: number }>(`SELECT pending FROM "${inbox.table}_keys"`);
    expect(keys.rows.map((r) => r.pending)).toEqual(KEYS.map(() => 1));
    // Settled twice at once (the same receipt never shares a batch): the first outcome stays.
    const second = all.filter((e) => e.seq === '2');
    await Promise.all([
      ...second.map((e) => inbox.settle(e, completed(e.receiptId), 60_000)),
      inbox.settle(second[0] as InboxEntry, completed('other'), 60_000),
    ]);
    const kept = await inbox.outcome(second[0]?.receiptId as string, { timeoutMs: 5000 });
    expect((kept as unknown as { output: string }).output).toBe(second[0]?.receiptId);
    expect(await inbox.pending()).toEqual([]);
    const gone = await rejectsCode(inbox.beginDelivery(second[1] as InboxEntry), 'LEASE_LOST');
    expect(gone.message).toContain('no longer in the inbox');
  });
  it('appends made at once: each log gets its events in order after its last offset, with its notice; a settled entry rejects alone', async () => {
    const inbox = await freshInbox();
    const { entries } = await leasedEntries(inbox, 1);
    const [gone, ...live] = [...entries.values()].flat();
    await inbox.publish(live[0]?.receiptId as string, 1, { type: 'text_delta', agentId: 'main', delta: 'first' });
    await inbox.settle(gone as InboxEntry, completed(gone?.receiptId as string), 60_000);
    // Readers in another process (another inbox instance) are woken by the batch's notices.
    const other = new PostgresInbox({ connectionString: DATABASE_URL, table: inbox.table, maxConnections: 2 });
    open.push(other);
    await other.listening();
    const delta = (text: string) => ({ type: 'text_delta', agentId: 'main', delta: text }) as const;
    const reads = live.map(async (e) => {
      const seen: string[] = [];
      for await (const item of other.events({ receiptId: e.receiptId })) {
        seen.push(`${item.offset}:${String(item.attempt)}:${(item.event as { delta: string }).delta}`);
        if (seen.length === (e === live[0] ? 4 : 3)) break;
      }
      return seen;
    });
    const refused = rejectsCode(inbox.publish(gone?.receiptId as string, 1, delta('late')), 'LEASE_LOST');
    await Promise.all([
      ...live.map((e, i) => inbox.publishMany(e.receiptId, i + 1, [delta(`a${String(i)}`), delta(`b${String(i)}`)])),
      ...live.map((e, i) => inbox.publish(e.receiptId, i + 1, delta(`c${String(i)}`))),
      refused,
    ]);
    const logs = await Promise.all(reads);
    expect(logs[0]).toEqual(['1:1:first', '2:1:a0', '3:1:b0', '4:1:c0']);
    live.slice(1).forEach((_, j) => {
      const i = j + 1;
      const n = String(i + 1);
      expect(logs[i]).toEqual([`1:${n}:a${String(i)}`, `2:${n}:b${String(i)}`, `3:${n}:c${String(i)}`]);
    });
  });

  it('settles and delivery counts made at once share a statement: each ends as alone', async () => {
    const inbox = await freshInbox();
    const { entries } = await leasedEntries(inbox, 2);
    const all = [...entries.values()].flat();
    const first = all.filter((e) => e.seq === '1');
    const second = all.filter((e) => e.seq === '2');
    expect(await Promise.all(first.map((e) => inbox.beginDelivery(e)))).toEqual(first.map(() => 1));
    const results = await Promise.all([
      ...first.map((e) => inbox.settle(e, completed(e.receiptId), 60_000)),
      ...second.map((e) => inbox.beginDelivery(e)),
    ]);
    expect(results.slice(first.length)).toEqual(second.map(() => 1));
    const pending = await inbox.pending();
    expect(pending.map((e) => [e.receiptId, e.attempts])).toEqual(
      [...second].sort((a, b) => a.sessionKey.localeCompare(b.sessionKey)).map((e) => [e.receiptId, 1]),
    );
    for (const e of first) expect((await inbox.outcome(e.receiptId, { timeoutMs: 5000 })).status).toBe('completed');
  });

  it('every shape of batch a worker sends has a statement the server runs: only the parts it needs, the same outputs', async () => {
    const inbox = await freshInbox();
    const { entries } = await leasedEntries(inbox, 1);
    const sql = inboxSql(inboxNames(parseTableName(inbox.table) as TableName));
    const [entry] = [...entries.values()].flat();
    const id = entry?.receiptId as string;
    const flags = [false, true];
    const shapes = [
      { settles: false, events: false, poisoned: false, counts: true },
      ...flags.flatMap((events) =>
        flags.flatMap((poisoned) => flags.map((counts) => ({ settles: true, events, poisoned, counts }))),
      ),
    ];
    const keys = new Set<string>();
    for (const shape of shapes) {
      const key = finishManyKey(shape);
      keys.add(key);
      const text = sql[key];
      expect(text.includes('INSERT INTO') && text.includes('_dead'), key).toBe(shape.poisoned);
      expect(text.includes('_events'), key).toBe(shape.events);
      expect(text.includes('b_counted'), key).toBe(shape.counts);
      // A settle of a receipt no longer (or never) in the inbox stores its outcome and removes
      // nothing; the delivery count of the leased entry counts it.
      const unknown = `unknown-${key}`;
      const values = [
        ...(shape.settles ? [[unknown], [JSON.stringify(completed(unknown))], [60_000], [shape.poisoned], [1]] : []),
        ...(shape.events ? [[1], [JSON.stringify({ type: 'text_delta', agentId: 'main', delta: 'x' })]] : []),
        ...(shape.counts ? [[id], [null]] : []),
      ];
      const { rows } = await adminPool().query({ text, values, rowMode: 'array' });
      expect(rows, key).toEqual([
        ...(shape.settles ? [['s', 1, true, false, 0]] : []),
        ...(shape.counts ? [['b', 1, null, null, expect.any(Number)]] : []),
      ]);
    }
    expect(keys.size).toBe(shapes.length);
  });
});
