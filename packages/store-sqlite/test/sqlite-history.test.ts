import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, type Checkpoint } from '@signalyard/core';
import {
  SQLITE_SCHEMA_VERSION,
  SqliteCheckpointStore,
  SqliteStoreError,
  type SqliteCheckpointStoreOptions,
} from '@signalyard/store-sqlite';
import Database from 'libsql';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { collect, rejection, thrown } from '@signalyard/test-utils';

const dir = mkdtempSync(join(tmpdir(), 'signalyard-sqlite-history-'));
let fileCount = 0;
const freshPath = (): string => join(dir, `history-${++fileCount}.db`);

const open: { close(): unknown }[] = [];
function store(options: SqliteCheckpointStoreOptions): SqliteCheckpointStore {
  const s = new SqliteCheckpointStore(options);
  open.push(s);
  return s;
}
function raw(path: string): Database.Database {
  const db = new Database(path);
  open.push(db);
  return db;
}
afterEach(async () => {
  for (const s of open.splice(0).reverse()) await s.close();
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const versionsOf = (list: readonly Checkpoint[]): number[] => list.map((c) => c.version);
const userVersion = (db: Database.Database): number =>
  (db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version;
const tables = (db: Database.Database): string[] =>
  (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name").all() as { name: string }[]).map(
    (t) => t.name,
  );

/**
 * A file as the previous release (schema version 1) left it: its CREATE statement and pragmas
 * verbatim, and checkpoints written with its INSERT and UPDATE statements.
 */
function previousReleaseFile(path: string, checkpoints: Record<string, unknown[]>): void {
  const db = new Database(path);
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA synchronous = NORMAL');
  db.exec('BEGIN IMMEDIATE');
  db.exec(`CREATE TABLE IF NOT EXISTS checkpoints (
  key TEXT PRIMARY KEY NOT NULL,
  version INTEGER NOT NULL,
  data TEXT NOT NULL,
  updated_at TEXT NOT NULL
)`);
  db.exec('PRAGMA user_version = 1');
  db.exec('COMMIT');
  const insert = db.prepare(
    'INSERT INTO checkpoints (key, version, data, updated_at) VALUES (?, 1, ?, ?) ON CONFLICT (key) DO NOTHING',
  );
  const update = db.prepare(
    'UPDATE checkpoints SET version = ?, data = ?, updated_at = ? WHERE key = ? AND version = ?',
  );
  for (const [key, versions] of Object.entries(checkpoints)) {
    versions.forEach((data, i) => {
      const at = new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString();
      if (i === 0) insert.run(key, JSON.stringify(data), at);
      else update.run(i + 1, JSON.stringify(data), at, key, i);
    });
  }
  db.close();
}

describe('a file written by the previous release (schema version 1)', () => {
  const session = {
    v: 1,
    agentId: 'support',
    strategy: { kind: 'direct' },
    history: [{ role: 'user', content: 'hi' }],
    engine: null,
  };

  it('opens, is migrated to the current schema, and keeps its checkpoints readable with their history', async () => {
    const path = freshPath();
    previousReleaseFile(path, { 'agent:support:main': [{ ...session, n: 1 }, { ...session, n: 2 }, session] });
    const s = store({ path });
    const db = raw(path);
    expect(userVersion(db)).toBe(SQLITE_SCHEMA_VERSION);
    expect(tables(db)).toEqual(['checkpoint_history', 'checkpoints']);
    const current = await s.load('agent:support:main');
    expect(current).toEqual({ version: 3, data: session, updatedAt: '2025-01-01T00:00:02.000Z' });
    // The versions before the migration were never kept: the history starts at the current one.
    expect(await collect(s.history('agent:support:main'))).toEqual([current]);
    expect(await s.loadVersion('agent:support:main', 3)).toEqual(current);
    expect(await s.loadVersion('agent:support:main', 2)).toBeUndefined();
  });

  it('keeps working after the migration: saves continue the version line and build its history', async () => {
    const path = freshPath();
    previousReleaseFile(path, { a: [{ n: 1 }, { n: 2 }], b: [{ n: 1 }] });
    const s = store({ path, keepVersions: 2 });
    expect(await s.save('a', { n: 3, cause: { at: '2026-01-01T00:00:00.000Z' } }, 2)).toBe(3);
    expect(await s.save('a', { n: 4 }, 3)).toBe(4);
    expect(await s.save('a', { n: 5 }, 4)).toBe(5);
    expect((await collect(s.history('a'))).map((c) => [c.version, c.data])).toEqual([
      [5, { n: 5 }],
      [4, { n: 4 }],
      [3, { n: 3, cause: { at: '2026-01-01T00:00:00.000Z' } }],
    ]);
    expect(await collect(s.list())).toEqual(['a', 'b']);
    await s.delete('b');
    expect(await collect(s.list())).toEqual(['a']);
    expect(await s.save('c', { n: 1 }, 0)).toBe(1);
  });

  it('keeps every top-level field of a checkpoint, known to this release or not', async () => {
    const path = freshPath();
    const newer = { ...session, pendingApprovals: [{ id: 'a1' }], fromTheFuture: { x: [1] } };
    previousReleaseFile(path, { k: [newer] });
    const s = store({ path });
    expect((await s.load('k'))?.data).toEqual(newer);
    await s.save('k', { ...newer, history: [] }, 1);
    expect((await s.loadVersion('k', 1))?.data).toEqual(newer);
  });

  it('is migrated once: a second store on the file, and reopening it, change nothing', async () => {
    const path = freshPath();
    previousReleaseFile(path, { k: [1, 2] });
    const a = store({ path });
    const b = store({ path });
    await a.save('k', 3, 2);
    expect(versionsOf(await collect(b.history('k')))).toEqual([3, 2]);
    await a.close();
    await b.close();
    const again = store({ path });
    expect(versionsOf(await collect(again.history('k')))).toEqual([3, 2]);
    expect(userVersion(raw(path))).toBe(SQLITE_SCHEMA_VERSION);
  });

  it('is left exactly as it was when the migration cannot complete (a foreign checkpoint_history table)', async () => {
    const path = freshPath();
    previousReleaseFile(path, { k: [{ n: 1 }] });
    const db = new Database(path);
    db.exec('CREATE TABLE checkpoint_history (id INTEGER PRIMARY KEY, note TEXT)');
    db.close();
    const error = thrown(() => new SqliteCheckpointStore({ path }));
    expect(SqliteStoreError.isInstance(error)).toBe(true);
    expect((error as SqliteStoreError).code).toBe('SQLITE_OPEN_FAILED');
    expect((error as Error).message).toContain('"checkpoint_history"');
    expect((error as Error).message).toContain('["id","note"]');
    const check = raw(path);
    expect(userVersion(check)).toBe(1);
    expect(check.prepare('SELECT version, data FROM checkpoints').all()).toEqual([{ version: 1, data: '{"n":1}' }]);
  });
});

/**
 * A file as the previous release (schema version 2) left it: its CREATE statements and pragmas
 * verbatim, and checkpoints written with its save statements (the replaced version copied into
 * `checkpoint_history`, versions beyond `keep` deleted).
 */
function schema2File(path: string, keep: number, checkpoints: Record<string, number>): void {
  const db = new Database(path);
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA synchronous = NORMAL');
  db.exec('BEGIN IMMEDIATE');
  db.exec(`CREATE TABLE IF NOT EXISTS checkpoints (
  key TEXT PRIMARY KEY NOT NULL,
  version INTEGER NOT NULL,
  data TEXT NOT NULL,
  updated_at TEXT NOT NULL
)`);
  db.exec(`CREATE TABLE IF NOT EXISTS checkpoint_history (
  key TEXT NOT NULL,
  version INTEGER NOT NULL,
  data TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (key, version)
)`);
  db.exec('PRAGMA user_version = 2');
  db.exec('COMMIT');
  const insert = db.prepare(
    'INSERT INTO checkpoints (key, version, data, updated_at) VALUES (?, 1, ?, ?) ON CONFLICT (key) DO NOTHING',
  );
  const keepOld = db.prepare(
    'INSERT OR REPLACE INTO checkpoint_history (key, version, data, updated_at) ' +
      'SELECT key, version, data, updated_at FROM checkpoints WHERE key = ? AND version = ?',
  );
  const update = db.prepare(
    'UPDATE checkpoints SET version = ?, data = ?, updated_at = ? WHERE key = ? AND version = ?',
  );
  const prune = db.prepare('DELETE FROM checkpoint_history WHERE key = ? AND version < ?');
  for (const [key, versions] of Object.entries(checkpoints)) {
    for (let version = 1; version <= versions; version++) {
      const at = new Date(Date.UTC(2025, 0, 1, 0, 0, version)).toISOString();
      const data = JSON.stringify({ key, n: version });
      db.exec('BEGIN IMMEDIATE');
      if (version === 1) {
        insert.run(key, data, at);
      } else {
        keepOld.run(key, version - 1);
        update.run(version, data, at, key, version - 1);
        if (version - keep > 1) prune.run(key, version - keep);
      }
      db.exec('COMMIT');
    }
  }
  db.close();
}

describe('a file written by the previous release (schema version 2)', () => {
  it('opens, is migrated to the ring layout, and lists the same history it held', async () => {
    const path = freshPath();
    schema2File(path, 20, { a: 30, b: 5, c: 1 });
    const s = store({ path });
    const db = raw(path);
    expect(userVersion(db)).toBe(SQLITE_SCHEMA_VERSION);
    expect(tables(db)).toEqual(['checkpoint_history', 'checkpoints']);
    const a = await collect(s.history('a'));
    expect(versionsOf(a)).toEqual(Array.from({ length: 21 }, (_, i) => 30 - i));
    expect(a[1]).toEqual({ version: 29, data: { key: 'a', n: 29 }, updatedAt: '2025-01-01T00:00:29.000Z' });
    expect(versionsOf(await collect(s.history('b')))).toEqual([5, 4, 3, 2, 1]);
    expect(versionsOf(await collect(s.history('c')))).toEqual([1]);
    expect(await s.loadVersion('a', 10)).toMatchObject({ data: { key: 'a', n: 10 } });
    expect(await s.loadVersion('a', 9)).toBeUndefined();
  });

  it('keeps working: sessions continue their version line, the history stays unbroken and bounded', async () => {
    const path = freshPath();
    schema2File(path, 20, { a: 30, b: 5 });
    const s = store({ path, keepVersions: 20 });
    for (let v = 30; v < 35; v++) expect(await s.save('a', { key: 'a', n: v + 1 }, v)).toBe(v + 1);
    expect(await s.save('b', { key: 'b', n: 6 }, 5)).toBe(6);
    const a = await collect(s.history('a'));
    expect(versionsOf(a)).toEqual(Array.from({ length: 21 }, (_, i) => 35 - i));
    expect(a.map((c) => (c.data as { n: number }).n)).toEqual(versionsOf(a));
    expect(versionsOf(await collect(s.history('b')))).toEqual([6, 5, 4, 3, 2, 1]);
    const db = raw(path);
    // The migrated rows now sit in their ring slots: at most keepVersions rows per key.
    const rows = db.prepare("SELECT slot, version FROM checkpoint_history WHERE key = 'a'").all() as {
      slot: number;
      version: number;
    }[];
    expect(rows).toHaveLength(20);
    for (const row of rows) expect(row.slot).toBe(row.version % 20);
    await s.delete('b');
    expect(db.prepare("SELECT count(*) FROM checkpoint_history WHERE key = 'b'").raw().get()).toEqual([0]);
    expect(await s.save('b', { n: 1 }, 0)).toBe(1);
    expect(versionsOf(await collect(s.history('b')))).toEqual([1]);
  });

  it('continues under a smaller keepVersions: the history is cut to it at the next save', async () => {
    const path = freshPath();
    schema2File(path, 20, { a: 30 });
    const s = store({ path, keepVersions: 3 });
    expect(versionsOf(await collect(s.history('a')))).toEqual([30, 29, 28, 27]);
    await s.save('a', { n: 31 }, 30);
    expect(versionsOf(await collect(s.history('a')))).toEqual([31, 30, 29, 28]);
    expect(raw(path).prepare('SELECT count(*) FROM checkpoint_history').raw().get()).toEqual([3]);
  });

  it('is left exactly as it was when the migration cannot complete (a foreign table)', () => {
    const path = freshPath();
    schema2File(path, 20, { k: 3 });
    const db = new Database(path);
    db.exec('ALTER TABLE checkpoint_history RENAME TO elsewhere');
    db.exec('CREATE TABLE checkpoint_history (id INTEGER PRIMARY KEY, note TEXT)');
    db.close();
    const error = thrown(() => new SqliteCheckpointStore({ path }));
    expect(error).toMatchObject({ code: 'SQLITE_OPEN_FAILED' });
    expect((error as Error).message).toContain('["id","note"]');
    const check = raw(path);
    expect(userVersion(check)).toBe(2);
    expect(check.prepare('PRAGMA table_info(checkpoints)').all()).toHaveLength(4);
  });
});

describe('the history ring', () => {
  it('rewrites one row in place per save once a key has keepVersions versions behind it', async () => {
    const path = freshPath();
    const s = store({ path, keepVersions: 4 });
    for (let v = 0; v < 5; v++) await s.save('k', { v: v + 1 }, v);
    const db = raw(path);
    const rowids = (): unknown => db.prepare('SELECT rowid, slot FROM checkpoint_history ORDER BY slot').raw().all();
    const before = rowids();
    for (let v = 5; v < 13; v++) await s.save('k', { v: v + 1 }, v);
    expect(rowids()).toEqual(before);
    expect(db.prepare('SELECT slot, version FROM checkpoint_history ORDER BY slot').raw().all()).toEqual([
      [0, 12],
      [1, 9],
      [2, 10],
      [3, 11],
    ]);
    expect(versionsOf(await collect(s.history('k')))).toEqual([13, 12, 11, 10, 9]);
  });

  it('stays unbroken and bounded while stores with different keepVersions take turns on a key', async () => {
    const path = freshPath();
    const keeps = [0, 1, 2, 3, 5, 8];
    const stores = keeps.map((keepVersions) => store({ path, keepVersions }));
    const db = raw(path);
    let seed = 7;
    const pick = (): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed % keeps.length;
    };
    let version = 0;
    for (let i = 0; i < 300; i++) {
      const writer = pick();
      version = await (stores[writer] as SqliteCheckpointStore).save('k', { v: version + 1 }, version);
      const rows = db.prepare("SELECT count(*) FROM checkpoint_history WHERE key = 'k'").raw().get() as [number];
      expect(rows[0]).toBeLessThanOrEqual(keeps[writer] as number);
      for (const [j, reader] of stores.entries()) {
        const listed = versionsOf(await collect(reader.history('k')));
        // newest first, no gap, the current one first, at most keepVersions + 1
        expect(listed[0]).toBe(version);
        expect(listed).toEqual(listed.map((_, n) => version - n));
        expect(listed.length).toBeLessThanOrEqual((keeps[j] as number) + 1);
      }
    }
    // One store alone again: its history fills back up to keepVersions.
    const last = stores.at(-1) as SqliteCheckpointStore;
    for (let i = 0; i < 8; i++) version = await last.save('k', { v: version + 1 }, version);
    expect(versionsOf(await collect(last.history('k')))).toEqual(Array.from({ length: 9 }, (_, n) => version - n));
    expect(db.prepare('SELECT slot, version FROM checkpoint_history').raw().all()).toHaveLength(8);
  });
});

describe('history in the file', () => {
  it('keeps 20 versions before the current one by default', async () => {
    const s = store({ path: freshPath() });
    for (let v = 0; v < 23; v++) await s.save('k', { v: v + 1 }, v);
    const listed = await collect(s.history('k'));
    expect(listed).toHaveLength(21);
    expect(versionsOf(listed).slice(0, 2)).toEqual([23, 22]);
    expect(listed.at(-1)?.version).toBe(3);
  });

  it('stores older versions in checkpoint_history and the current one only in checkpoints', async () => {
    const path = freshPath();
    const s = store({ path, keepVersions: 2 });
    for (let v = 0; v < 4; v++) await s.save('k', { v: v + 1 }, v);
    const db = raw(path);
    expect(db.prepare('SELECT version, data FROM checkpoints').all()).toEqual([{ version: 4, data: '{"v":4}' }]);
    expect(db.prepare('SELECT key, version, data FROM checkpoint_history ORDER BY version').all()).toEqual([
      { key: 'k', version: 2, data: '{"v":2}' },
      { key: 'k', version: 3, data: '{"v":3}' },
    ]);
    await s.delete('k');
    expect(db.prepare('SELECT count(*) FROM checkpoint_history').raw().get()).toEqual([0]);
  });

  it('survives a restart: a new store on the file lists the same versions', async () => {
    const path = freshPath();
    const first = new SqliteCheckpointStore({ path });
    for (let v = 0; v < 3; v++) await first.save('k', { v: v + 1 }, v);
    const before = await collect(first.history('k'));
    await first.close();
    expect(await collect(store({ path }).history('k'))).toEqual(before);
  });

  it('a save whose history write fails writes nothing: the current version stays as it was', async () => {
    const path = freshPath();
    const s = store({ path });
    await s.save('k', { v: 1 }, 0);
    raw(path).exec(
      "CREATE TRIGGER refuse BEFORE INSERT ON checkpoint_history BEGIN SELECT RAISE(ABORT, 'history refused'); END",
    );
    const error = await rejection(s.save('k', { v: 2 }, 1));
    expect(SqliteStoreError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'SQLITE_OPERATION_FAILED' });
    expect((error as Error).message).toContain('history refused');
    expect(await s.load('k')).toMatchObject({ version: 1, data: { v: 1 } });
    expect(versionsOf(await collect(s.history('k')))).toEqual([1]);
  });

  it('stores with different keepVersions share a file: each save prunes to its store, each lists at most its own', async () => {
    const path = freshPath();
    const many = store({ path, keepVersions: 5 });
    const few = store({ path, keepVersions: 1 });
    for (let v = 0; v < 6; v++) await many.save('k', { v: v + 1 }, v);
    expect(versionsOf(await collect(many.history('k')))).toEqual([6, 5, 4, 3, 2, 1]);
    expect(versionsOf(await collect(few.history('k')))).toEqual([6, 5]);
    expect(await few.loadVersion('k', 4)).toBeUndefined();
    expect((await many.loadVersion('k', 4))?.data).toEqual({ v: 4 });
    await few.save('k', { v: 7 }, 6);
    expect(versionsOf(await collect(many.history('k')))).toEqual([7, 6]);
  });

  it('never lists history rows left without a current version, and a new key replaces them', async () => {
    const path = freshPath();
    const s = store({ path });
    // What a process of the previous release leaves when it deletes a key of a migrated file.
    raw(path).exec(
      `INSERT INTO checkpoint_history (key, slot, version, data, updated_at) VALUES ('k', 1, 1, '"stale"', '2025-01-01T00:00:00.000Z')`,
    );
    expect(await collect(s.history('k'))).toEqual([]);
    expect(await s.loadVersion('k', 1)).toBeUndefined();
    await s.save('k', 'fresh', 0);
    await s.save('k', 'second', 1);
    expect((await collect(s.history('k'))).map((c) => c.data)).toEqual(['second', 'fresh']);
  });

  it('reports a history row changed behind the store as SQLITE_DATA_CORRUPT naming the key', async () => {
    const path = freshPath();
    const s = store({ path });
    await s.save('k', 1, 0);
    await s.save('k', 2, 1);
    raw(path).exec("UPDATE checkpoint_history SET data = '{not json'");
    for (const read of [() => collect(s.history('k')), () => s.loadVersion('k', 1)]) {
      const error = await rejection(read());
      expect(error).toMatchObject({ code: 'SQLITE_DATA_CORRUPT', path });
      expect((error as Error).message).toContain('"k"');
    }
    expect(await s.loadVersion('k', 2)).toMatchObject({ data: 2 });
  });

  it('refuses a bad keepVersions with CONFIG_INVALID naming the option', () => {
    for (const keepVersions of [-1, 2.5, '20', Number.POSITIVE_INFINITY]) {
      const error = thrown(
        () => new SqliteCheckpointStore({ path: ':memory:', keepVersions } as SqliteCheckpointStoreOptions),
      );
      expect(ConfigError.isInstance(error)).toBe(true);
      expect((error as ConfigError).problems.map((p) => p.path)).toEqual(['keepVersions']);
    }
  });
});

describe('the layout docs/scaling-out.md describes (the layout authority)', () => {
  /** The ```sql block of the guide that creates `table`: its column names, in order, and its primary key. */
  function documented(table: string): { columns: string[]; primaryKey: string[] } {
    const guide = readFileSync(new URL('../../../docs/scaling-out.md', import.meta.url), 'utf8');
    const block = [...guide.matchAll(/```sql\n([\s\S]*?)```/g)]
      .map((m) => m[1] as string)
      .find((sql) => sql.includes(`CREATE TABLE ${table} (`));
    if (block === undefined) throw new Error(`docs/scaling-out.md shows no CREATE TABLE ${table}`);
    const body = (block.split(`CREATE TABLE ${table} (`)[1] as string).split('\n);')[0] as string;
    const lines = body
      .split('\n')
      .map((l) => l.replace(/--.*$/, '').trim())
      .filter((l) => l !== '');
    const key = lines.find((l) => l.startsWith('PRIMARY KEY'));
    return {
      columns: lines.filter((l) => !l.startsWith('PRIMARY KEY')).map((l) => l.split(/\s+/)[0] as string),
      primaryKey:
        key === undefined
          ? lines.filter((l) => l.includes('PRIMARY KEY')).map((l) => l.split(/\s+/)[0] as string)
          : (/\(([^)]*)\)/.exec(key)?.[1] ?? '').split(',').map((c) => c.trim()),
    };
  }

  it('is exactly the tables a new file gets, with the schema number SQLITE_SCHEMA_VERSION', async () => {
    const path = freshPath();
    const s = store({ path, keepVersions: 3 });
    for (let v = 0; v < 5; v++) await s.save('k', { v }, v);
    const db = raw(path);
    expect(tables(db)).toEqual(['checkpoint_history', 'checkpoints']);
    for (const table of ['checkpoints', 'checkpoint_history']) {
      const info = db.prepare(`PRAGMA table_info(${table})`).all() as { name: string; pk: number }[];
      const doc = documented(table);
      expect(
        info.map((c) => c.name),
        table,
      ).toEqual(doc.columns);
      expect(
        info
          .filter((c) => c.pk > 0)
          .sort((a, b) => a.pk - b.pk)
          .map((c) => c.name),
        table,
      ).toEqual(doc.primaryKey);
    }
    expect(userVersion(db)).toBe(SQLITE_SCHEMA_VERSION);
    const guide = readFileSync(new URL('../../../docs/scaling-out.md', import.meta.url), 'utf8');
    expect(guide).toContain(`PRAGMA user_version = ${SQLITE_SCHEMA_VERSION};`);
    // The ring: version v in slot v % keepVersions, the current one in its own table.
    expect(db.prepare('SELECT version, history_slots FROM checkpoints').all()).toEqual([
      { version: 5, history_slots: 3 },
    ]);
    expect(db.prepare('SELECT slot, version FROM checkpoint_history ORDER BY version').all()).toEqual([
      { slot: 2, version: 2 },
      { slot: 0, version: 3 },
      { slot: 1, version: 4 },
    ]);
  });
});
