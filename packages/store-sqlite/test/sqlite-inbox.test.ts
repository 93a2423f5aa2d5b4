import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, InboxError, type InboxEntry, type InboxLease } from '@signalyard/core';
import {
  SQLITE_INBOX_SCHEMA_VERSION,
  SQLITE_SCHEMA_VERSION,
  SqliteCheckpointStore,
  SqliteInbox,
  SqliteSchemaVersionError,
  SqliteStoreError,
} from '@signalyard/store-sqlite';
import { collect, expectCode, rejectsCode, thrown } from '@signalyard/test-utils';
import Database from 'libsql';
import { afterAll, afterEach, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'signalyard-sqlite-inbox-'));
let files = 0;
const open: { close(): Promise<void> }[] = [];
const fresh = (): string => join(dir, `inbox-${files++}.db`);
const track = <T extends { close(): Promise<void> }>(thing: T): T => {
  open.push(thing);
  return thing;
};
const text = (payload: string) => ({ kind: 'user_message', payload }) as const;

afterEach(async () => {
  for (const thing of open.splice(0)) await thing.close().catch(() => undefined);
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Reads `sql` with a connection of its own (what another tool sees in the file). */
function query(path: string, sql: string): unknown[] {
  const db = new Database(path);
  try {
    return db.prepare(sql).all();
  } finally {
    db.close();
  }
}

describe('SqliteInbox options', () => {
  it('refuses bad options with one ConfigError listing every problem, before touching a file', () => {
    const error = thrown(
      () =>
        new SqliteInbox({
          path: '',
          busyTimeoutMs: -1,
          synchronous: 'sometimes',
          pollMs: 0,
          maxPending: 0,
          dedupeWindowMs: 1.5,
          extra: 1,
        } as never),
    );
    expect(ConfigError.isInstance(error)).toBe(true);
    expect((error as ConfigError).problems.map((p) => p.path).sort()).toEqual(
      ['busyTimeoutMs', 'dedupeWindowMs', 'extra', 'maxPending', 'path', 'pollMs', 'synchronous'].sort(),
    );
    expectCode(
      thrown(() => new SqliteInbox(undefined as never)),
      'CONFIG_INVALID',
    );
  });

  it('a file it cannot open is SQLITE_OPEN_FAILED', () => {
    const error = thrown(() => new SqliteInbox({ path: join(dir, 'no-such-dir', 'x.db') }));
    expect(SqliteStoreError.isInstance(error) && error.code).toBe('SQLITE_OPEN_FAILED');
  });
});

describe('SqliteInbox schema', () => {
  it(`exports its schema number (${SQLITE_INBOX_SCHEMA_VERSION}), kept in inbox_meta apart from the store's user_version`, async () => {
    const path = fresh();
    const inbox = track(new SqliteInbox({ path }));
    await inbox.accept({ sessionKey: 's', signal: text('x'), id: 'a' });
    expect(SQLITE_INBOX_SCHEMA_VERSION).toBe(2);
    expect(query(path, "SELECT value FROM inbox_meta WHERE name = 'schema'")).toMatchObject([{ value: 2 }]);
    expect(query(path, 'PRAGMA user_version')).toMatchObject([{ user_version: 0 }]);
  });

  it('shares a file with SqliteCheckpointStore, whichever opens it first', async () => {
    for (const inboxFirst of [true, false]) {
      const path = fresh();
      const open1 = inboxFirst ? track(new SqliteInbox({ path })) : track(new SqliteCheckpointStore({ path }));
      const open2 = inboxFirst ? track(new SqliteCheckpointStore({ path })) : track(new SqliteInbox({ path }));
      const inbox = (inboxFirst ? open1 : open2) as SqliteInbox;
      const store = (inboxFirst ? open2 : open1) as SqliteCheckpointStore;
      const receipt = await inbox.accept({ sessionKey: 's', signal: text('x'), id: 'a' });
      await store.save('s', { inboxSeq: receipt.seq }, 0);
      expect((await store.load('s'))?.data).toEqual({ inboxSeq: receipt.seq });
      expect((await inbox.pending()).length).toBe(1);
      expect(query(path, 'PRAGMA user_version')).toMatchObject([{ user_version: SQLITE_SCHEMA_VERSION }]);
    }
  });

  it('keeps entries, leases, outcomes and dedupe ids across a close and a reopen', async () => {
    const path = fresh();
    const first = new SqliteInbox({ path });
    const receipt = await first.accept({ sessionKey: 's', signal: text('x'), id: 'same' });
    await first.accept({ sessionKey: 's', signal: text('y'), id: 'other' });
    const [lease] = await first.acquire('w', { leaseMs: 60_000, max: 1 });
    await first.putOutcome(receipt.receiptId, { sessionKey: 's', agentId: 'a', status: 'completed' }, 60_000);
    await first.close();
    const again = track(new SqliteInbox({ path }));
    expect((await again.pending()).map((e) => e.signal.payload)).toEqual(['x', 'y']);
    expect(await again.leases()).toEqual([{ key: 's', workerId: 'w', expiresAt: lease?.expiresAt }]);
    expect(await again.outcome(receipt.receiptId)).toEqual({ sessionKey: 's', agentId: 'a', status: 'completed' });
    expect(await again.accept({ sessionKey: 's', signal: text('x'), id: 'same' })).toEqual(receipt);
  });

  it('gives every entry a distinct UUID v4 receipt id (inbox.md)', async () => {
    const inbox = track(new SqliteInbox({ path: fresh() }));
    const receipts = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        inbox.accept({ sessionKey: `s${String(i % 3)}`, signal: text(String(i)), id: `id-${String(i)}` }),
      ),
    );
    for (const { receiptId } of receipts)
      expect(receiptId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(new Set(receipts.map((r) => r.receiptId)).size).toBe(20);
  });

  it('refuses inbox tables of a newer release, and changes nothing', async () => {
    const path = fresh();
    await new SqliteInbox({ path }).close();
    const db = new Database(path);
    db.exec("UPDATE inbox_meta SET value = 3 WHERE name = 'schema'");
    db.close();
    const error = thrown(() => new SqliteInbox({ path }));
    expect(SqliteSchemaVersionError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ code: 'SQLITE_SCHEMA_UNSUPPORTED', found: 3, supported: 2 });
    expect((error as Error).message).toMatch(/^Inbox in database ".*" has schema version 3, expected 2 or lower/);
    expect(query(path, "SELECT value FROM inbox_meta WHERE name = 'schema'")).toMatchObject([{ value: 3 }]);
  });

  it('migrates a schema 1 file in place: its entries, counts and limits carry on, kept by the triggers from then on', async () => {
    const path = fresh();
    const first = new SqliteInbox({ path, maxPendingPerSession: 3 });
    await first.accept({ sessionKey: 's', signal: text('x'), id: 'a' });
    await first.accept({ sessionKey: 's', signal: text('y'), id: 'b' });
    await first.accept({ sessionKey: 't', signal: text('z'), id: 'c' });
    await first.close();
    // Schema 1 is schema 2 without the triggers (it kept the counts in its statements).
    const db = new Database(path);
    db.exec('DROP TRIGGER inbox_entries_counted');
    db.exec('DROP TRIGGER inbox_entries_uncounted');
    db.exec("UPDATE inbox_meta SET value = 1 WHERE name = 'schema'");
    db.close();
    const counts = (): unknown =>
      query(
        path,
        "SELECT key, last_seq, pending FROM inbox_keys UNION ALL SELECT name, 0, value FROM inbox_meta WHERE name = 'pending' ORDER BY 1",
      );
    expect(counts()).toEqual([
      { key: 'pending', last_seq: 0, pending: 3 },
      { key: 's', last_seq: 2, pending: 2 },
      { key: 't', last_seq: 1, pending: 1 },
    ]);
    const again = track(new SqliteInbox({ path, maxPendingPerSession: 3 }));
    expect(query(path, "SELECT value FROM inbox_meta WHERE name = 'schema'")).toMatchObject([{ value: 2 }]);
    expect(query(path, "SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name")).toEqual([
      { name: 'inbox_entries_counted' },
      { name: 'inbox_entries_uncounted' },
    ]);
    expect((await again.accept({ sessionKey: 's', signal: text('w'), id: 'd' })).seq).toBe('3');
    await expect(again.accept({ sessionKey: 's', signal: text('v'), id: 'e' })).rejects.toMatchObject({
      code: 'INBOX_FULL',
    });
    const [lease] = await again.acquire('w', { leaseMs: 60_000, max: 1 });
    expect(lease?.key).toBe('s'); // waited longest
    const entries = [];
    for await (const entry of again.read(lease as InboxLease)) entries.push(entry);
    expect(entries.map((e) => [e.seq, e.signal.payload])).toEqual([
      ['1', 'x'],
      ['2', 'y'],
      ['3', 'w'],
    ]);
    await again.ack(entries[0] as InboxEntry);
    expect(counts()).toEqual([
      { key: 'pending', last_seq: 0, pending: 3 },
      { key: 's', last_seq: 3, pending: 2 },
      { key: 't', last_seq: 1, pending: 1 },
    ]);
    expect((await again.accept({ sessionKey: 's', signal: text('u'), id: 'f' })).seq).toBe('4');
  });

  it('refuses a foreign inbox_entries table with SQLITE_OPEN_FAILED', () => {
    const path = fresh();
    const db = new Database(path);
    db.exec('CREATE TABLE inbox_entries (id INTEGER PRIMARY KEY, other TEXT)');
    db.close();
    const error = thrown(() => new SqliteInbox({ path }));
    expect(SqliteStoreError.isInstance(error) && error.code).toBe('SQLITE_OPEN_FAILED');
  });
});

describe('SqliteInbox for operators', () => {
  it('lists pending entries per session (ordered by key, then seq) and live leases', async () => {
    const inbox = track(new SqliteInbox({ path: fresh() }));
    await inbox.accept({ sessionKey: 'b', signal: text('b0'), id: '1' });
    await inbox.accept({ sessionKey: 'a', signal: text('a0'), id: '2' });
    await inbox.accept({ sessionKey: 'a', signal: text('a1'), id: '3', agentId: 'desk', control: 'approve' });
    const all = await inbox.pending();
    expect(all.map((e) => [e.sessionKey, e.seq, e.signal.payload])).toEqual([
      ['a', '1', 'a0'],
      ['a', '2', 'a1'],
      ['b', '1', 'b0'],
    ]);
    expect(all[1]).toMatchObject({ agentId: 'desk', control: 'approve', attempts: 0 });
    expect((await inbox.pending({ sessionKey: 'a', limit: 1 })).map((e) => e.seq)).toEqual(['1']);
    expect((await inbox.pending({ limit: 2 })).length).toBe(2);
    const leases = await inbox.acquire('worker-9', { leaseMs: 300, max: 1 });
    expect(await inbox.leases()).toEqual(
      leases.map((l) => ({ key: l.key, workerId: 'worker-9', expiresAt: l.expiresAt })),
    );
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await inbox.leases()).toEqual([]);
    await rejectsCode(inbox.pending({ limit: 0 }), 'INBOX_INPUT_INVALID');
    await rejectsCode(inbox.pending({ sessionKey: 'x\u0000' }), 'INBOX_INPUT_INVALID');
    await inbox.close();
    await rejectsCode(inbox.pending(), 'INBOX_CLOSED');
    await rejectsCode(inbox.leases(), 'INBOX_CLOSED');
  });
});

describe('SqliteInbox.existsIn', () => {
  it('is true for a file with inbox tables (beside a store, or of an older schema), false for one without, changing nothing', async () => {
    const withInbox = fresh();
    track(new SqliteCheckpointStore({ path: withInbox }));
    await track(new SqliteInbox({ path: withInbox })).accept({ sessionKey: 's', signal: text('x'), id: 'a' });
    expect(SqliteInbox.existsIn(withInbox)).toBe(true);

    const storeOnly = fresh();
    await track(new SqliteCheckpointStore({ path: storeOnly })).save('s', {}, 0);
    const tables = () => query(storeOnly, "SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name");
    const before = tables();
    expect(SqliteInbox.existsIn(storeOnly)).toBe(false);
    expect(tables()).toEqual(before);
    expect(before.some((t) => String((t as { name: unknown }).name).startsWith('inbox_'))).toBe(false);

    const older = fresh();
    await new SqliteInbox({ path: older }).close();
    const db = new Database(older);
    db.exec("UPDATE inbox_meta SET value = 1 WHERE name = 'schema'");
    db.close();
    expect(SqliteInbox.existsIn(older)).toBe(true);
    expect(query(older, "SELECT value FROM inbox_meta WHERE name = 'schema'")).toMatchObject([{ value: 1 }]);
  });

  it('a path that does not exist (or :memory:) is false and creates no file', () => {
    const missing = join(dir, 'never-created.db');
    expect(SqliteInbox.existsIn(missing)).toBe(false);
    expect(existsSync(missing)).toBe(false);
    expect(SqliteInbox.existsIn(':memory:')).toBe(false);
  });

  it('a directory or a file that is not SQLite is SQLITE_OPEN_FAILED; a bad path is CONFIG_INVALID', () => {
    const notDb = join(dir, 'not-a-db.db');
    writeFileSync(notDb, 'just text, long enough to be read as a header by SQLite '.repeat(4));
    for (const path of [dir, notDb]) {
      const error = thrown(() => SqliteInbox.existsIn(path));
      expect(SqliteStoreError.isInstance(error) && error.code, path).toBe('SQLITE_OPEN_FAILED');
      expect((error as Error).message).toContain(JSON.stringify(path));
    }
    expectCode(
      thrown(() => SqliteInbox.existsIn('')),
      'CONFIG_INVALID',
    );
    expectCode(
      thrown(() => SqliteInbox.existsIn(42 as never)),
      'CONFIG_INVALID',
    );
  });
});

describe('SqliteInbox failures and housekeeping', () => {
  it('a file locked by another writer past busyTimeoutMs is INBOX_UNAVAILABLE, nothing is written, and it serves again after', async () => {
    const path = fresh();
    const inbox = track(new SqliteInbox({ path, busyTimeoutMs: 0 }));
    const locker = new Database(path);
    locker.exec('BEGIN IMMEDIATE');
    const error = await rejectsCode(inbox.accept({ sessionKey: 's', signal: text('x'), id: 'a' }), 'INBOX_UNAVAILABLE');
    expect(InboxError.isInstance(error)).toBe(true);
    expect(error.message).toMatch(/SQLITE_BUSY/);
    locker.exec('ROLLBACK');
    locker.close();
    expect(await inbox.pending()).toEqual([]);
    const receipt = await inbox.accept({ sessionKey: 's', signal: text('x'), id: 'a' });
    expect(receipt.seq).toBe('1');
  });

  it('drops expired dedupe ids, outcomes with their events, and dead letters from the file', async () => {
    const path = fresh();
    const inbox = track(new SqliteInbox({ path, dedupeWindowMs: 50 }));
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
    await inbox.putOutcome(receipt.receiptId, poisoned, 50);
    await inbox.ack(entry!);
    const count = (table: string): unknown => (query(path, `SELECT count(*) AS n FROM ${table}`)[0] as { n: number }).n;
    expect([count('inbox_dedupe'), count('inbox_outcomes'), count('inbox_events'), count('inbox_dead')]).toEqual([
      1, 1, 1, 1,
    ]);
    await new Promise((resolve) => setTimeout(resolve, 1100)); // past the TTLs and the sweep interval
    await inbox.accept({ sessionKey: 'other', signal: text('y'), id: 'b' }); // a write sweeps
    expect([count('inbox_dedupe'), count('inbox_outcomes'), count('inbox_events'), count('inbox_dead')]).toEqual([
      1, 0, 0, 0,
    ]);
  });

  it('close is idempotent and ends the polling', async () => {
    const inbox = new SqliteInbox({ path: fresh(), pollMs: 5 });
    inbox.onNotify(() => undefined);
    await inbox.close();
    await inbox.close();
    await rejectsCode(inbox.accept({ sessionKey: 's', signal: text('x'), id: 'a' }), 'INBOX_CLOSED');
  });
});
