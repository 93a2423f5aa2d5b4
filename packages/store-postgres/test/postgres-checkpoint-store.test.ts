import {
  CheckpointConflictError,
  CheckpointStoreError,
  ConfigError,
  MemoryCheckpointStore,
  SignalyardError,
  isSignalyardError,
  type CheckpointStore,
  type Clock,
} from '@signalyard/core';
import {
  DEFAULT_CHECKPOINT_TABLE,
  POSTGRES_SCHEMA_VERSION,
  PostgresCheckpointStore,
  PostgresStoreError,
  type PostgresCheckpointStoreOptions,
  type PostgresStoreErrorCode,
} from '@signalyard/store-postgres';
import fc from 'fast-check';
import type { types } from 'pg';
import { Pool } from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, expectTypeOf, it } from 'vitest';
import {
  DATABASE_URL,
  adminPool,
  describePostgres,
  dropTablesAndEnd,
  uniqueTable,
} from '@signalyard/test-utils/postgres';
import { collect, rejection } from '@signalyard/test-utils';

const tables = new Set<string>();
/** A fresh table name for this run, dropped at the end. */
function freshTable(label = 'store'): string {
  const table = uniqueTable(label);
  tables.add(table);
  return table;
}

const open: { close(): Promise<void> }[] = [];
/** A store closed after the test. */
function store(options: PostgresCheckpointStoreOptions): PostgresCheckpointStore {
  const s = new PostgresCheckpointStore(options);
  open.push(s);
  return s;
}
/** A migrated store with its own pool on a fresh table, closed after the test. */
async function migrated(label?: string, maxConnections = 4): Promise<PostgresCheckpointStore> {
  const s = store({ connectionString: DATABASE_URL, table: freshTable(label), maxConnections });
  await s.migrate();
  return s;
}
afterEach(async () => {
  for (const s of open.splice(0).reverse()) await s.close();
});
afterAll(async () => {
  await dropTablesAndEnd(tables);
});

function caught(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

const quoted = (table: string): string =>
  table
    .split('.')
    .map((p) => `"${p}"`)
    .join('.');

describe('new PostgresCheckpointStore(options): validation (no server needed)', () => {
  it('refuses bad options with one ConfigError listing every problem', () => {
    const error = caught(
      () =>
        new PostgresCheckpointStore({
          connectionString: '',
          table: 'Bad-Name',
          maxConnections: 0,
          tabel: 'x',
        } as unknown as PostgresCheckpointStoreOptions),
    );
    expect(ConfigError.isInstance(error)).toBe(true);
    const problems = (error as ConfigError).problems;
    expect((error as ConfigError).code).toBe('CONFIG_INVALID');
    expect(problems.map((p) => p.path)).toEqual(['connectionString', 'maxConnections', 'table', 'tabel']);
    expect(problems[2]?.message).toContain('"Bad-Name"');
    expect(problems[3]?.message).toContain('unknown option "tabel"');
  });

  it.each([
    ['no options', undefined],
    ['null', null],
    ['a string', 'postgres://localhost/db'],
    ['an array', []],
  ])('refuses %s as options with CONFIG_INVALID', (_, options) => {
    const error = caught(() => new PostgresCheckpointStore(options as unknown as PostgresCheckpointStoreOptions));
    expect(isSignalyardError(error, 'CONFIG_INVALID')).toBe(true);
    expect((error as ConfigError).problems[0]?.path).toBe('');
  });

  it('needs exactly one of pool and connectionString', () => {
    const neither = caught(() => new PostgresCheckpointStore({} as PostgresCheckpointStoreOptions));
    expect((neither as ConfigError).problems.map((p) => p.path)).toEqual(['pool']);
    expect((neither as ConfigError).problems[0]?.message).toContain('got neither');
    const pool = new Pool({ connectionString: DATABASE_URL });
    const both = caught(
      () =>
        new PostgresCheckpointStore({
          pool,
          connectionString: DATABASE_URL,
        } as unknown as PostgresCheckpointStoreOptions),
    );
    expect((both as ConfigError).problems[0]?.message).toContain('got both');
    const sized = caught(
      () => new PostgresCheckpointStore({ pool, maxConnections: 3 } as unknown as PostgresCheckpointStoreOptions),
    );
    expect((sized as ConfigError).problems.map((p) => p.path)).toEqual(['maxConnections']);
  });

  it.each([
    ['a pool that is not a pool', { pool: { query: 1 } }, 'pool'],
    ['a number connection string', { connectionString: 5432 }, 'connectionString'],
    ['a blank connection string', { connectionString: '   ' }, 'connectionString'],
    ['a fractional maxConnections', { connectionString: DATABASE_URL, maxConnections: 2.5 }, 'maxConnections'],
    ['a non-string table', { connectionString: DATABASE_URL, table: 7 }, 'table'],
    ['a clock without now()', { connectionString: DATABASE_URL, clock: { time: 0 } }, 'clock'],
    ['a number as the clock', { connectionString: DATABASE_URL, clock: 0 }, 'clock'],
  ])('refuses %s with CONFIG_INVALID naming the option', (_, options, path) => {
    const error = caught(() => new PostgresCheckpointStore(options as unknown as PostgresCheckpointStoreOptions));
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as ConfigError).problems.map((p) => p.path)).toEqual([path]);
  });

  it.each([
    'checkpoints; DROP TABLE users',
    'a"b',
    'Checkpoints',
    '1table',
    'a.b.c',
    '.t',
    't.',
    '',
    'x'.repeat(64),
    'tab le',
    'naïve',
    'a\u0000b',
  ])('regression: refuses the table name %j (nothing unchecked is spliced into SQL)', (table) => {
    const error = caught(() => new PostgresCheckpointStore({ connectionString: DATABASE_URL, table }));
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as ConfigError).problems.map((p) => p.path)).toEqual(['table']);
  });

  it('accepts plain and schema-qualified lower-case names up to 63 characters, and defaults the table', async () => {
    for (const table of [
      'checkpoints',
      'app.sessions',
      '_x1',
      'x'.repeat(63),
      `${'s'.repeat(63)}.${'t'.repeat(63)}`,
      'user',
    ]) {
      const s = new PostgresCheckpointStore({ connectionString: DATABASE_URL, table });
      expect(s.table).toBe(table);
      await s.close();
    }
    const s = new PostgresCheckpointStore({ connectionString: DATABASE_URL });
    expect(s.table).toBe(DEFAULT_CHECKPOINT_TABLE);
    expect(DEFAULT_CHECKPOINT_TABLE).toBe('signalyard_checkpoints');
    await s.close();
  });

  it('never touches the network in the constructor, and close() without any call resolves', async () => {
    const s = new PostgresCheckpointStore({ connectionString: 'postgres://nobody@127.0.0.1:1/none' });
    await s.close();
    await s.close();
    expect(isSignalyardError(await rejection(s.load('k')), 'CHECKPOINT_STORE_CLOSED')).toBe(true);
    expect(isSignalyardError(await rejection(s.migrate()), 'CHECKPOINT_STORE_CLOSED')).toBe(true);
  });

  it('reports an unreachable server as POSTGRES_OPERATION_FAILED with the socket code', async () => {
    const s = store({ connectionString: 'postgres://nobody@127.0.0.1:1/none' });
    const error = await rejection(s.load('k'));
    expect(PostgresStoreError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({
      code: 'POSTGRES_OPERATION_FAILED',
      pgCode: 'ECONNREFUSED',
      table: DEFAULT_CHECKPOINT_TABLE,
    });
    expect((error as Error).message).toContain('Cannot load checkpoint "k"');
    const migrateError = await rejection(s.migrate());
    expect(migrateError).toMatchObject({ code: 'POSTGRES_MIGRATE_FAILED', pgCode: 'ECONNREFUSED' });
  });
});

describePostgres('PostgresCheckpointStore on a real server', () => {
  it('a clock that returns no time fails the save with CLOCK_INVALID before anything is sent', async () => {
    let now = Date.UTC(2030, 0, 1);
    const s = store({ connectionString: DATABASE_URL, table: freshTable('clock'), clock: { now: () => now } });
    await s.migrate();
    await s.save('k', 'one', 0);
    now = Number.NaN;
    const error = await rejection(s.save('k', 'two', 1));
    expect(isSignalyardError(error, 'CLOCK_INVALID')).toBe(true);
    expect(await s.load('k')).toEqual({ version: 1, data: 'one', updatedAt: '2030-01-01T00:00:00.000Z' });
  });

  it("a key's updatedAt never goes backwards, even when a save's clock is behind the last one", async () => {
    let now = Date.UTC(2030, 0, 1, 12);
    const s = store({ connectionString: DATABASE_URL, table: freshTable('clock'), clock: { now: () => now } });
    await s.migrate();
    await s.save('k', 1, 0);
    now -= 60_000; // another process whose clock is a minute behind
    await s.save('k', 2, 1);
    expect((await s.load('k'))?.updatedAt).toBe('2030-01-01T12:00:00.000Z');
  });

  describe('migrate()', () => {
    it('creates the table with text data, a bigint version, a C-collated text key and a timestamptz', async () => {
      const s = await migrated();
      const { rows } = await adminPool().query<{ name: string; type: string; collation: string | null }>(
        `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type, c.collname AS collation
           FROM pg_attribute a LEFT JOIN pg_collation c ON c.oid = a.attcollation AND a.attcollation <> 0
          WHERE a.attrelid = $1::regclass AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
        [quoted(s.table)],
      );
      expect(rows.map((r) => [r.name, r.type])).toEqual([
        ['key', 'text'],
        ['version', 'bigint'],
        ['data', 'text'],
        ['updated_at', 'timestamp with time zone'],
      ]);
      expect(rows[0]?.collation).toBe('C');
    });

    it('is idempotent and safe to run from many stores at once', async () => {
      const table = freshTable('migrate');
      const stores = Array.from({ length: 6 }, () =>
        store({ connectionString: DATABASE_URL, table, maxConnections: 1 }),
      );
      await Promise.all(stores.map((s) => s.migrate()));
      await stores[0]!.save('k', 1, 0);
      await stores[1]!.migrate();
      expect(await stores[2]!.load('k')).toMatchObject({ version: 1, data: 1 });
    });

    it('creates the table in a named schema', async () => {
      const schema = uniqueTable('schema');
      await adminPool().query(`CREATE SCHEMA "${schema}"`);
      try {
        const s = store({ connectionString: DATABASE_URL, table: `${schema}.checkpoints` });
        await s.migrate();
        await s.save('k', 'in a schema', 0);
        const { rows } = await adminPool().query(`SELECT data FROM "${schema}".checkpoints`);
        expect(rows).toEqual([{ data: '"in a schema"' }]);
      } finally {
        await adminPool().query(`DROP SCHEMA "${schema}" CASCADE`);
      }
    });

    it('refuses a table of another shape under that name with POSTGRES_MIGRATE_FAILED, changing nothing', async () => {
      const table = freshTable('foreign');
      await adminPool().query(`CREATE TABLE "${table}" (id serial PRIMARY KEY, payload jsonb)`);
      const s = store({ connectionString: DATABASE_URL, table });
      const error = await rejection(s.migrate());
      expect(PostgresStoreError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ code: 'POSTGRES_MIGRATE_FAILED', table });
      expect((error as Error).message).toContain('["id integer","payload jsonb"]');
      const { rows } = await adminPool().query(
        `SELECT count(*)::int AS n FROM pg_attribute WHERE attrelid = $1::regclass AND attnum > 0`,
        [table],
      );
      expect(rows[0]).toEqual({ n: 2 });
    });

    it('reports a failure inside the migration (no permission, bad schema) with the SQLSTATE', async () => {
      const s = store({ connectionString: DATABASE_URL, table: `${uniqueTable('noschema')}.checkpoints` });
      const error = await rejection(s.migrate());
      expect(error).toMatchObject({ code: 'POSTGRES_MIGRATE_FAILED', pgCode: '3F000' });
    });

    it('before migrate(), a call names the missing table and how to create it', async () => {
      const s = store({ connectionString: DATABASE_URL, table: freshTable('missing') });
      const error = await rejection(s.load('k'));
      expect(error).toMatchObject({ code: 'POSTGRES_OPERATION_FAILED', pgCode: '42P01' });
      expect((error as Error).message).toContain('run migrate()');
    });
  });

  describe('what is stored', () => {
    it('keeps JSON.stringify(data) as text, the version, and the server time as updated_at', async () => {
      const s = await migrated();
      const data = { history: [{ role: 'user', content: 'hi\u0000 \ud800' }], n: -0, gone: undefined };
      await s.save('k', data, 0);
      const { rows } = await adminPool().query(
        `SELECT key, version::int AS version, data, updated_at FROM ${quoted(s.table)}`,
      );
      expect(rows).toHaveLength(1);
      expect(rows[0].key).toBe('k');
      expect(rows[0].version).toBe(1);
      expect(rows[0].data).toBe(JSON.stringify(data));
      const loaded = await s.load('k');
      expect(loaded?.updatedAt).toBe((rows[0].updated_at as Date).toISOString());
    });

    it('regression: data with \\u0000 and lone surrogates round-trips (jsonb would refuse it)', async () => {
      const s = await migrated();
      const data = { nul: 'a\u0000b', lone: ['\ud800', 'x\udfff'], emoji: '😀' };
      await s.save('k', data, 0);
      expect((await s.load('k'))?.data).toEqual(data);
    });

    it('two stores on one table see each other: a new process continues where the last stopped', async () => {
      const table = freshTable('shared');
      const first = store({ connectionString: DATABASE_URL, table });
      await first.migrate();
      await first.save('a', { step: 1 }, 0);
      await first.save('a', { step: 2 }, 1);
      await first.close();
      const second = store({ connectionString: DATABASE_URL, table });
      expect(await second.load('a')).toMatchObject({ version: 2, data: { step: 2 } });
      expect(await second.save('a', { step: 3 }, 2)).toBe(3);
    });

    it('works with a pool whose type parsers return bigint and timestamptz in other forms', async () => {
      const table = freshTable('parsers');
      const pool = new Pool({
        connectionString: DATABASE_URL,
        max: 2,
        types: {
          // int8 → BigInt and timestamptz → a tagged string; everything else as pg parses it.
          getTypeParser: ((oid: number) =>
            oid === 20
              ? BigInt
              : oid === 1184
                ? (v: string) => `custom:${v}`
                : (v: string) => v) as typeof types.getTypeParser,
        },
      });
      try {
        const s = new PostgresCheckpointStore({ pool, table });
        await s.migrate();
        await s.save('k', { n: 1 }, 0);
        expect(await s.load('k')).toMatchObject({ version: 1, data: { n: 1 } });
        await s.close();
      } finally {
        await pool.end();
      }
    });
  });

  describe('compare-and-set under real concurrency', () => {
    it("many clients racing one key with the same version: exactly one wins, the others learn the winner's version", async () => {
      const table = freshTable('race');
      const contenders = Array.from({ length: 12 }, () =>
        store({ connectionString: DATABASE_URL, table, maxConnections: 1 }),
      );
      await contenders[0]!.migrate();
      await contenders[0]!.save('hot', { by: -1 }, 0);
      for (let round = 1; round <= 5; round++) {
        const results = await Promise.allSettled(contenders.map((s, i) => s.save('hot', { by: i, round }, round)));
        const won = results.filter((r) => r.status === 'fulfilled');
        expect(won, `round ${round}`).toHaveLength(1);
        expect((won[0] as PromiseFulfilledResult<number>).value).toBe(round + 1);
        for (const r of results) {
          if (r.status === 'rejected') {
            expect(CheckpointConflictError.isInstance(r.reason)).toBe(true);
            expect(r.reason).toMatchObject({ key: 'hot', expected: round, actual: round + 1 });
          }
        }
        const winner = results.findIndex((r) => r.status === 'fulfilled');
        expect((await contenders[0]!.load('hot'))?.data).toEqual({ by: winner, round });
      }
    });

    it('many clients creating one key at once: exactly one creates it, the others conflict with actual 1', async () => {
      const table = freshTable('create');
      const contenders = Array.from({ length: 12 }, () =>
        store({ connectionString: DATABASE_URL, table, maxConnections: 1 }),
      );
      await contenders[0]!.migrate();
      for (let round = 0; round < 5; round++) {
        const key = `new-${round}`;
        const results = await Promise.allSettled(contenders.map((s, i) => s.save(key, i, 0)));
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        for (const r of results)
          if (r.status === 'rejected')
            expect(r.reason).toMatchObject({ code: 'CHECKPOINT_CONFLICT', expected: 0, actual: 1 });
      }
    });

    // Many round trips to the server: on a busy 2-core machine more than vitest's default 5 s
    // (a time limit, not a timing assertion).
    it(
      'counters incremented by read-modify-write from many clients lose no increment',
      { timeout: 60_000 },
      async () => {
        const table = freshTable('counter');
        const clients = Array.from({ length: 8 }, () =>
          store({ connectionString: DATABASE_URL, table, maxConnections: 1 }),
        );
        await clients[0]!.migrate();
        const PER_CLIENT = 15;
        await Promise.all(
          clients.map(async (s) => {
            for (let done = 0; done < PER_CLIENT;) {
              const current = await s.load('counter');
              try {
                await s.save(
                  'counter',
                  { n: ((current?.data as { n: number } | undefined)?.n ?? 0) + 1 },
                  current?.version ?? 0,
                );
                done++;
              } catch (error) {
                if (!CheckpointConflictError.isInstance(error)) throw error;
              }
            }
          }),
        );
        expect(await clients[0]!.load('counter')).toMatchObject({
          version: clients.length * PER_CLIENT,
          data: { n: clients.length * PER_CLIENT },
        });
      },
    );

    it('saves of many keys made at once (one statement for those made meanwhile): each compare-and-set on its own, history kept', async () => {
      const table = freshTable('batched');
      const [a, b] = [0, 1].map(() =>
        store({ connectionString: DATABASE_URL, table, maxConnections: 2, keepVersions: 3 }),
      ) as [PostgresCheckpointStore, PostgresCheckpointStore];
      await a.migrate();
      const keys = Array.from({ length: 30 }, (_, i) => `k${String(i)}`);
      for (const key of keys) await a.save(key, { v: 1 }, 0);
      // One store, all keys at once, key 7 with a stale version: only it conflicts.
      const results = await Promise.allSettled(keys.map((key) => a.save(key, { v: 2 }, key === 'k7' ? 5 : 1)));
      results.forEach((r, i) => {
        if (i === 7)
          expect(r).toMatchObject({
            status: 'rejected',
            reason: { code: 'CHECKPOINT_CONFLICT', expected: 5, actual: 1 },
          });
        else expect(r).toEqual({ status: 'fulfilled', value: 2 });
      });
      // Two stores racing every key with the same version: exactly one wins each key.
      for (let round = 2; round <= 6; round++) {
        const versions = keys.map((key) => (key === 'k7' ? round - 1 : round));
        const raced = await Promise.all(
          [a, b].map((s, who) =>
            Promise.allSettled(keys.map((key, i) => s.save(key, { v: round + 1, who }, versions[i] as number))),
          ),
        );
        for (let i = 0; i < keys.length; i++) {
          const won = raced.map((r) => r[i]?.status === 'fulfilled');
          expect(won.filter(Boolean), `${keys[i] as string} round ${String(round)}`).toHaveLength(1);
          const loser = raced[won[0] === true ? 1 : 0]?.[i];
          expect(loser).toMatchObject({ status: 'rejected', reason: { code: 'CHECKPOINT_CONFLICT' } });
          expect((await a.load(keys[i] as string))?.data).toEqual({ v: round + 1, who: won[0] === true ? 0 : 1 });
        }
      }
      // The history of each key: the versions before its current one, within keepVersions.
      const k3 = await collect(a.history('k3'));
      expect(k3.map((c) => c.version)).toEqual([7, 6, 5, 4]);
      expect(k3[1]?.data).toMatchObject({ v: 6 });
    });

    it("a save the server refuses inside a batch fails alone: the batch's other saves are sent again one at a time and land", async () => {
      const table = freshTable('refused');
      const s = store({ connectionString: DATABASE_URL, table, maxConnections: 2 });
      await s.migrate();
      const keys = Array.from({ length: 30 }, (_, i) => `k${String(i)}`);
      for (const key of keys) await s.save(key, { v: 1 }, 0);
      // A trigger refuses one key's update (as a CHECK, a size limit or a statement_timeout would):
      // in the statement of many saves, the whole statement is refused.
      const admin = adminPool();
      const fn = `${table}_refuse`;
      await admin.query(
        `CREATE FUNCTION "${fn}"() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ` +
          `IF NEW.key = 'k20' THEN RAISE EXCEPTION 'k20 is refused'; END IF; RETURN NEW; END $$`,
      );
      try {
        await admin.query(`CREATE TRIGGER refuse BEFORE UPDATE ON "${table}" FOR EACH ROW EXECUTE FUNCTION "${fn}"()`);
        const results = await Promise.allSettled(keys.map((key) => s.save(key, { v: 2 }, 1)));
        results.forEach((r, i) => {
          if (i === 20)
            expect(r).toMatchObject({
              status: 'rejected',
              reason: {
                code: 'POSTGRES_OPERATION_FAILED',
                message: expect.stringContaining('k20 is refused') as unknown,
              },
            });
          else expect(r).toEqual({ status: 'fulfilled', value: 2 });
        });
        for (const [i, key] of keys.entries()) expect((await s.load(key))?.version).toBe(i === 20 ? 1 : 2);
      } finally {
        await admin.query(`DROP TRIGGER IF EXISTS refuse ON "${table}"`);
        await admin.query(`DROP FUNCTION IF EXISTS "${fn}"()`);
      }
    });

    it('reports the real stored version in a conflict even when another tool wrote it', async () => {
      const s = await migrated();
      await s.save('k', 1, 0);
      await adminPool().query(`UPDATE ${quoted(s.table)} SET version = 41`);
      expect(await rejection(s.save('k', 2, 1))).toMatchObject({
        code: 'CHECKPOINT_CONFLICT',
        expected: 1,
        actual: 41,
      });
      expect(await s.save('k', 2, 41)).toBe(42);
    });

    it('keeps updated_at from going backwards even if the server clock does', async () => {
      const s = await migrated();
      await s.save('k', 1, 0);
      await adminPool().query(`UPDATE ${quoted(s.table)} SET updated_at = now() + interval '1 hour'`);
      const future = (await s.load('k'))?.updatedAt ?? '';
      await s.save('k', 2, 1);
      expect((await s.load('k'))?.updatedAt).toBe(future);
    });
  });

  describe('keys PostgreSQL text cannot hold', () => {
    it('regression: a key with a NUL is refused with CHECKPOINT_KEY_INVALID, never sent to the server', async () => {
      const s = await migrated();
      await s.save('a', 'plain a', 0);
      for (const op of [() => s.save('a\u0000b', 'x', 0), () => s.load('a\u0000b'), () => s.delete('a\u0000b')]) {
        const error = await rejection(op());
        expect(isSignalyardError(error, 'CHECKPOINT_KEY_INVALID')).toBe(true);
        expect((error as Error).message).toContain('NUL character at index 1');
      }
      expect(await s.load('a')).toMatchObject({ version: 1, data: 'plain a' });
    });

    it('regression: keys with lone surrogates are refused, never merged into U+FFFD', async () => {
      const s = await migrated();
      for (const key of ['\ud800', 'x\udfff', 'end\ud83d', '\ude00start']) {
        const error = await rejection(s.save(key, 1, 0));
        expect(isSignalyardError(error, 'CHECKPOINT_KEY_INVALID')).toBe(true);
        expect((error as Error).message).toContain('lone surrogate');
      }
      expect(await collect(s.list())).toEqual([]);
    });

    it('keeps well-formed unicode keys apart: astral, U+FFFF, U+10FFFF, combining marks', async () => {
      const s = await migrated();
      const keys = ['x😀', 'x\uffff', 'x\u{10ffff}', 'xe\u0301', 'x\u00e9', 'x'];
      for (const [i, key] of keys.entries()) await s.save(key, i, 0);
      for (const [i, key] of keys.entries()) expect(await s.load(key)).toMatchObject({ data: i });
    });
  });

  describe('list(prefix)', () => {
    it('regression: % and _ and \\ in a prefix are literal, not the LIKE wildcards a naive query would leak', async () => {
      const s = await migrated();
      for (const key of ['50%off', '50xoff', 'a_b', 'aXb', 'a\\b', 'a\\\\b']) await s.save(key, 1, 0);
      expect(await collect(s.list('50%'))).toEqual(['50%off']);
      expect(await collect(s.list('a_'))).toEqual(['a_b']);
      expect(await collect(s.list('a\\'))).toEqual(['a\\\\b', 'a\\b']);
      expect(await collect(s.list('%'))).toEqual([]);
    });

    it('yields keys in code-unit order, like MemoryCheckpointStore (the server sorts code points)', async () => {
      const s = await migrated();
      const keys = ['k\uffff', 'k😀', 'k\ue000', 'kz', 'k', 'kZ'];
      for (const key of keys) await s.save(key, 1, 0);
      expect(await collect(s.list('k'))).toEqual(['k', 'kZ', 'kz', 'k😀', 'k\ue000', 'k\uffff']);
    });

    it('handles prefixes ending in U+10FFFF and U+D7FF, and half a surrogate pair, as startsWith does', async () => {
      const s = await migrated();
      const keys = [
        'a\u{10ffff}',
        'a\u{10ffff}z',
        'b',
        'a\ud7ff',
        'a\ud7ffq',
        'a\ue000',
        '\u{10ffff}\u{10ffff}',
        '\u{10ffff}',
        'x😀',
        'x😁',
        'xy',
      ];
      for (const key of keys) await s.save(key, 1, 0);
      expect(await collect(s.list('a\u{10ffff}'))).toEqual(['a\u{10ffff}', 'a\u{10ffff}z']);
      expect(await collect(s.list('a\ud7ff'))).toEqual(['a\ud7ff', 'a\ud7ffq']);
      expect(await collect(s.list('\u{10ffff}'))).toEqual(['\u{10ffff}', '\u{10ffff}\u{10ffff}']);
      expect(await collect(s.list('x\ud83d'))).toEqual(['x😀', 'x😁']);
      expect(await collect(s.list('x\u0000'))).toEqual([]);
      expect(await collect(s.list('\ude00'))).toEqual([]);
    });

    it('refuses a non-string prefix with CHECKPOINT_KEY_INVALID', async () => {
      const s = await migrated();
      const error = await rejection(collect(s.list(7 as unknown as string)));
      expect(isSignalyardError(error, 'CHECKPOINT_KEY_INVALID')).toBe(true);
      expect(CheckpointStoreError.isInstance(error)).toBe(true); // core's class, like every other store's
      expect((error as Error).message).toContain('7');
    });

    // Many round trips to the server: on a busy 2-core machine more than vitest's default 5 s
    // (a time limit, not a timing assertion).
    it(
      'yields exactly what MemoryCheckpointStore yields, in the same order, for any keys and prefix',
      { timeout: 60_000 },
      async () => {
        const s = await migrated('property');
        const alphabet = [
          'a',
          'b',
          'A',
          '%',
          '_',
          '\\',
          ':',
          '\u00e9',
          '\ud7ff',
          '\ue000',
          '\uffff',
          '😀',
          '\u{10ffff}',
        ];
        const text = fc.array(fc.constantFrom(...alphabet), { maxLength: 4 }).map((parts) => parts.join(''));
        let run = 0;
        await fc.assert(
          fc.asyncProperty(
            fc.uniqueArray(
              text.filter((k) => k !== ''),
              { maxLength: 10 },
            ),
            text,
            async (keys, prefix) => {
              // Each run under its own namespace in the one table: `r<n>/` + key.
              const ns = `r${run++}/`;
              const memory = new MemoryCheckpointStore();
              for (const key of keys) {
                await s.save(ns + key, key, 0);
                await memory.save(ns + key, key, 0);
              }
              expect(await collect(s.list(ns + prefix))).toEqual(await collect(memory.list(ns + prefix)));
            },
          ),
          { numRuns: 120 },
        );
      },
    );

    it('takes its snapshot at the first step: deleting while iterating is safe', async () => {
      const s = await migrated();
      for (const key of ['p:1', 'p:2', 'p:3']) await s.save(key, 1, 0);
      const seen: string[] = [];
      for await (const key of s.list('p:')) {
        seen.push(key);
        await s.delete(key);
      }
      expect(seen).toEqual(['p:1', 'p:2', 'p:3']);
      expect(await collect(s.list())).toEqual([]);
    });
  });

  describe('rows changed behind the store', () => {
    it('loads a row whose data is not JSON as POSTGRES_DATA_CORRUPT naming the key', async () => {
      const s = await migrated();
      await s.save('k', { ok: true }, 0);
      await adminPool().query(`UPDATE ${quoted(s.table)} SET data = '{not json'`);
      const error = await rejection(s.load('k'));
      expect(PostgresStoreError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ code: 'POSTGRES_DATA_CORRUPT', table: s.table });
      expect((error as Error).message).toContain('"k"');
      expect((error as Error).cause).toBeInstanceOf(SyntaxError);
    });

    it('loads a row whose version is beyond a safe integer as POSTGRES_DATA_CORRUPT, in load and in a conflict', async () => {
      const s = await migrated();
      await s.save('k', 1, 0);
      await adminPool().query(`UPDATE ${quoted(s.table)} SET version = 9007199254740993`);
      expect(await rejection(s.load('k'))).toMatchObject({ code: 'POSTGRES_DATA_CORRUPT' });
      expect(await rejection(s.save('k', 2, 1))).toMatchObject({ code: 'POSTGRES_DATA_CORRUPT' });
      expect(await rejection(s.save('k', 2, 0))).toMatchObject({ code: 'POSTGRES_DATA_CORRUPT' });
    });

    it('a table dropped under a running store fails calls with POSTGRES_OPERATION_FAILED and writes nothing', async () => {
      const s = await migrated();
      await adminPool().query(`DROP TABLE ${quoted(s.historyTable)}, ${quoted(s.table)}`);
      expect(await rejection(s.save('k', 1, 0))).toMatchObject({ code: 'POSTGRES_OPERATION_FAILED', pgCode: '42P01' });
      expect(await rejection(collect(s.list('x')))).toMatchObject({ code: 'POSTGRES_OPERATION_FAILED' });
      expect(await rejection(s.delete('k'))).toMatchObject({ code: 'POSTGRES_OPERATION_FAILED' });
      await s.migrate();
      expect(await s.save('k', 1, 0)).toBe(1);
    });
  });

  describe('close()', () => {
    let pool: Pool;
    beforeAll(() => {
      pool = new Pool({ connectionString: DATABASE_URL, max: 2 });
    });
    afterAll(async () => {
      await pool.end();
    });

    it('leaves a pool it was given open, and later calls reject with CHECKPOINT_STORE_CLOSED', async () => {
      const table = freshTable('close');
      const s = new PostgresCheckpointStore({ pool, table });
      await s.migrate();
      await s.save('k', 'kept', 0);
      await s.close();
      await s.close();
      for (const op of [
        () => s.load('k'),
        () => s.save('k', 1, 1),
        () => s.delete('k'),
        () => collect(s.list()),
        () => s.migrate(),
      ]) {
        expect(isSignalyardError(await rejection(op()), 'CHECKPOINT_STORE_CLOSED')).toBe(true);
      }
      expect((await pool.query(`SELECT data FROM "${table}"`)).rows).toEqual([{ data: '"kept"' }]);
    });

    it('ends a pool it opened, after the calls in flight finish', async () => {
      const s = new PostgresCheckpointStore({
        connectionString: DATABASE_URL,
        table: freshTable('close'),
        maxConnections: 2,
      });
      await s.migrate();
      const saving = s.save('k', 'in flight', 0);
      await s.close();
      expect(await saving).toBe(1);
      const reader = store({ connectionString: DATABASE_URL, table: s.table });
      expect(await reader.load('k')).toMatchObject({ data: 'in flight' });
    });
  });
});

describe('error classes', () => {
  const storeError = new PostgresStoreError({
    code: 'POSTGRES_OPERATION_FAILED',
    table: 't',
    message: 'boom',
    pgCode: '57P01',
  });

  it('PostgresStoreError.isInstance matches its own instances and subclasses only', () => {
    class Sub extends PostgresStoreError {}
    expect(PostgresStoreError.isInstance(storeError)).toBe(true);
    expect(PostgresStoreError.isInstance(new Sub({ code: 'POSTGRES_DATA_CORRUPT', table: 'y', message: 'y' }))).toBe(
      true,
    );
    expect(PostgresStoreError.isInstance(new CheckpointConflictError({ key: 'k', expected: 0, actual: 1 }))).toBe(
      false,
    );
    expect(
      PostgresStoreError.isInstance(new SignalyardError({ code: 'POSTGRES_OPERATION_FAILED', message: 'x' })),
    ).toBe(false);
    expect(PostgresStoreError.isInstance({ code: 'POSTGRES_OPERATION_FAILED' })).toBe(false);
    expect(PostgresStoreError.isInstance(null)).toBe(false);
    expect(SignalyardError.isInstance(storeError)).toBe(true);
    expect(storeError.name).toBe('PostgresStoreError');
    expect(storeError.pgCode).toBe('57P01');
    expect('pgCode' in new PostgresStoreError({ code: 'POSTGRES_MIGRATE_FAILED', table: 'p', message: 'm' })).toBe(
      false,
    );
  });
});

describe('types', () => {
  it('is a CheckpointStore whose options take exactly one of pool or connectionString', () => {
    expectTypeOf<PostgresCheckpointStore>().toExtend<CheckpointStore>();
    expectTypeOf<{ pool: Pool }>().toExtend<PostgresCheckpointStoreOptions>();
    expectTypeOf<{
      connectionString: string;
      table: string;
      maxConnections: number;
    }>().toExtend<PostgresCheckpointStoreOptions>();
    expectTypeOf<{ pool: Pool; connectionString: string }>().not.toExtend<PostgresCheckpointStoreOptions>();
    expectTypeOf<{ pool: Pool; maxConnections: number }>().not.toExtend<PostgresCheckpointStoreOptions>();
    expectTypeOf<{ table: string }>().not.toExtend<PostgresCheckpointStoreOptions>();
    expectTypeOf<PostgresStoreError['code']>().toEqualTypeOf<PostgresStoreErrorCode>();
    expectTypeOf<PostgresCheckpointStore['migrate']>().toEqualTypeOf<() => Promise<void>>();
    expectTypeOf<{ pool: Pool; clock: Clock }>().toExtend<PostgresCheckpointStoreOptions>();
  });

  it('exports the schema number it writes: 2 (docs/scaling-out.md describes that layout)', () => {
    expect(POSTGRES_SCHEMA_VERSION).toBe(2);
    expectTypeOf<typeof POSTGRES_SCHEMA_VERSION>().toEqualTypeOf<2>();
  });
});
