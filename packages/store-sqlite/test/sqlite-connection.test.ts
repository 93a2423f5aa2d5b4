// One connection per file and settings in a process, shared by the checkpoint store and the
// inbox (sqlite-connection.ts), and the group commit they share (sqlite-write-batch.ts): writes
// asked for together commit together, and one that fails undoes only itself.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isSignalyardError } from '@signalyard/core';
import { SqliteCheckpointStore, SqliteInbox } from '@signalyard/store-sqlite';
import { rejection } from '@signalyard/test-utils';
import Database from 'libsql';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { SqliteWriteBatch } from '../src/sqlite-write-batch.js';

const dir = mkdtempSync(join(tmpdir(), 'signalyard-sqlite-connection-'));
let files = 0;
const fresh = (): string => join(dir, `shared-${files++}.db`);
const open: { close(): unknown }[] = [];
const track = <T extends { close(): unknown }>(thing: T): T => {
  open.push(thing);
  return thing;
};
afterEach(async () => {
  for (const thing of open.splice(0).reverse()) await Promise.resolve(thing.close()).catch(() => undefined);
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

const message = { kind: 'user_message', payload: 'hi' } as const;

describe('a store and an inbox of one process on one file', () => {
  it('a save and an accept asked for together both commit; a save that loses its compare-and-set undoes only itself', async () => {
    const path = fresh();
    const store = track(new SqliteCheckpointStore({ path }));
    const inbox = track(new SqliteInbox({ path }));
    await store.save('taken', { v: 1 }, 0);
    const [lost, receipt, saved] = await Promise.allSettled([
      store.save('taken', { v: 'late' }, 0),
      inbox.accept({ sessionKey: 'agent:main:a', signal: message, id: 'one' }),
      store.save('new', { v: 1 }, 0),
    ]);
    expect(lost.status).toBe('rejected');
    expect(isSignalyardError((lost as PromiseRejectedResult).reason, 'CHECKPOINT_CONFLICT')).toBe(true);
    expect(receipt).toMatchObject({ status: 'fulfilled', value: { seq: '1' } });
    expect(saved).toEqual({ status: 'fulfilled', value: 1 });
    expect((await store.load('taken'))?.data).toEqual({ v: 1 });
    expect((await store.load('new'))?.data).toEqual({ v: 1 });
    expect(await inbox.pending()).toHaveLength(1);
  });

  it('closing one of them leaves the other working on the connection they shared; the last one closes it', async () => {
    const path = fresh();
    const store = track(new SqliteCheckpointStore({ path }));
    const inbox = track(new SqliteInbox({ path }));
    const saving = store.save('k', { v: 1 }, 0);
    await store.close(); // the save asked for before close() is written
    expect(await saving).toBe(1);
    await inbox.accept({ sessionKey: 'agent:main:a', signal: message, id: 'after the store closed' });
    const again = track(new SqliteCheckpointStore({ path }));
    expect((await again.load('k'))?.data).toEqual({ v: 1 });
    await inbox.close();
    expect(await again.save('k', { v: 2 }, 1)).toBe(2);
    await again.close();
    const other = track(new SqliteInbox({ path }));
    expect((await other.pending()).map((e) => e.seq)).toEqual(['1']);
  });

  it('a store that cannot open its tables on a shared connection leaves the inbox on it working', async () => {
    const path = fresh();
    const inbox = track(new SqliteInbox({ path }));
    const raw = track(new Database(path));
    raw.exec('CREATE TABLE checkpoints (something TEXT)');
    expect(() => new SqliteCheckpointStore({ path })).toThrow(/checkpoints/);
    expect((await inbox.accept({ sessionKey: 'agent:main:a', signal: message, id: 'still open' })).seq).toBe('1');
  });
});

describe('SqliteWriteBatch', () => {
  function table(): { db: Database.Database; batch: SqliteWriteBatch; rows: () => unknown[] } {
    const db = track(new Database(':memory:'));
    db.exec('CREATE TABLE t (v TEXT PRIMARY KEY)');
    const all = db.prepare('SELECT v FROM t ORDER BY v').pluck();
    const batch = new SqliteWriteBatch(db);
    return { db, batch, rows: () => all.all() };
  }
  const failure = (what: string, error: unknown): Error => new Error(`${what}: ${String(error)}`);

  it('runs the writes asked for in one go in one transaction, each resolving once it committed', async () => {
    const { db, batch, rows } = table();
    const seen: boolean[] = [];
    const write = (v: string) =>
      batch.run(
        `insert ${v}`,
        () => {
          seen.push(db.inTransaction);
          db.prepare('INSERT INTO t (v) VALUES (?)').run(v);
          return v;
        },
        failure,
      );
    const results = await Promise.all([write('a'), write('b'), write('c')]);
    expect(results).toEqual(['a', 'b', 'c']);
    expect(seen).toEqual([true, true, true]);
    expect(rows()).toEqual(['a', 'b', 'c']);
    expect(db.inTransaction).toBe(false);
  });

  it('writes asked for by continuations until the event loop turns share one transaction; each resolves only once another connection sees it', async () => {
    const path = fresh();
    const db = track(new Database(path));
    db.exec('PRAGMA journal_mode = WAL');
    db.exec('CREATE TABLE t (v TEXT PRIMARY KEY)');
    const reader = track(new Database(path));
    const committed = reader.prepare('SELECT v FROM t ORDER BY v').pluck();
    const batch = new SqliteWriteBatch(db);
    const seenByOthers: unknown[][] = [];
    const write = (v: string) =>
      batch.run(
        `insert ${v}`,
        () => {
          seenByOthers.push(committed.all());
          db.prepare('INSERT INTO t (v) VALUES (?)').run(v);
          return v;
        },
        failure,
      );
    const visibleOnResolve = async (v: string): Promise<unknown[]> => {
      await write(v);
      return committed.all();
    };
    // `a` now, `b` after a few continuations, `c` from a promise settled on the next microtask.
    const a = visibleOnResolve('a');
    const b = (async () => {
      for (let i = 0; i < 5; i++) await Promise.resolve();
      return visibleOnResolve('b');
    })();
    const c = Promise.resolve().then(() => visibleOnResolve('c'));
    const seen = await Promise.all([a, b, c]);
    // One transaction: no write saw another's committed before it ran.
    expect(seenByOthers).toEqual([[], [], []]);
    for (const [i, v] of ['a', 'b', 'c'].entries()) expect(seen[i]).toContain(v);
  });

  it('a write that throws is undone alone, its caller gets its error through its failure; the others commit', async () => {
    const { db, batch, rows } = table();
    const insert = (v: string, fail = false) =>
      batch.run(
        `insert ${v}`,
        () => {
          db.prepare('INSERT INTO t (v) VALUES (?)').run(v);
          if (fail) throw new Error('refused');
          return v;
        },
        failure,
      );
    const [a, b, c, dup] = await Promise.allSettled([insert('a'), insert('b', true), insert('c'), insert('a')]);
    expect(a).toEqual({ status: 'fulfilled', value: 'a' });
    expect(c).toEqual({ status: 'fulfilled', value: 'c' });
    expect((b as PromiseRejectedResult).reason).toEqual(new Error('insert b: Error: refused'));
    // The second "a" breaks the primary key: SQLite's own error, undone alone too.
    expect(String((dup as PromiseRejectedResult).reason)).toMatch(/^Error: insert a: .*UNIQUE/);
    expect(rows()).toEqual(['a', 'c']);
  });

  it('a BEGIN that fails (the file locked past the busy timeout) fails every write of the batch, nothing written', async () => {
    const path = fresh();
    const db = track(new Database(path));
    db.exec('PRAGMA journal_mode = WAL');
    db.exec('PRAGMA busy_timeout = 0');
    db.exec('CREATE TABLE t (v TEXT)');
    const locker = track(new Database(path));
    locker.exec('BEGIN IMMEDIATE');
    const batch = new SqliteWriteBatch(db);
    const insert = (v: string) => batch.run(v, () => db.prepare('INSERT INTO t (v) VALUES (?)').run(v), failure);
    const errors = await Promise.all([rejection(insert('a')), rejection(insert('b'))]);
    expect(errors.map(String)).toEqual([
      expect.stringMatching(/^Error: a: .*lock/i),
      expect.stringMatching(/^Error: b: /),
    ]);
    locker.exec('ROLLBACK');
    expect(db.prepare('SELECT count(*) AS n FROM t').get()).toMatchObject({ n: 0 });
  });
});
