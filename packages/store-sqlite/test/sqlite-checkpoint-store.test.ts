import { mkdtempSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CheckpointConflictError,
  CheckpointStoreError,
  ConfigError,
  MemoryCheckpointStore,
  SignalyardError,
  isSignalyardError,
  type Checkpoint,
  type CheckpointStore,
} from '@signalyard/core';
import {
  SQLITE_SCHEMA_VERSION,
  SqliteCheckpointStore,
  SqliteSchemaVersionError,
  SqliteStoreError,
  type SqliteCheckpointStoreOptions,
  type SqliteStoreErrorCode,
} from '@signalyard/store-sqlite';
import fc from 'fast-check';
import Database from 'libsql';
import { afterAll, afterEach, describe, expect, expectTypeOf, it } from 'vitest';
import { collect, rejection } from '@signalyard/test-utils';

const dir = mkdtempSync(join(tmpdir(), 'signalyard-sqlite-'));
let fileCount = 0;
const freshPath = (): string => join(dir, `store-${++fileCount}.db`);

const open: { close(): unknown }[] = [];
/** A store closed after the test. */
function store(options: SqliteCheckpointStoreOptions): SqliteCheckpointStore {
  const s = new SqliteCheckpointStore(options);
  open.push(s);
  return s;
}
/** A raw libsql connection to a file, closed after the test. */
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

function caught(fn: () => unknown): unknown {
  try {
    fn();
  } catch (error) {
    return error;
  }
  throw new Error('expected a throw');
}

describe('new SqliteCheckpointStore(options)', () => {
  it('opens a new file in WAL mode with the checkpoints and history tables and the current schema version', async () => {
    const path = freshPath();
    const s = store({ path });
    expect(s.path).toBe(path);
    await s.save('agent:main:main', { n: 1 }, 0);
    const db = raw(path);
    expect((db.prepare('PRAGMA journal_mode').get() as { journal_mode: string }).journal_mode).toBe('wal');
    expect((db.prepare('PRAGMA user_version').get() as { user_version: number }).user_version).toBe(
      SQLITE_SCHEMA_VERSION,
    );
    const columns = db.prepare('PRAGMA table_info(checkpoints)').all() as { name: string; type: string; pk: number }[];
    expect(columns.map((c) => [c.name, c.type, c.pk])).toEqual([
      ['key', 'TEXT', 1],
      ['version', 'INTEGER', 0],
      ['data', 'TEXT', 0],
      ['updated_at', 'TEXT', 0],
      ['history_slots', 'INTEGER', 0],
    ]);
    const history = db.prepare('PRAGMA table_info(checkpoint_history)').all() as {
      name: string;
      type: string;
      pk: number;
    }[];
    expect(history.map((c) => [c.name, c.type, c.pk])).toEqual([
      ['key', 'TEXT', 1],
      ['slot', 'INTEGER', 2],
      ['version', 'INTEGER', 0],
      ['data', 'TEXT', 0],
      ['updated_at', 'TEXT', 0],
    ]);
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[];
    expect(tables.map((t) => t.name)).toEqual(['checkpoints', 'checkpoint_history']);
    expect(existsSync(`${path}-wal`)).toBe(true);
  });

  it('keeps JSON.stringify(data) as the stored text, with the version and an ISO updated_at', async () => {
    const path = freshPath();
    const s = store({ path });
    const data = { history: [{ role: 'user', content: 'hi\u0000' }], n: -0, gone: undefined };
    await s.save('k', data, 0);
    const row = raw(path).prepare('SELECT key, version, data, updated_at FROM checkpoints').get() as Record<
      string,
      unknown
    >;
    expect(row.key).toBe('k');
    expect(row.version).toBe(1);
    expect(row.data).toBe(JSON.stringify(data));
    expect(new Date(row.updated_at as string).toISOString()).toBe(row.updated_at);
  });

  it('continues where the last store on the same file stopped', async () => {
    const path = freshPath();
    const first = new SqliteCheckpointStore({ path });
    await first.save('a', { step: 1 }, 0);
    await first.save('a', { step: 2 }, 1);
    await first.close();
    const second = store({ path });
    expect(await second.load('a')).toMatchObject({ version: 2, data: { step: 2 } });
    expect(await second.save('a', { step: 3 }, 2)).toBe(3);
  });

  it('accepts ":memory:": each store is a private database', async () => {
    const a = store({ path: ':memory:' });
    const b = store({ path: ':memory:' });
    await a.save('k', 'a', 0);
    expect(await b.load('k')).toBeUndefined();
    expect(await a.load('k')).toMatchObject({ version: 1, data: 'a' });
  });

  it('accepts synchronous "full" and "extra" and a busy timeout of 0', async () => {
    for (const synchronous of ['full', 'extra'] as const) {
      const s = store({ path: freshPath(), synchronous, busyTimeoutMs: 0 });
      expect(await s.save('k', 1, 0)).toBe(1);
    }
  });

  it('refuses bad options with one ConfigError listing every problem', () => {
    const error = caught(
      () =>
        new SqliteCheckpointStore({
          path: '',
          busyTimeoutMs: -5,
          synchronous: 'off' as 'full',
          pathh: 'x',
        } as SqliteCheckpointStoreOptions),
    );
    expect(ConfigError.isInstance(error)).toBe(true);
    const problems = (error as ConfigError).problems;
    expect((error as ConfigError).code).toBe('CONFIG_INVALID');
    expect(problems.map((p) => p.path)).toEqual(['path', 'busyTimeoutMs', 'synchronous', 'pathh']);
    expect(problems[1]?.message).toContain('-5');
    expect(problems[2]?.message).toContain('"off"');
    expect(problems[3]?.message).toContain('unknown option "pathh"');
  });

  it.each([
    ['no options', undefined],
    ['null', null],
    ['a string', 'sessions.db'],
    ['an array', []],
  ])('refuses %s as options with CONFIG_INVALID', (_, options) => {
    const error = caught(() => new SqliteCheckpointStore(options as unknown as SqliteCheckpointStoreOptions));
    expect(isSignalyardError(error, 'CONFIG_INVALID')).toBe(true);
    expect((error as ConfigError).problems[0]?.path).toBe('');
  });

  it.each([
    ['null', null],
    ['a number', 0],
    ['an object without now()', { time: () => 0 }],
  ])('refuses %s as the clock with CONFIG_INVALID at "clock"', (_, clock) => {
    const error = caught(
      () => new SqliteCheckpointStore({ path: ':memory:', clock } as unknown as SqliteCheckpointStoreOptions),
    );
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as ConfigError).problems.map((p) => p.path)).toEqual(['clock']);
    expect((error as ConfigError).problems[0]?.message).toContain('expected a Clock { now(): number }');
  });

  it('a clock that returns no time fails the save with CLOCK_INVALID before anything is written', async () => {
    let now = Date.UTC(2030, 0, 1);
    const s = store({ path: ':memory:', clock: { now: () => now } });
    await s.save('k', 'one', 0);
    now = Number.NaN;
    const error = await rejection(s.save('k', 'two', 1));
    expect(isSignalyardError(error, 'CLOCK_INVALID')).toBe(true);
    expect(await s.load('k')).toEqual({ version: 1, data: 'one', updatedAt: '2030-01-01T00:00:00.000Z' });
  });

  it.each([
    ['a number path', { path: 42 }, 'path'],
    ['a path with NUL', { path: 'a\u0000b.db' }, 'path'],
    ['a fractional busy timeout', { path: ':memory:', busyTimeoutMs: 1.5 }, 'busyTimeoutMs'],
    ['a string busy timeout', { path: ':memory:', busyTimeoutMs: '100' }, 'busyTimeoutMs'],
  ])('refuses %s with CONFIG_INVALID naming the option', (_, options, path) => {
    const error = caught(() => new SqliteCheckpointStore(options as unknown as SqliteCheckpointStoreOptions));
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as ConfigError).problems.map((p) => p.path)).toEqual([path]);
  });

  it('refuses a file with a newer schema_version with SqliteSchemaVersionError and leaves it untouched', () => {
    const path = freshPath();
    const db = new Database(path);
    db.exec(`PRAGMA user_version = ${SQLITE_SCHEMA_VERSION + 1}`);
    db.close();
    const error = caught(() => new SqliteCheckpointStore({ path }));
    expect(SqliteSchemaVersionError.isInstance(error)).toBe(true);
    const e = error as SqliteSchemaVersionError;
    expect(e.code).toBe('SQLITE_SCHEMA_UNSUPPORTED');
    expect(e.found).toBe(SQLITE_SCHEMA_VERSION + 1);
    expect(e.supported).toBe(SQLITE_SCHEMA_VERSION);
    expect(e.path).toBe(path);
    expect(e.message).toContain(`schema version ${SQLITE_SCHEMA_VERSION + 1}`);
    const check = raw(path);
    expect((check.prepare('PRAGMA user_version').get() as { user_version: number }).user_version).toBe(
      SQLITE_SCHEMA_VERSION + 1,
    );
    expect(check.prepare("SELECT name FROM sqlite_master WHERE name = 'checkpoints'").get()).toBeUndefined();
    expect((check.prepare('PRAGMA journal_mode').get() as { journal_mode: string }).journal_mode).not.toBe('wal');
  });

  it('refuses a file whose schema version is negative (someone else owns it) with SQLITE_OPEN_FAILED', () => {
    const path = freshPath();
    const db = new Database(path);
    db.exec('PRAGMA user_version = -3');
    db.close();
    const error = caught(() => new SqliteCheckpointStore({ path }));
    expect(SqliteStoreError.isInstance(error)).toBe(true);
    expect((error as SqliteStoreError).code).toBe('SQLITE_OPEN_FAILED');
    expect((error as SqliteStoreError).message).toContain('user_version -3');
  });

  it('refuses a file holding a checkpoints table of another shape, and changes nothing in it', () => {
    const path = freshPath();
    const db = new Database(path);
    db.exec('CREATE TABLE checkpoints (id INTEGER PRIMARY KEY, payload BLOB)');
    db.close();
    const error = caught(() => new SqliteCheckpointStore({ path }));
    expect(SqliteStoreError.isInstance(error)).toBe(true);
    expect((error as SqliteStoreError).code).toBe('SQLITE_OPEN_FAILED');
    expect((error as SqliteStoreError).message).toContain('["id","payload"]');
    expect((raw(path).prepare('PRAGMA user_version').get() as { user_version: number }).user_version).toBe(0);
  });

  it("refuses a file that is not a database with SQLITE_OPEN_FAILED carrying SQLite's code", () => {
    const path = freshPath();
    writeFileSync(path, 'this is not a database, just text that goes on for a while. '.repeat(100));
    const error = caught(() => new SqliteCheckpointStore({ path }));
    expect(SqliteStoreError.isInstance(error)).toBe(true);
    expect((error as SqliteStoreError).code).toBe('SQLITE_OPEN_FAILED');
    expect((error as SqliteStoreError).sqliteCode).toBe('SQLITE_NOTADB');
    expect((error as SqliteStoreError).path).toBe(path);
    expect((error as Error).cause).toBeInstanceOf(Error);
  });

  it('refuses a path in a missing directory with SQLITE_OPEN_FAILED naming the path', () => {
    const path = join(dir, 'no', 'such', 'dir', 'x.db');
    const error = caught(() => new SqliteCheckpointStore({ path }));
    expect(SqliteStoreError.isInstance(error)).toBe(true);
    expect((error as SqliteStoreError).code).toBe('SQLITE_OPEN_FAILED');
    expect((error as Error).message).toContain(JSON.stringify(path));
  });

  it('opens an existing file a second time while another store holds it', async () => {
    const path = freshPath();
    const a = store({ path });
    const b = store({ path });
    await a.save('k', 1, 0);
    expect(await b.load('k')).toMatchObject({ version: 1, data: 1 });
  });
});

describe('compare-and-set across connections to one file', () => {
  it('two stores on one file never overwrite each other: the stale one gets CheckpointConflictError', async () => {
    const path = freshPath();
    const a = store({ path });
    const b = store({ path });
    expect(await a.save('session', { by: 'a' }, 0)).toBe(1);
    const lost = await rejection(b.save('session', { by: 'b' }, 0));
    expect(CheckpointConflictError.isInstance(lost)).toBe(true);
    expect(lost).toMatchObject({ key: 'session', expected: 0, actual: 1 });
    expect(await b.save('session', { by: 'b' }, 1)).toBe(2);
    expect(await rejection(a.save('session', { by: 'a again' }, 1))).toMatchObject({
      code: 'CHECKPOINT_CONFLICT',
      expected: 1,
      actual: 2,
    });
    expect(await a.load('session')).toMatchObject({ version: 2, data: { by: 'b' } });
  });

  it('a save that cannot get the write lock fails with SQLITE_OPERATION_FAILED (SQLITE_BUSY) and writes nothing', async () => {
    const path = freshPath();
    const s = store({ path, busyTimeoutMs: 0 });
    await s.save('k', 'v1', 0);
    const other = raw(path);
    other.exec('BEGIN IMMEDIATE');
    const error = await rejection(s.save('k', 'v2', 1));
    expect(SqliteStoreError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'SQLITE_OPERATION_FAILED', sqliteCode: 'SQLITE_BUSY', path });
    expect((error as Error).message).toContain('"k"');
    other.exec('ROLLBACK');
    expect(await s.load('k')).toMatchObject({ version: 1, data: 'v1' });
    expect(await s.save('k', 'v2', 1)).toBe(2);
  });

  it('reads stay available while another connection holds the write lock (WAL)', async () => {
    const path = freshPath();
    const s = store({ path, busyTimeoutMs: 0 });
    await s.save('k', 'v1', 0);
    const other = raw(path);
    other.exec('BEGIN IMMEDIATE');
    other.exec('UPDATE checkpoints SET data = \'"uncommitted"\'');
    expect(await s.load('k')).toMatchObject({ data: 'v1' });
    expect(await collect(s.list())).toEqual(['k']);
    other.exec('ROLLBACK');
  });
});

describe('keys SQLite text cannot hold', () => {
  it('regression: a key with a NUL is refused with CHECKPOINT_KEY_INVALID, never truncated into another key', async () => {
    const s = store({ path: ':memory:' });
    await s.save('a', 'plain a', 0);
    for (const op of [() => s.save('a\u0000b', 'x', 0), () => s.load('a\u0000b'), () => s.delete('a\u0000b')]) {
      const error = await rejection(op());
      expect(isSignalyardError(error, 'CHECKPOINT_KEY_INVALID')).toBe(true);
      expect((error as Error).message).toContain('NUL character at index 1');
    }
    expect(await s.load('a')).toMatchObject({ version: 1, data: 'plain a' });
  });

  it('regression: keys with lone surrogates are refused, never merged into U+FFFD', async () => {
    const s = store({ path: ':memory:' });
    for (const key of ['\ud800', 'x\udfff', 'end\ud83d', '\ude00start']) {
      const error = await rejection(s.save(key, 1, 0));
      expect(isSignalyardError(error, 'CHECKPOINT_KEY_INVALID')).toBe(true);
      expect((error as Error).message).toContain('lone surrogate');
    }
    expect(await collect(s.list())).toEqual([]);
  });

  it('keeps well-formed unicode keys apart: astral, U+FFFF, U+10FFFF, combining marks', async () => {
    const s = store({ path: ':memory:' });
    const keys = ['x😀', 'x\uffff', 'x\u{10ffff}', 'xe\u0301', 'x\u00e9', 'x'];
    for (const [i, key] of keys.entries()) await s.save(key, i, 0);
    for (const [i, key] of keys.entries()) expect(await s.load(key)).toMatchObject({ data: i });
  });

  it('still rejects an empty or non-string key with CHECKPOINT_KEY_INVALID', async () => {
    const s = store({ path: ':memory:' });
    expect(isSignalyardError(await rejection(s.load('')), 'CHECKPOINT_KEY_INVALID')).toBe(true);
    expect(
      isSignalyardError(await rejection(s.save(undefined as unknown as string, 1, 0)), 'CHECKPOINT_KEY_INVALID'),
    ).toBe(true);
  });
});

describe('list(prefix)', () => {
  it('regression: % and _ in a prefix are literal, not the LIKE wildcards a naive query would leak', async () => {
    const s = store({ path: ':memory:' });
    for (const key of ['50%off', '50xoff', 'a_b', 'aXb', 'a\\b']) await s.save(key, 1, 0);
    expect(await collect(s.list('50%'))).toEqual(['50%off']);
    expect(await collect(s.list('a_'))).toEqual(['a_b']);
    expect(await collect(s.list('a\\'))).toEqual(['a\\b']);
  });

  it('yields keys in code-unit order, like MemoryCheckpointStore (SQLite sorts UTF-8 bytes differently)', async () => {
    const s = store({ path: ':memory:' });
    const keys = ['k\uffff', 'k😀', 'k\ue000', 'kz', 'k'];
    for (const key of keys) await s.save(key, 1, 0);
    expect(await collect(s.list('k'))).toEqual([...keys].sort());
    expect(await collect(s.list('k'))).toEqual(['k', 'kz', 'k😀', 'k\ue000', 'k\uffff']);
  });

  it('handles prefixes ending in U+10FFFF and U+D7FF (the range bound carries over)', async () => {
    const s = store({ path: ':memory:' });
    const keys = [
      'a\u{10ffff}',
      'a\u{10ffff}z',
      'b',
      'a\ud7ff',
      'a\ud7ffq',
      'a\ue000',
      '\u{10ffff}\u{10ffff}',
      '\u{10ffff}',
    ];
    for (const key of keys) await s.save(key, 1, 0);
    expect(await collect(s.list('a\u{10ffff}'))).toEqual(['a\u{10ffff}', 'a\u{10ffff}z']);
    expect(await collect(s.list('a\ud7ff'))).toEqual(['a\ud7ff', 'a\ud7ffq']);
    expect(await collect(s.list('\u{10ffff}'))).toEqual(['\u{10ffff}', '\u{10ffff}\u{10ffff}']);
  });

  it('a prefix ending in half a surrogate pair matches the keys that complete it, as startsWith does', async () => {
    const s = store({ path: ':memory:' });
    for (const key of ['x😀', 'x😁', 'xy']) await s.save(key, 1, 0);
    expect(await collect(s.list('x\ud83d'))).toEqual(['x😀', 'x😁']);
    expect(await collect(s.list('x\u0000'))).toEqual([]);
    expect(await collect(s.list('\ude00'))).toEqual([]);
  });

  it('refuses a non-string prefix with CHECKPOINT_KEY_INVALID', async () => {
    const s = store({ path: ':memory:' });
    const error = await rejection(collect(s.list(7 as unknown as string)));
    expect(isSignalyardError(error, 'CHECKPOINT_KEY_INVALID')).toBe(true);
    expect(CheckpointStoreError.isInstance(error)).toBe(true); // core's class, like every other store's
    expect((error as Error).message).toContain('7');
  });

  it('yields exactly what MemoryCheckpointStore yields, in the same order, for any keys and prefix', async () => {
    const alphabet = ['a', 'b', '%', '_', '\\', ':', '\u00e9', '\ud7ff', '\ue000', '\uffff', '😀', '\u{10ffff}'];
    const text = fc.array(fc.constantFrom(...alphabet), { maxLength: 4 }).map((parts) => parts.join(''));
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(
          text.filter((k) => k !== ''),
          { maxLength: 12 },
        ),
        text,
        async (keys, prefix) => {
          const sqlite = new SqliteCheckpointStore({ path: ':memory:' });
          const memory = new MemoryCheckpointStore();
          try {
            for (const key of keys) {
              await sqlite.save(key, key, 0);
              await memory.save(key, key, 0);
            }
            expect(await collect(sqlite.list(prefix))).toEqual(await collect(memory.list(prefix)));
          } finally {
            await sqlite.close();
            await memory.close();
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('takes its snapshot at the first step: deleting while iterating is safe', async () => {
    const s = store({ path: ':memory:' });
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
  it('loads a row whose data is not JSON as SQLITE_DATA_CORRUPT naming the key', async () => {
    const path = freshPath();
    const s = store({ path });
    await s.save('k', { ok: true }, 0);
    raw(path).exec("UPDATE checkpoints SET data = '{not json'");
    const error = await rejection(s.load('k'));
    expect(SqliteStoreError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'SQLITE_DATA_CORRUPT', path });
    expect((error as Error).message).toContain('"k"');
    expect((error as Error).cause).toBeInstanceOf(SyntaxError);
  });

  it('loads a row whose version is not a positive integer as SQLITE_DATA_CORRUPT', async () => {
    const path = freshPath();
    const s = store({ path });
    await s.save('k', 1, 0);
    raw(path).exec("UPDATE checkpoints SET version = 'seven'");
    expect(await rejection(s.load('k'))).toMatchObject({ code: 'SQLITE_DATA_CORRUPT' });
    expect(await rejection(s.save('k', 2, 1))).toMatchObject({ code: 'SQLITE_DATA_CORRUPT' });
    expect(await rejection(s.save('k', 2, 0))).toMatchObject({ code: 'SQLITE_DATA_CORRUPT' });
  });

  it('reports the real stored version in a conflict even when another tool wrote it', async () => {
    const path = freshPath();
    const s = store({ path });
    await s.save('k', 1, 0);
    raw(path).exec('UPDATE checkpoints SET version = 41');
    expect(await rejection(s.save('k', 2, 1))).toMatchObject({ code: 'CHECKPOINT_CONFLICT', expected: 1, actual: 41 });
    expect(await s.save('k', 2, 41)).toBe(42);
  });
});

describe('close()', () => {
  it('is idempotent, keeps checkpoints in the file, and later calls reject with CHECKPOINT_STORE_CLOSED', async () => {
    const path = freshPath();
    const s = new SqliteCheckpointStore({ path });
    await s.save('k', 'kept', 0);
    await s.close();
    await s.close();
    for (const op of [() => s.load('k'), () => s.save('k', 1, 1), () => s.delete('k'), () => collect(s.list())]) {
      expect(isSignalyardError(await rejection(op()), 'CHECKPOINT_STORE_CLOSED')).toBe(true);
    }
    expect(await store({ path }).load('k')).toMatchObject({ data: 'kept' });
  });
});

describe('error classes', () => {
  const schema = new SqliteSchemaVersionError({ path: 'x.db', found: 9, supported: 1 });
  const storeError = new SqliteStoreError({
    code: 'SQLITE_OPERATION_FAILED',
    path: 'x.db',
    message: 'boom',
    sqliteCode: 'SQLITE_FULL',
  });

  it('SqliteSchemaVersionError.isInstance matches its own instances and subclasses only', () => {
    class Sub extends SqliteSchemaVersionError {}
    expect(SqliteSchemaVersionError.isInstance(schema)).toBe(true);
    expect(SqliteSchemaVersionError.isInstance(new Sub({ path: 'y', found: 2, supported: 1 }))).toBe(true);
    expect(SqliteSchemaVersionError.isInstance(storeError)).toBe(false);
    expect(SqliteSchemaVersionError.isInstance(new SignalyardError({ code: 'X', message: 'x' }))).toBe(false);
    expect(SqliteSchemaVersionError.isInstance(new Error('x'))).toBe(false);
    expect(SqliteSchemaVersionError.isInstance(null)).toBe(false);
    expect(SignalyardError.isInstance(schema)).toBe(true);
    expect(schema.name).toBe('SqliteSchemaVersionError');
  });

  it('SqliteStoreError.isInstance matches its own instances and subclasses only', () => {
    class Sub extends SqliteStoreError {}
    expect(SqliteStoreError.isInstance(storeError)).toBe(true);
    expect(SqliteStoreError.isInstance(new Sub({ code: 'SQLITE_DATA_CORRUPT', path: 'y', message: 'y' }))).toBe(true);
    expect(SqliteStoreError.isInstance(schema)).toBe(false);
    expect(SqliteStoreError.isInstance(new CheckpointConflictError({ key: 'k', expected: 0, actual: 1 }))).toBe(false);
    expect(SqliteStoreError.isInstance({ code: 'SQLITE_OPERATION_FAILED' })).toBe(false);
    expect(SignalyardError.isInstance(storeError)).toBe(true);
    expect(storeError.sqliteCode).toBe('SQLITE_FULL');
    expect('sqliteCode' in new SqliteStoreError({ code: 'SQLITE_OPEN_FAILED', path: 'p', message: 'm' })).toBe(false);
  });
});

describe('types', () => {
  it('is a CheckpointStore with a typed options object and error code union', () => {
    expectTypeOf<SqliteCheckpointStore>().toExtend<CheckpointStore>();
    expectTypeOf<SqliteCheckpointStoreOptions>().toHaveProperty('path').toEqualTypeOf<string>();
    expectTypeOf<SqliteCheckpointStoreOptions['synchronous']>().toEqualTypeOf<
      'normal' | 'full' | 'extra' | undefined
    >();
    expectTypeOf<SqliteStoreError['code']>().toEqualTypeOf<SqliteStoreErrorCode>();
    expectTypeOf<SqliteSchemaVersionError['found']>().toEqualTypeOf<number>();
    expectTypeOf<typeof SQLITE_SCHEMA_VERSION>().toEqualTypeOf<3>();
    expectTypeOf<SqliteCheckpointStoreOptions['keepVersions']>().toEqualTypeOf<number | undefined>();
    expectTypeOf<SqliteCheckpointStore['history']>().toEqualTypeOf<
      (key: string, opts?: { before?: number; limit?: number }) => AsyncIterable<Checkpoint>
    >();
    expectTypeOf<SqliteCheckpointStore['loadVersion']>().toEqualTypeOf<
      (key: string, version: number) => Promise<Checkpoint | undefined>
    >();
  });
});
