// SqliteInbox.read keeps what a short page found of a leased key, kept up to date by the
// connection's own commits, and serves later pages from it while no other connection committed
// (sqlite-inbox-read.ts): these are the writes it must follow — accepts, counted deliveries and
// acknowledgements through this connection — and those that must make it look again — an accept
// through another connection (SQLite's data_version), the lease expiring by the clock, the lease
// released.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteInbox } from '@signalyard/store-sqlite';
import { collect, rejectsCode } from '@signalyard/test-utils';
import Database from 'libsql';
import { afterAll, afterEach, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'signalyard-sqlite-inbox-read-'));
let files = 0;
const open: SqliteInbox[] = [];
const inboxOn = (path: string, busyTimeoutMs = 5000): SqliteInbox => {
  const inbox = new SqliteInbox({ path, busyTimeoutMs });
  open.push(inbox);
  return inbox;
};
const text = (payload: string) => ({ kind: 'user_message', payload }) as const;
const seqs = async (inbox: SqliteInbox, lease: Parameters<SqliteInbox['read']>[0], after?: string) =>
  (await collect(inbox.read(lease, after))).map((e) => e.seq);

afterEach(async () => {
  for (const inbox of open.splice(0)) await inbox.close().catch(() => undefined);
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('SqliteInbox read after a short page', () => {
  it('finds an entry accepted through the same connection after a read that found none', async () => {
    const inbox = inboxOn(join(dir, `read-${files++}.db`));
    await inbox.accept({ sessionKey: 's', signal: text('a'), id: '1' });
    const [lease] = await inbox.acquire('w', { leaseMs: 60_000, max: 1 });
    if (lease === undefined) throw new Error('no lease');
    expect(await seqs(inbox, lease)).toEqual(['1']);
    expect(await seqs(inbox, lease, '1')).toEqual([]); // known empty now
    await inbox.accept({ sessionKey: 's', signal: text('b'), id: '2' });
    expect(await seqs(inbox, lease, '1')).toEqual(['2']);
  });

  it('follows the accepts, counted deliveries and acknowledgements of its own connection, as the file holds them', async () => {
    const inbox = inboxOn(join(dir, `read-${files++}.db`));
    await inbox.accept({ sessionKey: 's', signal: text('a'), id: '1' });
    const [lease] = await inbox.acquire('w', { leaseMs: 60_000, max: 1 });
    if (lease === undefined) throw new Error('no lease');
    expect(await seqs(inbox, lease)).toEqual(['1']);
    await inbox.accept({ sessionKey: 's', signal: text('b'), id: '2' });
    await inbox.accept({ sessionKey: 's', signal: text('c'), id: '3', agentId: 'agent-c' });
    const all = await collect(inbox.read(lease));
    expect(all).toEqual(await inbox.pending({ sessionKey: 's' }));
    await inbox.beginDelivery(all[0] as (typeof all)[number]);
    await inbox.ack(all[1] as (typeof all)[number]);
    const after = await collect(inbox.read(lease));
    expect(after.map((e) => [e.seq, e.attempts, e.signal.payload])).toEqual([
      ['1', 1, 'a'],
      ['3', 0, 'c'],
    ]);
    expect(after).toEqual(await inbox.pending({ sessionKey: 's' }));
    await inbox.settle(
      after[0] as (typeof after)[number],
      { sessionKey: 's', agentId: 'a', status: 'completed' },
      60_000,
    );
    expect(await collect(inbox.read(lease))).toEqual(await inbox.pending({ sessionKey: 's' }));
    expect(await seqs(inbox, lease)).toEqual(['3']);
  });

  it('finds an entry another connection committed (data_version), in this process and by plain SQL', async () => {
    const path = join(dir, `read-${files++}.db`);
    const worker = inboxOn(path);
    const other = inboxOn(path, 4000); // other settings: a connection of its own
    await worker.accept({ sessionKey: 's', signal: text('a'), id: '1' });
    const [lease] = await worker.acquire('w', { leaseMs: 60_000, max: 1 });
    if (lease === undefined) throw new Error('no lease');
    expect(await seqs(worker, lease)).toEqual(['1']);
    await other.accept({ sessionKey: 's', signal: text('b'), id: '2' });
    expect(await seqs(worker, lease, '1')).toEqual(['2']);
    // A write by another tool that adds nothing for the key still makes it look again, and find nothing.
    const db = new Database(path);
    db.exec("UPDATE inbox_meta SET value = value WHERE name = 'pending'");
    db.close();
    expect(await seqs(worker, lease, '2')).toEqual([]);
  });

  it('a lease expired by the clock, or released, is LEASE_LOST at the next page, not an empty one', async () => {
    const inbox = inboxOn(join(dir, `read-${files++}.db`));
    await inbox.accept({ sessionKey: 's', signal: text('a'), id: '1' });
    await inbox.accept({ sessionKey: 't', signal: text('a'), id: '2' });
    const leases = await inbox.acquire('w', { leaseMs: 200, max: 2 });
    const [short, other] = leases;
    if (short === undefined || other === undefined) throw new Error('no leases');
    expect(await seqs(inbox, short)).toEqual(['1']);
    expect(await seqs(inbox, other)).toEqual(['1']);
    await inbox.release(other);
    await rejectsCode(collect(inbox.read(other, '1')), 'LEASE_LOST');
    await new Promise((resolve) => setTimeout(resolve, 250));
    await rejectsCode(collect(inbox.read(short, '1')), 'LEASE_LOST');
  });
});
