// The SQLite inbox across OS processes sharing one file: opening (and migrating) a fresh file at
// once, concurrent accepts for one key landing with seq in commit order, outcomes and notices
// crossing processes by polling, and an accepted entry surviving kill -9.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SQLITE_INBOX_SCHEMA_VERSION, SqliteInbox } from '@signalyard/store-sqlite';
import { InboxChild, checkSeqInCommitOrder } from '@signalyard/test-utils/inbox-child';
import Database from 'libsql';
import { afterAll, afterEach, describe, expect, it } from 'vitest';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const childScript = fileURLToPath(new URL('./fixtures/inbox-child.ts', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'signalyard-sqlite-inbox-processes-'));
const children: InboxChild[] = [];
const inboxes: SqliteInbox[] = [];
let files = 0;

afterEach(async () => {
  for (const child of children.splice(0)) child.kill();
  for (const inbox of inboxes.splice(0)) await inbox.close();
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

async function childOn(path: string): Promise<InboxChild> {
  const child = await InboxChild.spawn(childScript, [path, '20'], packageDir);
  children.push(child);
  return child;
}

function inboxOn(path: string): SqliteInbox {
  const inbox = new SqliteInbox({ path, pollMs: 20 });
  inboxes.push(inbox);
  return inbox;
}

async function readSeqs(inbox: SqliteInbox, key: string): Promise<string[]> {
  return (await inbox.pending({ sessionKey: key, limit: 10_000 })).map((e) => e.seq);
}

const numeric = (a: string, b: string): number => Number(a) - Number(b);

describe('SqliteInbox across OS processes', () => {
  it(
    'five processes opening a fresh file at once create the inbox tables once, and all serve it',
    { timeout: 120_000 },
    async () => {
      const path = join(dir, `fresh-${files++}.db`);
      const all = await Promise.all(Array.from({ length: 5 }, () => childOn(path)));
      const replies = await Promise.all(
        all.map((child, i) => child.request({ type: 'accept', key: 'k', count: 2, label: `p${i}-` })),
      );
      const seqs = replies.flatMap((r) => (r.type === 'accepted' ? r.seqs : [])).sort(numeric);
      expect(seqs).toEqual(Array.from({ length: 10 }, (_, i) => String(i + 1)));
      const db = new Database(path);
      try {
        expect(db.prepare("SELECT value FROM inbox_meta WHERE name = 'schema'").get()).toMatchObject({
          value: SQLITE_INBOX_SCHEMA_VERSION,
        });
        expect(
          db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table' AND name LIKE 'inbox_%'").get(),
        ).toMatchObject({ n: 8 });
      } finally {
        db.close();
      }
    },
  );

  it(
    'concurrent accepts for one key from two processes land with seq in commit order (property)',
    { timeout: 300_000 },
    async () => {
      const path = join(dir, `order-${files++}.db`);
      const [a, b] = await Promise.all([childOn(path), childOn(path)]);
      const observer = inboxOn(path);
      await checkSeqInCommitOrder(a, b, (key) => readSeqs(observer, key), { numRuns: 12, max: 30 });
    },
  );

  it(
    'an outcome put by one process reaches outcome() waiting in another, both ways',
    { timeout: 120_000 },
    async () => {
      const path = join(dir, `outcome-${files++}.db`);
      const child = await childOn(path);
      const inbox = inboxOn(path);
      const first = await inbox.accept({ sessionKey: 's', signal: { kind: 'user_message', payload: 'x' }, id: 'one' });
      const second = await inbox.accept({ sessionKey: 's', signal: { kind: 'user_message', payload: 'y' }, id: 'two' });
      // the child waits; this process puts
      const childWaits = child.request({ type: 'outcome', receiptId: first.receiptId, timeoutMs: 30_000 });
      await new Promise((resolve) => setTimeout(resolve, 100));
      await inbox.putOutcome(
        first.receiptId,
        { sessionKey: 's', agentId: 'parent', status: 'completed', output: 'from the parent' },
        60_000,
      );
      expect(await childWaits).toMatchObject({ type: 'outcome', outcome: { output: 'from the parent' } });
      // this process waits; the child puts
      const waiting = inbox.outcome(second.receiptId, { timeoutMs: 30_000 });
      await child.request({ type: 'put', receiptId: second.receiptId, sessionKey: 's', output: 'from the child' });
      expect(await waiting).toMatchObject({ output: 'from the child' });
    },
  );

  it("notices cross processes: accept's entry and notify's stop", { timeout: 120_000 }, async () => {
    const path = join(dir, `notices-${files++}.db`);
    const child = await childOn(path);
    await child.request({ type: 'listen' });
    const inbox = inboxOn(path);
    await inbox.accept({ sessionKey: 'noticed', signal: { kind: 'user_message', payload: 'x' }, id: 'n1' });
    await inbox.notify('noticed', 'stop');
    const heard: string[] = [];
    inbox.onNotify((key, what) => heard.push(`${key}/${what}`));
    await child.request({ type: 'notify', key: 'from-child', what: 'stop' });
    for (let i = 0; i < 500 && (child.notices.length < 3 || heard.length < 1); i++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // its own notice at once, this process's at its next poll (notices carry no order between them)
    expect(
      child.notices
        .filter((n) => n.key === 'noticed')
        .map((n) => n.what)
        .sort(),
    ).toEqual(['entry', 'stop']);
    expect(child.notices.filter((n) => n.key === 'from-child')).toEqual([{ key: 'from-child', what: 'stop' }]);
    expect(heard).toEqual(['from-child/stop']);
  });

  it(
    'an entry whose accept resolved survives its process being killed with SIGKILL',
    { timeout: 120_000 },
    async () => {
      const path = join(dir, `kill-${files++}.db`);
      const child = await childOn(path);
      const reply = await child.request({ type: 'accept', key: 'durable', count: 3, label: 'd' });
      child.kill();
      await new Promise((resolve) => child.process.once('exit', resolve));
      const inbox = inboxOn(path);
      const entries = await inbox.pending({ sessionKey: 'durable' });
      expect(entries.map((e) => e.signal.payload)).toEqual(['d0', 'd1', 'd2']);
      expect(reply.type === 'accepted' && reply.receiptIds).toEqual(entries.map((e) => e.receiptId));
    },
  );
});
