import { mkdtempSync, rmSync } from 'node:fs';
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
      `INSERT INTO checkpoint_history (key, version, data, updated_at) VALUES ('k', 1, '"stale"', '2025-01-01T00:00:00.000Z')`,
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
