// The PostgreSQL inbox across OS processes: migrate() from five processes at once, concurrent
// accepts for one key from two processes landing with seq in commit order (a property test that
// a seq taken from a sequence would fail), outcomes and notices crossing processes.
import { fileURLToPath } from 'node:url';
import { POSTGRES_INBOX_SCHEMA_VERSION, PostgresInbox } from '@signalyard/store-postgres';
import { InboxChild, checkSeqInCommitOrder } from '@signalyard/test-utils/inbox-child';
import {
  DATABASE_URL,
  adminPool,
  describePostgres,
  dropTablesAndEnd,
  uniqueTable,
} from '@signalyard/test-utils/postgres';
import { afterAll, afterEach, expect, it } from 'vitest';
import { dropInbox } from './inbox-support.js';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const childScript = fileURLToPath(new URL('./fixtures/inbox-child.ts', import.meta.url));
const children: InboxChild[] = [];
const inboxes: PostgresInbox[] = [];
const tables: string[] = [];

afterEach(async () => {
  for (const child of children.splice(0)) child.kill();
  for (const inbox of inboxes.splice(0)) await inbox.close();
});
afterAll(async () => {
  for (const table of tables) await dropInbox(table);
  await dropTablesAndEnd([]);
});

function newTable(): string {
  const table = uniqueTable('inboxp');
  tables.push(table);
  return table;
}

async function childOn(table: string): Promise<InboxChild> {
  const child = await InboxChild.spawn(childScript, [DATABASE_URL, table], packageDir);
  children.push(child);
  return child;
}

async function inboxOn(table: string): Promise<PostgresInbox> {
  const inbox = new PostgresInbox({ connectionString: DATABASE_URL, table, maxConnections: 4, pollMs: 50 });
  inboxes.push(inbox);
  await inbox.migrate();
  return inbox;
}

const numeric = (a: string, b: string): number => Number(a) - Number(b);

describePostgres('PostgresInbox across OS processes', () => {
  it(
    'migrate() from five processes at once creates the inbox once, and all serve it',
    { timeout: 180_000 },
    async () => {
      const table = newTable();
      const all = await Promise.all(Array.from({ length: 5 }, () => childOn(table)));
      const replies = await Promise.all(
        all.map((child, i) => child.request({ type: 'accept', key: 'k', count: 2, label: `p${i}-` })),
      );
      const seqs = replies.flatMap((r) => (r.type === 'accepted' ? r.seqs : [])).sort(numeric);
      expect(seqs).toEqual(Array.from({ length: 10 }, (_, i) => String(i + 1)));
      const { rows } = await adminPool().query<{ comment: string }>(
        `SELECT obj_description(to_regclass($1), 'pg_class') AS comment`,
        [`"${table}"`],
      );
      expect(rows[0]?.comment).toBe(`@signalyard/store-postgres inbox schema ${POSTGRES_INBOX_SCHEMA_VERSION}`);
    },
  );

  it(
    'concurrent accepts for one key from two processes land with seq in commit order (property)',
    { timeout: 600_000 },
    async () => {
      const table = newTable();
      const [a, b] = await Promise.all([childOn(table), childOn(table)]);
      const observer = await inboxOn(table);
      await checkSeqInCommitOrder(
        a,
        b,
        async (key) => (await observer.pending({ sessionKey: key, limit: 10_000 })).map((e) => e.seq),
        { numRuns: 15, max: 40 },
      );
    },
  );

  it(
    'an outcome put by one process reaches outcome() waiting in another, both ways, and notices cross',
    { timeout: 180_000 },
    async () => {
      const table = newTable();
      const child = await childOn(table);
      const inbox = await inboxOn(table);
      const first = await inbox.accept({ sessionKey: 's', signal: { kind: 'user_message', payload: 'x' }, id: 'one' });
      const second = await inbox.accept({ sessionKey: 's', signal: { kind: 'user_message', payload: 'y' }, id: 'two' });
      const childWaits = child.request({ type: 'outcome', receiptId: first.receiptId, timeoutMs: 30_000 });
      await new Promise((resolve) => setTimeout(resolve, 200));
      await inbox.putOutcome(
        first.receiptId,
        { sessionKey: 's', agentId: 'parent', status: 'completed', output: 'from the parent' },
        60_000,
      );
      expect(await childWaits).toMatchObject({ type: 'outcome', outcome: { output: 'from the parent' } });
      const waiting = inbox.outcome(second.receiptId, { timeoutMs: 30_000 });
      await child.request({ type: 'put', receiptId: second.receiptId, sessionKey: 's', output: 'from the child' });
      expect(await waiting).toMatchObject({ output: 'from the child' });

      await child.request({ type: 'listen' });
      for (let i = 0; i < 200 && !child.notices.some((n) => n.key === 'noticed' && n.what === 'stop'); i++) {
        await inbox.notify('noticed', 'stop'); // until the child's LISTEN connection is up
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      await inbox.accept({ sessionKey: 'after', signal: { kind: 'user_message', payload: 'z' }, id: 'three' });
      for (let i = 0; i < 200 && !child.notices.some((n) => n.key === 'after'); i++) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(child.notices).toContainEqual({ key: 'noticed', what: 'stop' });
      expect(child.notices).toContainEqual({ key: 'after', what: 'entry' });
    },
  );
});
