import { ConfigError } from '@signalyard/core';
import { PostgresCheckpointStore, type PostgresCheckpointStoreOptions } from '@signalyard/store-postgres';
import { Pool } from 'pg';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  DATABASE_URL,
  adminPool,
  describePostgres,
  dropTablesAndEnd,
  uniqueTable,
} from '@signalyard/test-utils/postgres';
import { collect } from '@signalyard/test-utils';

const tables = new Set<string>();
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
afterAll(async () => {
  await dropTablesAndEnd(tables);
});

/** A pool of one connection (so what it prepared can be read back) and a migrated store on it, over a fresh table. */
async function onOneConnection(
  options: Partial<PostgresCheckpointStoreOptions> = {},
  label = 'prep',
): Promise<{ pool: Pool; store: PostgresCheckpointStore; table: string }> {
  const pool = new Pool({ connectionString: DATABASE_URL, max: 1 });
  const table = uniqueTable(label);
  tables.add(table);
  const store = new PostgresCheckpointStore({ pool, table, ...options } as PostgresCheckpointStoreOptions);
  cleanups.push(async () => {
    await store.close();
    await pool.end();
  });
  await store.migrate();
  return { pool, store, table };
}

/** The names of the statements the pool's one connection has prepared. */
async function prepared(pool: Pool): Promise<string[]> {
  const result = await pool.query<{ name: string }>(
    "SELECT name FROM pg_prepared_statements WHERE name LIKE 'signalyard\\_%' ORDER BY name",
  );
  return result.rows.map((r) => r.name);
}

describe('preparedStatements: validation (no server needed)', () => {
  it.each([['yes'], [1], [null], [{}]])('refuses %j with CONFIG_INVALID naming the option', (bad) => {
    let error: unknown;
    try {
      new PostgresCheckpointStore({
        connectionString: DATABASE_URL,
        preparedStatements: bad,
      } as unknown as PostgresCheckpointStoreOptions);
    } catch (e) {
      error = e;
    }
    expect(ConfigError.isInstance(error)).toBe(true);
    const problems = (error as ConfigError).problems;
    expect(problems.map((p) => p.path)).toEqual(['preparedStatements']);
    expect(problems[0]?.message).toMatch(/expected true or false, got/);
  });
});

describePostgres('preparedStatements', () => {
  it('by default, prepares each statement once per connection and reuses it', async () => {
    const { pool, store } = await onOneConnection();
    const v1 = await store.save('k', { n: 1 }, 0);
    expect(await prepared(pool)).toHaveLength(1); // the insert
    const v2 = await store.save('k', { n: 2 }, v1);
    const v3 = await store.save('k', { n: 3 }, v2);
    expect(v3).toBe(3);
    expect(await prepared(pool)).toHaveLength(2); // insert and update, each once
    expect((await store.load('k'))?.data).toEqual({ n: 3 });
    expect((await collect(store.history('k'))).map((c) => c.version)).toEqual([3, 2, 1]);
    expect(await prepared(pool)).toHaveLength(4);
  });

  it('with preparedStatements: false, prepares nothing and behaves the same', async () => {
    const { pool, store } = await onOneConnection({ preparedStatements: false });
    const v1 = await store.save('k', { n: 1 }, 0);
    await store.save('k', { n: 2 }, v1);
    expect((await store.load('k'))?.data).toEqual({ n: 2 });
    expect((await collect(store.history('k'))).map((c) => c.version)).toEqual([2, 1]);
    expect(await prepared(pool)).toEqual([]);
  });

  it('stores over different tables on one pool never mix up their statements', async () => {
    const { pool, store: a } = await onOneConnection({}, 'prepa');
    const table = uniqueTable('prepb');
    tables.add(table);
    const b = new PostgresCheckpointStore({ pool, table });
    cleanups.push(() => b.close());
    await b.migrate();
    await a.save('k', { from: 'a' }, 0);
    await b.save('k', { from: 'b' }, 0);
    await a.save('k', { from: 'a2' }, 1);
    await b.save('k', { from: 'b2' }, 1);
    expect((await a.load('k'))?.data).toEqual({ from: 'a2' });
    expect((await b.load('k'))?.data).toEqual({ from: 'b2' });
    expect(await prepared(pool)).toHaveLength(6); // insert, update and load for each table
  });

  it('recovers when the server forgets its prepared statements (DEALLOCATE ALL): nothing fails, nothing runs twice', async () => {
    const { pool, store } = await onOneConnection();
    await store.save('k', { n: 1 }, 0);
    await store.save('k', { n: 2 }, 1);
    const before = await prepared(pool);
    await pool.query('DEALLOCATE ALL');
    expect(await store.save('k', { n: 3 }, 2)).toBe(3); // run unnamed: exactly one new version
    expect(await store.save('k', { n: 4 }, 3)).toBe(4); // prepared again, under a new name
    expect((await collect(store.history('k'))).map((c) => c.version)).toEqual([4, 3, 2, 1]);
    const after = await prepared(pool);
    expect(after.some((name) => !before.includes(name))).toBe(true);
    await pool.query('DEALLOCATE ALL');
    expect((await store.load('k'))?.data).toEqual({ n: 4 });
  });

  it('keeps working when its tables are dropped and created again under a prepared statement', async () => {
    const { store, table } = await onOneConnection();
    await store.save('k', { n: 1 }, 0);
    await store.save('k', { n: 2 }, 1);
    await adminPool().query(`DROP TABLE ${store.historyTable}, ${table}`);
    await store.migrate();
    expect(await store.load('k')).toBeUndefined();
    expect(await store.save('k', { n: 1 }, 0)).toBe(1);
    expect(await store.save('k', { n: 2 }, 1)).toBe(2);
    expect((await store.load('k'))?.data).toEqual({ n: 2 });
  });
});
