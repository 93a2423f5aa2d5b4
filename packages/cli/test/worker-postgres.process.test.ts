// `signalyard worker --config` on PostgreSQL, as child processes through the built bin: SIGTERM
// mid-turn drains (the turn in flight settles, the leases are released, exit 0) and another worker
// takes the session over; a second signal abandons the turn (exit 1) and another worker settles it
// after the lease expires. The turn is held mid-way by a gate the test controls (the config's
// engine waits for SIGUSR2), so nothing here depends on timing.
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import type { InboxReceipt } from '@signalyard/core';
import { PostgresCheckpointStore, PostgresInbox } from '@signalyard/store-postgres';
import {
  DATABASE_URL,
  adminPool,
  describePostgres,
  dropTablesAndEnd,
  uniqueTable,
} from '@signalyard/test-utils/postgres';
import { afterAll, afterEach, expect, it } from 'vitest';
import { FIXTURES, ensureBuiltCli, lines } from './support.js';

const CONFIG = join(FIXTURES, 'worker', 'pg-gate.config.js');
const schema = uniqueTable('cli_worker');
const inboxTable = `${schema}.inbox`;
const storeTable = `${schema}.sessions`;
const say = (text: string) => ({ kind: 'user_message' as const, payload: { text } });

/** A worker child process, its output so far, and waits on it. */
interface Worker {
  readonly child: ChildProcessWithoutNullStreams;
  readonly exited: Promise<number | null>;
  out(): string;
  err(): string;
  /** Resolves once `text` appeared on the stream. */
  seen(stream: 'stdout' | 'stderr', text: string): Promise<void>;
}

const workers: Worker[] = [];
afterEach(() => {
  for (const w of workers.splice(0)) if (w.child.exitCode === null) w.child.kill('SIGKILL');
});

function startWorker(id: string, env: Record<string, string>): Worker {
  const child = spawn(process.execPath, [ensureBuiltCli(), 'worker', '--config', CONFIG, '--id', id], {
    cwd: FIXTURES,
    env: {
      ...process.env,
      WORKER_PG_URL: DATABASE_URL,
      WORKER_STORE_TABLE: storeTable,
      WORKER_INBOX_TABLE: inboxTable,
      ...env,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  const worker: Worker = {
    child,
    exited,
    out: () => stdout,
    err: () => stderr,
    seen: (stream, text) =>
      new Promise<void>((resolve, reject) => {
        const check = (): void => {
          if ((stream === 'stdout' ? stdout : stderr).includes(text)) resolve();
        };
        child[stream].on('data', check);
        void exited.then((code) => {
          check();
          reject(new Error(`worker ${id} exited (${String(code)}) before "${text}":\n${stdout}\n${stderr}`));
        });
        check();
      }),
  };
  workers.push(worker);
  return worker;
}

let inbox: PostgresInbox;
let store: PostgresCheckpointStore;

async function acceptAll(key: string, texts: readonly string[]): Promise<InboxReceipt[]> {
  const receipts: InboxReceipt[] = [];
  for (const text of texts)
    receipts.push(await inbox.accept({ sessionKey: key, signal: say(text), id: `${key}/${text}` }));
  return receipts;
}

async function statuses(receipts: readonly InboxReceipt[]): Promise<string[]> {
  const all = await Promise.all(receipts.map((r) => inbox.outcome(r.receiptId, { timeoutMs: 120_000 })));
  return all.map((o) => o.status);
}

async function history(key: string): Promise<string[]> {
  const saved = await store.load(key);
  const data = saved?.data as { history?: { role: string; content: string }[] } | undefined;
  return (data?.history ?? []).map((m) => `${m.role}: ${m.content}`);
}

const pendingTexts = async (key: string): Promise<string[]> =>
  (await inbox.pending({ sessionKey: key })).map((e) => (e.signal.payload as { text: string }).text);

describePostgres('signalyard worker on PostgreSQL (child processes)', () => {
  it('sets up the tables', async () => {
    await adminPool().query(`CREATE SCHEMA "${schema}"`);
    inbox = new PostgresInbox({ connectionString: DATABASE_URL, table: inboxTable, pollMs: 50, maxConnections: 4 });
    store = new PostgresCheckpointStore({ connectionString: DATABASE_URL, table: storeTable, maxConnections: 2 });
    await inbox.migrate();
    await store.migrate();
  });

  it(
    'SIGTERM mid-turn: the turn in flight settles, the leases are released, exit 0; another worker takes the session over',
    { timeout: 300_000 },
    async () => {
      const key = 'agent:echo:drain';
      const receipts = await acceptAll(key, ['hold', 'after-1', 'after-2']);
      // leaseMs 10 minutes: a takeover within this test comes from the release, not from an expiry
      const a = startWorker('w-a', { WORKER_GATE: '1', WORKER_LEASE_MS: '600000' });
      await a.seen('stderr', 'turn started hold');
      expect(await inbox.leases()).toEqual([{ key, workerId: 'w-a', expiresAt: expect.any(String) }]);
      a.child.kill('SIGTERM');
      await a.seen('stdout', 'worker w-a: draining (SIGTERM): finishing the turns in flight');
      // Draining: the turn is still held by the gate, and the session still leased by w-a.
      expect(await pendingTexts(key)).toEqual(['hold', 'after-1', 'after-2']);
      expect((await inbox.leases()).map((l) => l.workerId)).toEqual(['w-a']);
      a.child.kill('SIGUSR2'); // the gate opens: the turn ends
      expect(await a.exited, `${a.out()}\n${a.err()}`).toBe(0);
      expect(lines(a.out()).at(-1)).toBe('worker w-a: stopped: settled 1, failed 0, dead letters 0, leases held 0');
      // The held turn was settled by w-a (saved, its outcome stored, acknowledged); the entries
      // queued behind it were left in the inbox, and the lease released.
      expect(await statuses(receipts.slice(0, 1))).toEqual(['completed']);
      expect(await history(key)).toEqual(['user: hold', 'assistant: echo: hold']);
      expect(await pendingTexts(key)).toEqual(['after-1', 'after-2']);
      expect(await inbox.leases()).toEqual([]);

      const b = startWorker('w-b', { WORKER_LEASE_MS: '600000' });
      expect(await statuses(receipts)).toEqual(['completed', 'completed', 'completed']);
      b.child.kill('SIGTERM');
      expect(await b.exited, `${b.out()}\n${b.err()}`).toBe(0);
      expect(lines(b.out()).at(-1)).toBe('worker w-b: stopped: settled 2, failed 0, dead letters 0, leases held 0');
      expect(await history(key)).toEqual([
        'user: hold',
        'assistant: echo: hold',
        'user: after-1',
        'assistant: echo: after-1',
        'user: after-2',
        'assistant: echo: after-2',
      ]);
      expect(await inbox.pending({ sessionKey: key })).toEqual([]);
    },
  );

  it(
    'a second signal while draining aborts the turn (exit 1, nothing saved); another worker settles it once the lease expires',
    { timeout: 300_000 },
    async () => {
      const key = 'agent:echo:abort';
      const receipts = await acceptAll(key, ['hold-twice', 'next']);
      const a = startWorker('w-c', { WORKER_GATE: '1', WORKER_LEASE_MS: '1500' });
      await a.seen('stderr', 'turn started hold-twice');
      a.child.kill('SIGTERM');
      await a.seen('stdout', 'worker w-c: draining (SIGTERM)');
      a.child.kill('SIGTERM');
      expect(await a.exited, `${a.out()}\n${a.err()}`).toBe(1);
      expect(a.err()).toContain(
        'signalyard: worker: SIGTERM while draining: exiting now, the turns in flight abandoned',
      );
      expect(a.out()).not.toContain('stopped');
      expect(await history(key)).toEqual([]); // nothing of the abandoned turn was saved
      expect(await pendingTexts(key)).toEqual(['hold-twice', 'next']);

      const b = startWorker('w-d', { WORKER_LEASE_MS: '1500' });
      expect(await statuses(receipts)).toEqual(['completed', 'completed']);
      b.child.kill('SIGTERM');
      expect(await b.exited, `${b.out()}\n${b.err()}`).toBe(0);
      expect(await history(key)).toEqual([
        'user: hold-twice',
        'assistant: echo: hold-twice',
        'user: next',
        'assistant: echo: next',
      ]);
      expect(await inbox.pending({ sessionKey: key })).toEqual([]);
    },
  );

  afterAll(async () => {
    await inbox?.close();
    await store?.close();
    await adminPool().query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    await dropTablesAndEnd([]);
  });
});
