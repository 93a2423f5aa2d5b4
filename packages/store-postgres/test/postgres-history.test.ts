import { readFileSync } from 'node:fs';
import { ConfigError, type Checkpoint } from '@signalyard/core';
import {
  POSTGRES_SCHEMA_VERSION,
  PostgresCheckpointStore,
  PostgresStoreError,
  type PostgresCheckpointStoreOptions,
} from '@signalyard/store-postgres';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { collect, rejection, thrown } from '@signalyard/test-utils';
import {
  DATABASE_URL,
  adminPool,
  describePostgres,
  dropTablesAndEnd,
  uniqueTable,
} from '@signalyard/test-utils/postgres';

const tables = new Set<string>();
function freshTable(label = 'history'): string {
  const table = uniqueTable(label);
  tables.add(table);
  return table;
}
const open: { close(): Promise<void> }[] = [];
function store(options: PostgresCheckpointStoreOptions): PostgresCheckpointStore {
  const s = new PostgresCheckpointStore(options);
  open.push(s);
  return s;
}
async function migrated(options: Partial<PostgresCheckpointStoreOptions> = {}): Promise<PostgresCheckpointStore> {
  const s = store({
    connectionString: DATABASE_URL,
    table: freshTable(),
    maxConnections: 4,
    ...options,
  } as PostgresCheckpointStoreOptions);
  await s.migrate();
  return s;
}
afterEach(async () => {
  for (const s of open.splice(0).reverse()) await s.close();
});
afterAll(async () => {
  await dropTablesAndEnd(tables);
});

const quoted = (table: string): string =>
  table
    .split('.')
    .map((p) => `"${p}"`)
    .join('.');
const versionsOf = (list: readonly Checkpoint[]): number[] => list.map((c) => c.version);

/**
 * A table as the previous release (no schema version mark, no history table) left it: its
 * CREATE statement verbatim, and checkpoints written with its INSERT and UPDATE statements.
 */
async function previousReleaseTable(table: string, checkpoints: Record<string, unknown[]>): Promise<void> {
  const t = quoted(table);
  const admin = adminPool();
  await admin.query(`CREATE TABLE IF NOT EXISTS ${t} (
  key text COLLATE "C" NOT NULL PRIMARY KEY,
  version bigint NOT NULL CHECK (version > 0),
  data text NOT NULL,
  updated_at timestamptz NOT NULL DEFAULT now()
)`);
  for (const [key, versions] of Object.entries(checkpoints)) {
    for (const [i, data] of versions.entries()) {
      if (i === 0) {
        await admin.query(
          `INSERT INTO ${t} (key, version, data, updated_at) VALUES ($1, 1, $2, now()) ON CONFLICT (key) DO NOTHING RETURNING version::text`,
          [key, JSON.stringify(data)],
        );
      } else {
        await admin.query(
          `UPDATE ${t} SET version = version + 1, data = $2, updated_at = greatest(clock_timestamp(), updated_at) ` +
            `WHERE key = $1 AND version = $3 RETURNING version::text`,
          [key, JSON.stringify(data), i],
        );
      }
    }
  }
}

async function tableExists(table: string): Promise<boolean> {
  const { rows } = await adminPool().query<{ found: boolean }>('SELECT to_regclass($1) IS NOT NULL AS found', [
    quoted(table),
  ]);
  return rows[0]?.found === true;
}

async function commentOf(table: string): Promise<string | null> {
  const { rows } = await adminPool().query<{ comment: string | null }>(
    `SELECT obj_description(to_regclass($1), 'pg_class') AS comment`,
    [quoted(table)],
  );
  return rows[0]?.comment ?? null;
}

describe('options and names (no server needed)', () => {
  it('names the history table <table>_history in the same schema', async () => {
    const plain = new PostgresCheckpointStore({ connectionString: DATABASE_URL });
    expect(plain.historyTable).toBe('signalyard_checkpoints_history');
    const qualified = new PostgresCheckpointStore({ connectionString: DATABASE_URL, table: 'app.sessions' });
    expect(qualified.historyTable).toBe('app.sessions_history');
    await plain.close();
    await qualified.close();
  });

  it('gives a name too long for the suffix a cut, hashed history name of at most 63 characters, one per name', async () => {
    const a = new PostgresCheckpointStore({ connectionString: DATABASE_URL, table: `s.${'a'.repeat(62)}b` });
    const b = new PostgresCheckpointStore({ connectionString: DATABASE_URL, table: `s.${'a'.repeat(62)}c` });
    const fits = new PostgresCheckpointStore({ connectionString: DATABASE_URL, table: 'x'.repeat(55) });
    for (const s of [a, b]) {
      const [schema, name] = s.historyTable.split('.');
      expect(schema).toBe('s');
      expect(name).toMatch(/^a{46}_[0-9a-f]{8}_history$/);
      expect(name?.length).toBe(63);
    }
    expect(a.historyTable).not.toBe(b.historyTable);
    expect(fits.historyTable).toBe(`${'x'.repeat(55)}_history`);
    for (const s of [a, b, fits]) await s.close();
  });

  it('refuses a bad keepVersions with CONFIG_INVALID naming the option', () => {
    for (const keepVersions of [-1, 0.5, '20', Number.NaN, null]) {
      const error = thrown(
        () =>
          new PostgresCheckpointStore({
            connectionString: DATABASE_URL,
            keepVersions,
          } as unknown as PostgresCheckpointStoreOptions),
      );
      expect(ConfigError.isInstance(error)).toBe(true);
      expect((error as ConfigError).problems.map((p) => p.path)).toEqual(['keepVersions']);
    }
  });
});

describePostgres('a table written by the previous release', () => {
  const session = {
    v: 1,
    agentId: 'support',
    strategy: { kind: 'direct' },
    history: [{ role: 'user', content: 'hi' }],
    engine: null,
  };

  it('before migrate(): load and list work, writes and history reads fail with SCHEMA_OUTDATED naming migrate()', async () => {
    const table = freshTable('previous');
    await previousReleaseTable(table, { a: [{ n: 1 }, session], b: [{ n: 1 }] });
    const s = store({ connectionString: DATABASE_URL, table });
    expect(await s.load('a')).toMatchObject({ version: 2, data: session });
    expect(await collect(s.list())).toEqual(['a', 'b']);
    for (const call of [
      () => s.save('a', { n: 3 }, 2),
      () => s.save('new', { n: 1 }, 0),
      () => collect(s.history('a')),
      () => s.loadVersion('a', 2),
    ]) {
      const error = await rejection(call());
      expect(PostgresStoreError.isInstance(error)).toBe(true);
      expect(error).toMatchObject({ code: 'SCHEMA_OUTDATED', table, pgCode: '42P01' });
      expect((error as Error).message).toContain('migrate()');
      expect((error as Error).message).toContain(`${table}_history`);
    }
    const { rows } = await adminPool().query(`SELECT key, version::int, data FROM ${quoted(table)} ORDER BY key`);
    expect(rows).toEqual([
      { key: 'a', version: 2, data: JSON.stringify(session) },
      { key: 'b', version: 1, data: '{"n":1}' },
    ]);
  });

  it('migrate() adds the history table; checkpoints stay readable, start their history, and saves continue', async () => {
    const table = freshTable('previous');
    await previousReleaseTable(table, { a: [{ n: 1 }, { n: 2 }, session] });
    const s = store({ connectionString: DATABASE_URL, table, keepVersions: 2 });
    await s.migrate();
    expect(await tableExists(`${table}_history`)).toBe(true);
    expect(await commentOf(table)).toBe(`@signalyard/store-postgres schema ${POSTGRES_SCHEMA_VERSION}`);
    const current = await s.load('a');
    expect(current).toMatchObject({ version: 3, data: session });
    expect(await collect(s.history('a'))).toEqual([current]);
    expect(await s.loadVersion('a', 3)).toEqual(current);
    expect(await s.loadVersion('a', 2)).toBeUndefined();
    const newer = { ...session, cause: { at: '2026-01-01T00:00:00.000Z' }, fromTheFuture: [1] };
    for (let v = 3; v < 6; v++) expect(await s.save('a', { ...newer, n: v + 1 }, v)).toBe(v + 1);
    expect((await collect(s.history('a'))).map((c) => [c.version, (c.data as { n: number }).n])).toEqual([
      [6, 6],
      [5, 5],
      [4, 4],
    ]);
    expect((await s.loadVersion('a', 5))?.data).toEqual({ ...newer, n: 5 });
    await s.delete('a');
    expect(await collect(s.history('a'))).toEqual([]);
  });

  it('many processes migrating at once take turns: all succeed and the table is migrated once', async () => {
    const table = freshTable('previous');
    await previousReleaseTable(table, { k: [1, 2] });
    const stores = Array.from({ length: 5 }, () => store({ connectionString: DATABASE_URL, table, maxConnections: 1 }));
    await Promise.all(stores.map((s) => s.migrate()));
    await stores[0]!.save('k', 3, 2);
    await stores[1]!.migrate();
    expect(versionsOf(await collect(stores[2]!.history('k')))).toEqual([3, 2]);
  });

  it('a failed migration changes nothing: a foreign table under the history name', async () => {
    const table = freshTable('previous');
    await previousReleaseTable(table, { k: [1] });
    await adminPool().query(`CREATE TABLE ${quoted(`${table}_history`)} (id serial PRIMARY KEY, note text)`);
    const s = store({ connectionString: DATABASE_URL, table });
    const error = await rejection(s.migrate());
    expect(error).toMatchObject({ code: 'POSTGRES_MIGRATE_FAILED', table });
    expect((error as Error).message).toContain(`${table}_history`);
    expect((error as Error).message).toContain('["id integer","note text"]');
    expect(await commentOf(table)).toBeNull();
    expect(await s.load('k')).toMatchObject({ version: 1, data: 1 });
  });

  it('a table migrated by a newer release is refused with POSTGRES_SCHEMA_UNSUPPORTED, changing nothing', async () => {
    const table = freshTable('newer');
    await previousReleaseTable(table, { k: [1] });
    const mark = `@signalyard/store-postgres schema ${POSTGRES_SCHEMA_VERSION + 1}`;
    await adminPool().query(`COMMENT ON TABLE ${quoted(table)} IS '${mark}'`);
    const s = store({ connectionString: DATABASE_URL, table });
    const error = await rejection(s.migrate());
    expect(PostgresStoreError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'POSTGRES_SCHEMA_UNSUPPORTED', table });
    expect((error as Error).message).toContain(`schema version ${POSTGRES_SCHEMA_VERSION + 1}`);
    expect(await tableExists(`${table}_history`)).toBe(false);
    expect(await commentOf(table)).toBe(mark);
  });
});

describePostgres('history in the database', () => {
  it('keeps 20 versions before the current one by default', async () => {
    const s = await migrated();
    for (let v = 0; v < 23; v++) await s.save('k', { v: v + 1 }, v);
    const listed = await collect(s.history('k'));
    expect(listed).toHaveLength(21);
    expect(versionsOf(listed).slice(0, 2)).toEqual([23, 22]);
    expect(listed.at(-1)?.version).toBe(3);
  });

  it('keeps the current version in the table and the older ones in the history table', async () => {
    const s = await migrated({ keepVersions: 2 });
    for (let v = 0; v < 4; v++) await s.save('k', { v: v + 1 }, v);
    const admin = adminPool();
    const current = await admin.query(`SELECT version::int, data FROM ${quoted(s.table)}`);
    expect(current.rows).toEqual([{ version: 4, data: '{"v":4}' }]);
    const older = await admin.query(`SELECT key, version::int, data FROM ${quoted(s.historyTable)} ORDER BY version`);
    expect(older.rows).toEqual([
      { key: 'k', version: 2, data: '{"v":2}' },
      { key: 'k', version: 3, data: '{"v":3}' },
    ]);
    const listed = await collect(s.history('k'));
    expect(Date.parse(listed[0]!.updatedAt)).toBeGreaterThanOrEqual(Date.parse(listed[1]!.updatedAt));
  });

  it('a checkpoint deleted by anything (the previous release, by hand) takes its history with it', async () => {
    const s = await migrated();
    for (let v = 0; v < 3; v++) await s.save('k', { v: v + 1 }, v);
    await adminPool().query(`DELETE FROM ${quoted(s.table)} WHERE key = $1`, ['k']);
    const { rows } = await adminPool().query(`SELECT count(*)::int AS n FROM ${quoted(s.historyTable)}`);
    expect(rows[0]).toEqual({ n: 0 });
    expect(await s.save('k', 'again', 0)).toBe(1);
    expect((await collect(s.history('k'))).map((c) => c.data)).toEqual(['again']);
  });

  it('a save whose history write fails writes nothing: the current version stays as it was', async () => {
    const s = await migrated();
    await s.save('k', { v: 1 }, 0);
    await adminPool().query(`ALTER TABLE ${quoted(s.historyTable)} ADD CONSTRAINT refuse_v1 CHECK (data <> '{"v":1}')`);
    const error = await rejection(s.save('k', { v: 2 }, 1));
    expect(error).toMatchObject({ code: 'POSTGRES_OPERATION_FAILED', pgCode: '23514' });
    expect(await s.load('k')).toMatchObject({ version: 1, data: { v: 1 } });
    expect(versionsOf(await collect(s.history('k')))).toEqual([1]);
  });

  it('stores with different keepVersions share a table: each save prunes to its store, each lists at most its own', async () => {
    const many = await migrated({ keepVersions: 5 });
    const few = store({ connectionString: DATABASE_URL, table: many.table, keepVersions: 1, maxConnections: 2 });
    for (let v = 0; v < 6; v++) await many.save('k', { v: v + 1 }, v);
    expect(versionsOf(await collect(many.history('k')))).toEqual([6, 5, 4, 3, 2, 1]);
    expect(versionsOf(await collect(few.history('k')))).toEqual([6, 5]);
    expect(await few.loadVersion('k', 4)).toBeUndefined();
    expect((await many.loadVersion('k', 4))?.data).toEqual({ v: 4 });
    await few.save('k', { v: 7 }, 6);
    expect(versionsOf(await collect(many.history('k')))).toEqual([7, 6]);
  });

  it('a save prunes just below its window; older leftovers of a larger keepVersions go at the next 64th version', async () => {
    const many = await migrated({ keepVersions: 40 });
    const few = store({ connectionString: DATABASE_URL, table: many.table, keepVersions: 1, maxConnections: 2 });
    for (let v = 0; v < 41; v++) await many.save('k', { v: v + 1 }, v);
    const rows = async (): Promise<number[]> =>
      (
        await adminPool().query<{ version: number }>(
          `SELECT version::int FROM ${quoted(many.historyTable)} WHERE key = 'k' ORDER BY version`,
        )
      ).rows.map((r) => r.version);
    expect(await rows()).toHaveLength(40); // 1 … 40
    await few.save('k', { v: 42 }, 41); // prunes 40 … 25 (16 below its window): 1 … 24 are left for now
    expect(await rows()).toEqual([...Array.from({ length: 24 }, (_, i) => i + 1), 41]);
    for (let v = 42; v < 63; v++) await few.save('k', { v: v + 1 }, v);
    expect((await rows())[0]).toBe(1);
    await few.save('k', { v: 64 }, 63);
    await few.save('k', { v: 65 }, 64); // the 64th: every version below the window goes
    expect(await rows()).toEqual([64]);
    expect(versionsOf(await collect(many.history('k')))).toEqual([65, 64]);
  });

  it('reads a history row changed behind the store as POSTGRES_DATA_CORRUPT naming the key', async () => {
    const s = await migrated();
    await s.save('k', 1, 0);
    await s.save('k', 2, 1);
    await adminPool().query(`UPDATE ${quoted(s.historyTable)} SET data = '{not json'`);
    for (const read of [() => collect(s.history('k')), () => s.loadVersion('k', 1)]) {
      const error = await rejection(read());
      expect(error).toMatchObject({ code: 'POSTGRES_DATA_CORRUPT', table: s.table });
      expect((error as Error).message).toContain('"k"');
    }
    expect(await s.loadVersion('k', 2)).toMatchObject({ data: 2 });
  });

  it('a migrated table whose history table is dropped reports saves as SCHEMA_OUTDATED until migrate() runs again', async () => {
    const s = await migrated();
    await s.save('k', 1, 0);
    await adminPool().query(`DROP TABLE ${quoted(s.historyTable)}`);
    expect(await rejection(s.save('k', 2, 1))).toMatchObject({ code: 'SCHEMA_OUTDATED' });
    expect(await s.load('k')).toMatchObject({ version: 1 });
    await s.migrate();
    expect(await s.save('k', 2, 1)).toBe(2);
    expect(versionsOf(await collect(s.history('k')))).toEqual([2, 1]);
  });

  it('migrates a table whose name needs a hashed history name', async () => {
    const schema = uniqueTable('schema');
    await adminPool().query(`CREATE SCHEMA "${schema}"`);
    try {
      const s = store({ connectionString: DATABASE_URL, table: `${schema}.${'t'.repeat(63)}` });
      await s.migrate();
      await s.save('k', 1, 0);
      await s.save('k', 2, 1);
      expect(versionsOf(await collect(s.history('k')))).toEqual([2, 1]);
      expect(await tableExists(s.historyTable)).toBe(true);
    } finally {
      await adminPool().query(`DROP SCHEMA "${schema}" CASCADE`);
    }
  });
});

describePostgres('the layout docs/scaling-out.md describes (the layout authority)', () => {
  /** The guide's CREATE TABLE for `table`: its columns (name and type, in order) and primary key. */
  function documented(table: string): { columns: [string, string][]; primaryKey: string[] } {
    const guide = readFileSync(new URL('../../../docs/scaling-out.md', import.meta.url), 'utf8');
    const body = guide.split(`CREATE TABLE ${table} (`)[1]?.split('\n);')[0];
    if (body === undefined) throw new Error(`docs/scaling-out.md shows no CREATE TABLE ${table}`);
    const lines = body
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l !== '');
    const key = lines.find((l) => l.startsWith('PRIMARY KEY'));
    const columns = lines
      .filter((l) => !l.startsWith('PRIMARY KEY'))
      .map((l) => l.split(/\s+/).slice(0, 2) as [string, string]);
    return {
      columns,
      primaryKey:
        key === undefined
          ? lines.filter((l) => l.includes('PRIMARY KEY')).map((l) => l.split(/\s+/)[0] as string)
          : (/\(([^)]*)\)/.exec(key)?.[1] ?? '').split(',').map((c) => c.trim()),
    };
  }

  it('is exactly what migrate() creates, marked with POSTGRES_SCHEMA_VERSION', async () => {
    const s = await migrated();
    const table = s.table;
    for (const [shown, actual] of [
      ['signalyard_checkpoints', table],
      ['signalyard_checkpoints_history', s.historyTable],
    ] as const) {
      const { rows } = await adminPool().query<{ name: string; type: string }>(
        `SELECT a.attname AS name, format_type(a.atttypid, a.atttypmod) AS type FROM pg_attribute a
          WHERE a.attrelid = to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum`,
        [quoted(actual)],
      );
      const short = (type: string): string => (type === 'timestamp with time zone' ? 'timestamptz' : type);
      const doc = documented(shown);
      expect(
        rows.map((r) => [r.name, short(r.type)]),
        shown,
      ).toEqual(doc.columns);
      const pk = await adminPool().query<{ name: string }>(
        `SELECT a.attname AS name FROM pg_index i JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY(i.indkey)
          WHERE i.indrelid = to_regclass($1) AND i.indisprimary ORDER BY array_position(i.indkey, a.attnum)`,
        [quoted(actual)],
      );
      expect(
        pk.rows.map((r) => r.name),
        shown,
      ).toEqual(doc.primaryKey);
    }
    const guide = readFileSync(new URL('../../../docs/scaling-out.md', import.meta.url), 'utf8');
    expect(guide).toContain(
      `COMMENT ON TABLE signalyard_checkpoints IS '@signalyard/store-postgres schema ${POSTGRES_SCHEMA_VERSION}';`,
    );
    expect(await commentOf(table)).toBe(`@signalyard/store-postgres schema ${POSTGRES_SCHEMA_VERSION}`);
  });
});
