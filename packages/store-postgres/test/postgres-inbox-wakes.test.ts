import type { InboxNotice } from '@signalyard/core';
import { PostgresInbox } from '@signalyard/store-postgres';
import {
  DATABASE_URL,
  adminPool,
  describePostgres,
  dropTablesAndEnd,
  uniqueTable,
} from '@signalyard/test-utils/postgres';
import pg from 'pg';
import { afterAll, afterEach, expect, it } from 'vitest';
import { dropInbox } from './inbox-support.js';

// Who a PostgresInbox wakes, and for what: entry notices of entries read already are dropped,
// stream events wake stream readers only, and a stream event whose NOTIFY was lost still reaches
// its reader (the safety look).

const tables: string[] = [];
const closers: (() => Promise<unknown>)[] = [];
const text = (payload: string) => ({ kind: 'user_message', payload }) as const;

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});
afterAll(async () => {
  for (const table of tables) await dropInbox(table);
  await dropTablesAndEnd([]);
});

/** A migrated inbox on a pool of its own whose statements are counted by their start (`counted`). */
async function countedInbox(
  pollMs = 1000,
): Promise<{ inbox: PostgresInbox; table: string; counted: (start: string) => number }> {
  const table = uniqueTable('inboxw');
  tables.push(table);
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4 });
  const sent: string[] = [];
  const query = pool.query.bind(pool) as (...args: unknown[]) => unknown;
  (pool as unknown as { query: unknown }).query = (...args: unknown[]) => {
    const config = args[0] as string | { text: string };
    sent.push(typeof config === 'string' ? config : config.text);
    return query(...args);
  };
  const inbox = new PostgresInbox({ pool, table, pollMs });
  closers.push(
    () => pool.end(),
    () => inbox.close(),
  );
  await inbox.migrate();
  return { inbox, table, counted: (start) => sent.filter((s) => s.startsWith(start)).length };
}

function another(table: string): PostgresInbox {
  const inbox = new PostgresInbox({ connectionString: DATABASE_URL, table, maxConnections: 2 });
  closers.push(() => inbox.close());
  return inbox;
}

async function until(what: string, done: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 10));
  if (!done()) throw new Error(`timed out waiting for ${what}`);
}

describePostgres('PostgresInbox wake-ups', () => {
  it('holds entry notices back while a read of their key is in flight, and drops those of entries it returned', async () => {
    const { inbox, table } = await countedInbox();
    const heard: string[] = [];
    inbox.onNotify((key: string, what: InboxNotice) => heard.push(`${key}/${what}`));
    await inbox.listening();
    const key = 'held-key';
    await inbox.accept({ sessionKey: key, signal: text('a'), id: 'a' });
    await inbox.accept({ sessionKey: key, signal: text('b'), id: 'b' });
    await until('the accepts’ notices', () => heard.filter((h) => h === `${key}/entry`).length > 0);
    await until('no more notices', () => true);
    const [lease] = await inbox.acquire('w', { leaseMs: 30_000, max: 1 });
    if (lease === undefined) throw new Error('no lease');
    // the read is held up by a table lock while notices of entries 1, 2 (which it returns) and 3 (which it does not) arrive
    const admin = await adminPool().connect();
    try {
      await admin.query('BEGIN');
      await admin.query(`LOCK TABLE "${table}" IN ACCESS EXCLUSIVE MODE`);
      heard.length = 0;
      const iterator = inbox.read(lease)[Symbol.asyncIterator]();
      const first = iterator.next();
      const other = another(table);
      await other.notify('marker', 'entry'); // a notice of another key: never held
      await adminPool().query('SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p', [
        inbox.channel,
        [`E1:${key}`, `E2:${key}`, 'emarker2'],
      ]);
      await until('the notices to arrive', () => heard.includes('marker2/entry'));
      expect(heard).toEqual(['marker/entry', 'marker2/entry']);
      await admin.query('COMMIT');
      expect((await first).value?.seq).toBe('1');
      await iterator.return?.();
      // covered by the read: dropped; a later entry's notice passes
      expect(heard).toEqual(['marker/entry', 'marker2/entry']);
      await adminPool().query('SELECT pg_notify($1, p) FROM unnest($2::text[]) AS p', [
        inbox.channel,
        [`E2:${key}`, `E3:${key}`, 'emarker3'],
      ]);
      await until('the later notices', () => heard.includes('marker3/entry'));
      expect(heard).toEqual(['marker/entry', 'marker2/entry', `${key}/entry`, 'marker3/entry']);
    } finally {
      admin.release();
    }
  });

  it('stream events wake stream readers, not outcome waits (which look again only on outcomes)', async () => {
    const { inbox, table, counted } = await countedInbox();
    const producer = another(table);
    const receipt = await producer.accept({ sessionKey: 'streamed', signal: text('x'), id: 'x' });
    const lookups = (): number => counted('SELECT (SELECT outcome');
    await inbox.listening(); // its look on listening is behind it
    const waiting = inbox.outcome(receipt.receiptId, { timeoutMs: 30_000 });
    waiting.catch(() => undefined); // awaited below
    await until('the first look', () => lookups() >= 1);
    const before = lookups();
    const heard: string[] = [];
    inbox.onNotify((key) => heard.push(key));
    for (let i = 0; i < 10; i++)
      await producer.publish(receipt.receiptId, 1, { type: 'text_delta', agentId: 'a', delta: `t${String(i)}` });
    await producer.notify('after-events', 'entry'); // sent after the events' notifications
    await until('the events’ notifications', () => heard.includes('after-events'));
    expect(lookups()).toBe(before);
    const read: string[] = [];
    for await (const item of inbox.events({ receiptId: receipt.receiptId })) {
      if (item.event.type === 'text_delta') read.push(item.event.delta);
      if (read.length === 10) break;
    }
    expect(read).toHaveLength(10);
    await producer.putOutcome(
      receipt.receiptId,
      { sessionKey: 'streamed', agentId: 'a', status: 'completed', output: 'ok' },
      60_000,
    );
    expect(await waiting).toMatchObject({ output: 'ok' });
  });

  it('a stream event whose NOTIFY was lost still reaches its reader (the safety look)', async () => {
    const { inbox, table } = await countedInbox(20);
    const producer = another(table);
    const receipt = await producer.accept({ sessionKey: 'lost', signal: text('x'), id: 'x' });
    await producer.publish(receipt.receiptId, 1, { type: 'text_delta', agentId: 'a', delta: 'first' });
    const seen: string[] = [];
    const reading = (async () => {
      for await (const item of inbox.events({ receiptId: receipt.receiptId })) {
        if (item.event.type === 'text_delta') seen.push(item.event.delta);
        if (seen.length === 2) return;
      }
    })();
    await until('the first event', () => seen.length === 1);
    // appended as publish does, without its NOTIFY
    await adminPool().query(
      `WITH next AS (UPDATE "${table}" SET next_event = next_event + 1 WHERE receipt_id = $1 RETURNING next_event) ` +
        `INSERT INTO "${table}_events" (receipt_id, event_offset, attempt, event) SELECT $1, next_event, 1, $2 FROM next`,
      [receipt.receiptId, JSON.stringify({ type: 'text_delta', agentId: 'a', delta: 'unannounced' })],
    );
    await reading;
    expect(seen).toEqual(['first', 'unannounced']);
  });
});
