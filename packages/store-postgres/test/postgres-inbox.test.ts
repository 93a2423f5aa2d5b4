import { ConfigError, InboxError } from '@signalyard/core';
import { POSTGRES_INBOX_SCHEMA_VERSION, PostgresInbox, PostgresStoreError } from '@signalyard/store-postgres';
import { collect, expectCode, rejectsCode, thrown } from '@signalyard/test-utils';
import {
  DATABASE_URL,
  adminPool,
  describePostgres,
  dropTablesAndEnd,
  uniqueTable,
} from '@signalyard/test-utils/postgres';
import type { Pool } from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { dropInbox } from './inbox-support.js';

const tables: string[] = [];
const open: PostgresInbox[] = [];
const text = (payload: string) => ({ kind: 'user_message', payload }) as const;

afterEach(async () => {
  for (const inbox of open.splice(0)) await inbox.close();
});
afterAll(async () => {
  for (const table of tables) await dropInbox(table);
  await dropTablesAndEnd([]);
});

function inboxOn(table: string, extra: Partial<{ pollMs: number; dedupeWindowMs: number }> = {}): PostgresInbox {
  const inbox = new PostgresInbox({ connectionString: DATABASE_URL, table, maxConnections: 4, ...extra });
  open.push(inbox);
  return inbox;
}

async function freshInbox(
  extra: Partial<{ pollMs: number; dedupeWindowMs: number }> = {},
): Promise<[PostgresInbox, string]> {
  const table = uniqueTable('inboxt');
  tables.push(table);
  const inbox = inboxOn(table, extra);
  await inbox.migrate();
  return [inbox, table];
}

async function commentOf(table: string): Promise<string | null> {
  const { rows } = await adminPool().query<{ c: string | null }>(
    `SELECT obj_description(to_regclass($1), 'pg_class') AS c`,
    [`"${table}"`],
  );
  return rows[0]?.c ?? null;
}

/** A pool whose connections fail every query with `error` (and record how they were released). */
function failingPool(error: Error): Pool & { released: unknown[] } {
  const released: unknown[] = [];
  const client = {
    query: () => Promise.reject(error),
    release: (destroy?: unknown) => {
      released.push(destroy);
    },
  };
  return {
    released,
    connect: () => Promise.resolve(client),
    query: () => Promise.reject(error),
    end: () => Promise.resolve(),
  } as unknown as Pool & { released: unknown[] };
}

describe('PostgresInbox options', () => {
  it('refuses bad options with one ConfigError listing every problem, without touching the network', () => {
    const error = thrown(
      () =>
        new PostgresInbox({
          table: 'Bad-Name',
          pollMs: 0,
          preparedStatements: 'yes',
          maxPending: -1,
          listenConnectionString: 42,
          extra: 1,
        } as never),
    );
    expect(ConfigError.isInstance(error)).toBe(true);
    const problems = (error as ConfigError).problems;
    expect(problems.map((p) => p.path).sort()).toEqual(
      ['extra', 'listenConnectionString', 'maxPending', 'pollMs', 'pool', 'preparedStatements', 'table'].sort(),
    );
    expect(problems.find((p) => p.path === 'listenConnectionString')?.message).toMatch(
      /expected a PostgreSQL connection string .*got 42/,
    );
    expectCode(
      thrown(() => new PostgresInbox(null as never)),
      'CONFIG_INVALID',
    );
  });
});

describe('PostgresInbox failures', () => {
  it('a lost connection after the entry was sent is INBOX_OUTCOME_UNKNOWN, and the connection is not reused', async () => {
    const pool = failingPool(new Error('Connection terminated unexpectedly'));
    const inbox = new PostgresInbox({ pool, table: 'not_touched' });
    const error = await rejectsCode(
      inbox.accept({ sessionKey: 's', signal: text('x'), id: 'a' }),
      'INBOX_OUTCOME_UNKNOWN',
    );
    expect(error.message).toMatch(/may or may not have been written; retry with the same id/);
    expect(pool.released).toEqual([true]);
    await inbox.close();
  });

  it('a refusal by the server (a SQLSTATE) is INBOX_UNAVAILABLE: nothing was written', async () => {
    const pool = failingPool(Object.assign(new Error('could not serialize access'), { code: '40001' }));
    const inbox = new PostgresInbox({ pool, table: 'not_touched' });
    await rejectsCode(inbox.accept({ sessionKey: 's', signal: text('x'), id: 'a' }), 'INBOX_UNAVAILABLE');
    expect(pool.released).toEqual([false]);
    await rejectsCode(inbox.acquire('w', { leaseMs: 1000, max: 1 }), 'INBOX_UNAVAILABLE');
    await inbox.close();
  });

  it('a failed publish is INBOX_UNAVAILABLE, naming the receipt and the missing tables', async () => {
    const pool = failingPool(Object.assign(new Error('relation does not exist'), { code: '42P01' }));
    const inbox = new PostgresInbox({ pool, table: 'not_touched' });
    const error = await rejectsCode(
      inbox.publish('r1', 1, { type: 'text_delta', agentId: 'a', delta: 'x' }),
      'INBOX_UNAVAILABLE',
    );
    expect(error.message).toMatch(/Cannot publish events of "r1".*run migrate\(\)/);
    await inbox.close();
  });

  it('an unreachable server is INBOX_UNAVAILABLE for every call', async () => {
    const inbox = new PostgresInbox({ connectionString: 'postgres://postgres@127.0.0.1:1/test', table: 'nowhere' });
    const error = await rejectsCode(inbox.accept({ sessionKey: 's', signal: text('x'), id: 'a' }), 'INBOX_UNAVAILABLE');
    expect(InboxError.isInstance(error)).toBe(true);
    await rejectsCode(inbox.pending(), 'INBOX_UNAVAILABLE');
    await inbox.close();
  });
});

describePostgres('PostgresInbox against a real server', () => {
  it(`migrate() is idempotent, marks schema ${POSTGRES_INBOX_SCHEMA_VERSION}, and calls before it say to run it`, async () => {
    const table = uniqueTable('inboxm');
    tables.push(table);
    const inbox = inboxOn(table);
    const early = await rejectsCode(inbox.accept({ sessionKey: 's', signal: text('x'), id: 'a' }), 'INBOX_UNAVAILABLE');
    expect(early.message).toMatch(/run migrate\(\)/);
    await inbox.migrate();
    await inbox.migrate();
    expect(await commentOf(table)).toBe(`@signalyard/store-postgres inbox schema ${POSTGRES_INBOX_SCHEMA_VERSION}`);
    expect((await inbox.accept({ sessionKey: 's', signal: text('x'), id: 'a' })).seq).toBe('1');
  });

  it('migrates a schema 1 inbox in place: its entries, seqs and leases kept', async () => {
    const [inbox, table] = await freshInbox();
    const keys = `"${table}_keys"`;
    for (const id of ['a', 'b']) await inbox.accept({ sessionKey: 's', signal: text(id), id });
    const [lease] = await inbox.acquire('w', { leaseMs: 60_000, max: 1 });
    // what schema 1 had: the waiting index partial on pending, no batch function, full pages
    const admin = adminPool();
    await admin.query(`DROP FUNCTION "${table}_accept_many"`);
    await admin.query(`DROP INDEX "${table}_keys_waiting"`);
    await admin.query(`CREATE INDEX "${table}_keys_waiting" ON ${keys} (waiting_since) WHERE pending > 0`);
    for (const t of [keys, `"${table}_counters"`, `"${table}"`])
      await admin.query(`ALTER TABLE ${t} RESET (fillfactor)`);
    await admin.query(`COMMENT ON TABLE "${table}" IS '@signalyard/store-postgres inbox schema 1'`);
    await inboxOn(table).migrate();
    expect(await commentOf(table)).toBe(`@signalyard/store-postgres inbox schema ${POSTGRES_INBOX_SCHEMA_VERSION}`);
    const { rows } = await admin.query<{ d: string }>(`SELECT pg_get_indexdef($1::regclass) AS d`, [
      `"${table}_keys_waiting"`,
    ]);
    expect(rows[0]?.d).toMatch(/WHERE \(waiting_since IS NOT NULL\)/);
    expect((await collect(inbox.read(lease!))).map((e) => e.seq)).toEqual(['1', '2']);
    expect((await inbox.accept({ sessionKey: 's', signal: text('c'), id: 'c' })).seq).toBe('3');
  });

  it('migrates a schema 2 inbox in place: settles count off on rows of their own, the pending total kept', async () => {
    const [inbox, table] = await freshInbox();
    const counters = `"${table}_counters"`;
    for (const id of ['a', 'b', 'c']) await inbox.accept({ sessionKey: 's', signal: text(id), id });
    // what schema 2 had: only the accepts' counter rows
    const admin = adminPool();
    await admin.query(`DELETE FROM ${counters} WHERE shard >= 16`);
    await admin.query(`COMMENT ON TABLE "${table}" IS '@signalyard/store-postgres inbox schema 2'`);
    await inboxOn(table).migrate();
    expect(await commentOf(table)).toBe(`@signalyard/store-postgres inbox schema ${POSTGRES_INBOX_SCHEMA_VERSION}`);
    const [lease] = await inbox.acquire('w', { leaseMs: 60_000, max: 1 });
    const [first] = await collect(inbox.read(lease!));
    await inbox.ack(first!);
    const { rows } = await admin.query<{ rows: string; total: string; settled: string }>(
      `SELECT count(*)::text AS rows, sum(pending)::text AS total, sum(pending) FILTER (WHERE shard >= 16)::text AS settled FROM ${counters}`,
    );
    expect(rows[0]).toEqual({ rows: '32', total: '2', settled: '-1' });
  });

  it('refuses tables migrated by a newer release, and a foreign table under its name, changing nothing', async () => {
    const [inbox, table] = await freshInbox();
    const newerMark = `@signalyard/store-postgres inbox schema ${String(POSTGRES_INBOX_SCHEMA_VERSION + 1)}`;
    await adminPool().query(`COMMENT ON TABLE "${table}" IS '${newerMark}'`);
    const newer = await rejectsCode(inbox.migrate(), 'POSTGRES_SCHEMA_UNSUPPORTED');
    expect(PostgresStoreError.isInstance(newer)).toBe(true);
    expect(await commentOf(table)).toBe(newerMark);

    const foreign = uniqueTable('foreign');
    tables.push(foreign);
    await adminPool().query(`CREATE TABLE "${foreign}" (id integer, other text)`);
    await rejectsCode(inboxOn(foreign).migrate(), 'POSTGRES_MIGRATE_FAILED');
    expect(await commentOf(foreign)).toBeNull();
  });

  it('works under a schema-qualified name and one too long for its suffixes', async () => {
    const long = `sy_${'l'.repeat(40)}_${uniqueTable('x').slice(3)}`.slice(0, 63);
    tables.push(long);
    for (const table of [`public.${uniqueTable('q')}`, long]) {
      tables.push(table);
      const inbox = inboxOn(table);
      await inbox.migrate();
      const receipt = await inbox.accept({ sessionKey: 's', signal: text('x'), id: 'a' });
      const [lease] = await inbox.acquire('w', { leaseMs: 60_000, max: 1 });
      const [entry] = await collect(inbox.read(lease!));
      expect(entry?.receiptId).toBe(receipt.receiptId);
    }
  });

  it('exists() says whether the inbox was migrated, reading only: false for a missing table, a missing schema or a foreign table', async () => {
    const table = uniqueTable('inboxe');
    tables.push(table);
    const inbox = inboxOn(table);
    expect(await inbox.exists()).toBe(false);
    const { rows: none } = await adminPool().query<{ t: string | null }>(`SELECT to_regclass($1)::text AS t`, [
      `"${table}"`,
    ]);
    expect(none[0]?.t).toBeNull(); // nothing was created
    await inbox.migrate();
    expect(await inbox.exists()).toBe(true);
    // an inbox of an earlier schema (not migrated by this release yet) is an inbox too
    await adminPool().query(`COMMENT ON TABLE "${table}" IS '@signalyard/store-postgres inbox schema 1'`);
    expect(await inbox.exists()).toBe(true);
    expect(await commentOf(table)).toBe('@signalyard/store-postgres inbox schema 1');

    const foreign = uniqueTable('foreigne');
    tables.push(foreign);
    await adminPool().query(`CREATE TABLE "${foreign}" (id integer, other text)`);
    expect(await inboxOn(foreign).exists()).toBe(false);
    expect(await inboxOn(`${uniqueTable('noschema')}.signalyard_inbox`).exists()).toBe(false);
  });

  it('exists() on an unreachable server is INBOX_UNAVAILABLE; closed, INBOX_CLOSED', async () => {
    const down = new PostgresInbox({ connectionString: 'postgres://postgres@127.0.0.1:1/test' });
    await rejectsCode(down.exists(), 'INBOX_UNAVAILABLE');
    await down.close();
    await rejectsCode(down.exists(), 'INBOX_CLOSED');
  });

  it('lists pending entries per session and live leases for operators', async () => {
    const [inbox] = await freshInbox();
    await inbox.accept({ sessionKey: 'b', signal: text('b0'), id: '1' });
    await inbox.accept({ sessionKey: 'a', signal: text('a0'), id: '2' });
    await inbox.accept({ sessionKey: 'a', signal: text('a1'), id: '3', agentId: 'desk', control: 'delete' });
    const all = await inbox.pending();
    expect(all.map((e) => [e.sessionKey, e.seq, e.signal.payload])).toEqual([
      ['a', '1', 'a0'],
      ['a', '2', 'a1'],
      ['b', '1', 'b0'],
    ]);
    expect(all[1]).toMatchObject({ agentId: 'desk', control: 'delete', attempts: 0 });
    expect((await inbox.pending({ sessionKey: 'a', limit: 1 })).map((e) => e.seq)).toEqual(['1']);
    const leases = await inbox.acquire('worker-3', { leaseMs: 60_000, max: 1 });
    expect(await inbox.leases()).toEqual(
      leases.map((l) => ({ key: l.key, workerId: 'worker-3', expiresAt: l.expiresAt })),
    );
    await inbox.release(leases[0]!);
    expect(await inbox.leases()).toEqual([]);
    await rejectsCode(inbox.pending({ limit: 1.5 }), 'INBOX_INPUT_INVALID');
  });

  it('stores published events exactly, whatever their text, and refuses them once the entry is settled', async () => {
    const [inbox] = await freshInbox();
    const receipt = await inbox.accept({ sessionKey: 's', signal: text('x'), id: 'a' });
    const [lease] = await inbox.acquire('w', { leaseMs: 60_000, max: 1 });
    const [entry] = await collect(inbox.read(lease!));
    await inbox.beginDelivery(entry!);
    // Texts that would break a statement built by hand: quotes, backslashes, placeholders, NUL escapes.
    const awkward = [
      "it's",
      'back\\slash \\x00',
      '$1 $2 $3 $$ $tag$',
      "'); DROP TABLE x; --",
      'ünï €ode 🎉\n\ttabs',
      '\u0000',
    ];
    await inbox.publish(receipt.receiptId, 1, { type: 'text_delta', agentId: 'a', delta: awkward[0]! });
    await inbox.publishMany(
      receipt.receiptId,
      1,
      awkward.slice(1).map((delta) => ({ type: 'text_delta', agentId: 'a', delta })),
    );
    const read: { offset: string; delta: string }[] = [];
    for await (const item of inbox.events({ receiptId: receipt.receiptId })) {
      if (item.event.type === 'text_delta') read.push({ offset: item.offset, delta: item.event.delta });
      if (read.length === awkward.length) break;
    }
    expect(read.map((r) => r.delta)).toEqual(awkward);
    expect(new Set(read.map((r) => r.offset)).size).toBe(awkward.length);
    await inbox.settle(entry!, { sessionKey: 's', agentId: 'a', status: 'completed', output: 'ok' }, 60_000);
    await rejectsCode(
      inbox.publish(receipt.receiptId, 1, { type: 'text_delta', agentId: 'a', delta: 'late' }),
      'LEASE_LOST', // the entry is no longer in the inbox
    );
    // The inbox still serves.
    await inbox.accept({ sessionKey: 's', signal: text('y'), id: 'b' });
    expect((await inbox.pending()).length).toBe(1);
  });

  it('drops expired outcomes (with their events), dead letters and dedupe ids', async () => {
    // Windows far longer than the test, then aged by hand: nothing expires early on a slow machine.
    const [inbox, table] = await freshInbox({ dedupeWindowMs: 600_000 });
    const receipt = await inbox.accept({ sessionKey: 's', signal: text('x'), id: 'a' });
    const [lease] = await inbox.acquire('w', { leaseMs: 60_000, max: 1 });
    const [entry] = await collect(inbox.read(lease!));
    await inbox.beginDelivery(entry!);
    await inbox.publish(receipt.receiptId, 1, { type: 'text_delta', agentId: 'a', delta: 'hi' });
    const poisoned = {
      sessionKey: 's',
      agentId: 'a',
      status: 'failed',
      error: { code: 'INBOX_POISONED', message: 'm', fields: {} },
    } as const;
    await inbox.putOutcome(receipt.receiptId, poisoned, 600_000);
    await inbox.ack(entry!);
    const counts = async (): Promise<number[]> => {
      const out: number[] = [];
      for (const suffix of ['_dedupe', '_outcomes', '_events', '_dead']) {
        const { rows } = await adminPool().query<{ n: string }>(`SELECT count(*) AS n FROM "${table}${suffix}"`);
        out.push(Number(rows[0]?.n));
      }
      return out;
    };
    expect(await counts()).toEqual([1, 1, 1, 1]);
    for (const suffix of ['_dedupe', '_outcomes', '_dead'])
      await adminPool().query(`UPDATE "${table}${suffix}" SET expires_at = clock_timestamp() - interval '1 second'`);
    const sweeper = inboxOn(table); // a fresh instance sweeps on its first write
    await sweeper.accept({ sessionKey: 'other', signal: text('y'), id: 'b' });
    for (let i = 0; i < 100 && (await counts()).join() !== '1,0,0,0'; i++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(await counts()).toEqual([1, 0, 0, 0]);
  });

  it(
    'keeps working when its LISTEN connection is killed: waits are served by polling, and it listens again',
    { timeout: 60_000 },
    async () => {
      const [inbox, table] = await freshInbox({ pollMs: 100 });
      const producer = inboxOn(table);
      const receipt = await producer.accept({ sessionKey: 's', signal: text('x'), id: 'a' });
      await producer.accept({ sessionKey: 'halt', signal: { kind: 'stop', payload: null }, id: 'b' });
      const heard: string[] = [];
      inbox.onNotify((key, what) => heard.push(`${key}/${what}`));
      const waiting = inbox.outcome(receipt.receiptId, { timeoutMs: 30_000 });
      await inbox.listening();
      const listeners = async (): Promise<number[]> =>
        (
          await adminPool().query<{ pid: number }>(`SELECT pid FROM pg_stat_activity WHERE query = $1`, [
            `LISTEN "${inbox.channel}"`,
          ])
        ).rows.map((r) => r.pid);
      const [pid] = await listeners();
      expect(pid).toBeTypeOf('number');
      await adminPool().query('SELECT pg_terminate_backend($1)', [pid]);
      // put while the listener is down (or reconnecting): the waiter still gets it
      await producer.putOutcome(
        receipt.receiptId,
        { sessionKey: 's', agentId: 'a', status: 'completed', output: 'ok' },
        60_000,
      );
      expect(await waiting).toMatchObject({ output: 'ok' });
      // it listens again, on a new connection: the notices it may have missed come as a wake-up for
      // every session with entries (a stop where a stop waits), and new ones are heard
      for (let i = 0; i < 300 && !heard.includes('halt/stop'); i++)
        await new Promise((resolve) => setTimeout(resolve, 20));
      expect(heard).toContain('halt/stop');
      expect(heard).toContain('s/entry');
      for (let i = 0; i < 300 && !heard.includes('s/stop'); i++) {
        await producer.notify('s', 'stop');
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(heard).toContain('s/stop');
      const [again] = await listeners();
      expect(again).toBeTypeOf('number');
      expect(again).not.toBe(pid);
    },
  );
});
