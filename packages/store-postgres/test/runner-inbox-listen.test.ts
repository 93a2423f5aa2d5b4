// A worker Runner over a PostgresInbox whose LISTEN connection is killed (pg_terminate_backend):
// it keeps settling (polling covers the lost wake-ups), listens again on a new connection, and
// notifications reach it again. The producer is a second Runner (`worker: false`) on an inbox of
// its own, so every wake-up crosses the server as a NOTIFY. Run twice: with the LISTEN connection
// taken from the inbox's pool, and with one of its own (`listenConnectionString`, what a pool behind
// a transaction-mode PgBouncer needs), which must then be the only one listening.
import { signal } from '@signalyard/core';
import { PostgresCheckpointStore, PostgresInbox } from '@signalyard/store-postgres';
import {
  DATABASE_URL,
  adminPool,
  describePostgres,
  dropTablesAndEnd,
  uniqueTable,
} from '@signalyard/test-utils/postgres';
import pg from 'pg';
import { createRunner, type EngineFn, type SessionCheckpointV1, type TurnContext } from 'signalyard';
import { afterAll, afterEach, expect, it } from 'vitest';
import { dropInbox } from './inbox-support.js';

/** The application_name of the worker inbox's pool, to find its LISTEN connection. */
const WORKER_APP = `sy-listen-${String(process.pid)}`;
/** The application_name of the worker inbox's own LISTEN connection (`listenConnectionString`). */
const OWN_APP = `sy-own-listen-${String(process.pid)}`;
const withApp = (url: string, app: string): string => `${url}${url.includes('?') ? '&' : '?'}application_name=${app}`;
const inboxTable = uniqueTable('listen_inbox');
const storeTable = uniqueTable('listen_store');
const closers: (() => Promise<unknown>)[] = [];

afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close().catch(() => undefined);
});

const user = (text: string) => signal('user_message', { channel: 'cli', text });
const textOf = (ctx: TurnContext): string => String((ctx.signal.payload as { text?: unknown }).text);
const echo: EngineFn = (ctx) => Promise.resolve({ messages: [{ role: 'assistant', content: `re: ${textOf(ctx)}` }] });
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The pids of the LISTEN connections on `channel` of connections named `app`. */
async function listenerPids(channel: string, app: string): Promise<number[]> {
  const { rows } = await adminPool().query<{ pid: number }>(
    'SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND query = $2',
    [app, `LISTEN "${channel}"`],
  );
  return rows.map((r) => r.pid);
}

/** Polls `probe` until it returns something defined (a hang guard: fails after `tries` × 50 ms, never times anything). */
async function until<T>(what: string, probe: () => Promise<T | undefined>, tries = 600): Promise<T> {
  for (let i = 0; i < tries; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await sleep(50);
  }
  throw new Error(`gave up waiting for ${what}`);
}

function setUp(ownListen: boolean): {
  worker: ReturnType<typeof createRunner>;
  producer: ReturnType<typeof createRunner>;
  inbox: PostgresInbox;
  producerInbox: PostgresInbox;
  store: PostgresCheckpointStore;
} {
  const pool = new pg.Pool({ connectionString: DATABASE_URL, max: 4, application_name: WORKER_APP });
  pool.on('error', () => undefined);
  const inbox = new PostgresInbox({
    pool,
    table: inboxTable,
    pollMs: 100,
    ...(ownListen && { listenConnectionString: withApp(DATABASE_URL, OWN_APP) }),
  });
  const store = new PostgresCheckpointStore({ connectionString: DATABASE_URL, table: storeTable, maxConnections: 2 });
  const producerInbox = new PostgresInbox({ connectionString: DATABASE_URL, table: inboxTable, maxConnections: 2 });
  const producerStore = new PostgresCheckpointStore({
    connectionString: DATABASE_URL,
    table: storeTable,
    maxConnections: 2,
  });
  const agents = [{ id: 'main', engine: echo }];
  const worker = createRunner({ agents, store, inbox, worker: { leaseMs: 2000, pollMs: 100 }, closeTimeoutMs: 50 });
  const producer = createRunner({ agents, store: producerStore, inbox: producerInbox, worker: false });
  closers.push(
    () => pool.end(),
    () => inbox.close(),
    () => store.close(),
    () => producerInbox.close(),
    () => producerStore.close(),
    () => worker.close(),
    () => producer.close(),
  );
  return { worker, producer, inbox, producerInbox, store };
}

describePostgres('a worker Runner whose PostgresInbox LISTEN connection is killed', () => {
  // Inside the suite: skipped with it when there is no server.
  afterAll(async () => {
    await dropInbox(inboxTable);
    await dropTablesAndEnd([storeTable]);
  });

  it.each([
    ['one of the pool', false, WORKER_APP],
    ['its own (listenConnectionString)', true, OWN_APP],
  ])(
    'LISTEN connection %s: keeps settling (polling), listens again on a new connection, and is woken by notifications again',
    { timeout: 120_000 },
    async (_, ownListen, app) => {
      const KEY = `agent:main:${ownListen ? 'own' : 'pooled'}`;
      const setup = setUp(ownListen);
      const { worker, producer, inbox, producerInbox, store } = setup;
      await inbox.migrate();
      await store.migrate();
      await worker.start();
      await producer.start();
      const settle = async (text: string) => {
        const receipt = await producer.accept(KEY, user(text));
        return producer.outcome(receipt.receiptId, { timeoutMs: 60_000 });
      };
      expect((await settle('one')).status).toBe('completed');
      await inbox.listening();
      const killed = await until('the LISTEN connection', async () => (await listenerPids(inbox.channel, app))[0]);
      // With a LISTEN connection of its own, none of the pool's listens.
      if (ownListen) expect(await listenerPids(inbox.channel, WORKER_APP)).toEqual([]);
      const heard: string[] = [];
      const stopHearing = inbox.onNotify((key, what) => heard.push(`${key}/${what}`));
      closers.push(() => Promise.resolve(stopHearing()));
      const { rows } = await adminPool().query<{ done: boolean }>('SELECT pg_terminate_backend($1) AS done', [killed]);
      expect(rows[0]?.done).toBe(true);

      // Accepted at once after the kill, while the listener is down or reconnecting: settled anyway.
      expect((await settle('two')).status).toBe('completed');

      // It listens again, on another connection, and notifications reach it again.
      const again = await until('a new LISTEN connection', async () =>
        (await listenerPids(inbox.channel, app)).find((pid) => pid !== killed),
      );
      expect(again).not.toBe(killed);
      expect(await listenerPids(inbox.channel, app)).not.toContain(killed);
      if (ownListen) expect(await listenerPids(inbox.channel, WORKER_APP)).toEqual([]);
      // A stop notice for a key with no entries can come only from a NOTIFY (a reconnect's catch-up
      // wakes only keys with entries); sent until the new LISTEN has taken effect.
      await until('a notification on the new connection', async () => {
        if (heard.includes('probe/stop')) return true;
        await producerInbox.notify('probe', 'stop');
        return undefined;
      });
      const three = await producer.accept(KEY, user('three'));
      expect((await producer.outcome(three.receiptId, { timeoutMs: 60_000 })).status).toBe('completed');

      const data = (await store.load(KEY))?.data as SessionCheckpointV1 | undefined;
      expect((data?.history ?? []).map((m) => `${m.role}:${m.content}`)).toEqual([
        'user:one',
        'assistant:re: one',
        'user:two',
        'assistant:re: two',
        'user:three',
        'assistant:re: three',
      ]);
      await worker.close();
    },
  );
});
