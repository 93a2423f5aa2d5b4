// whenBusy policies and stops across two worker PROCESSES on JetStream (inbox.md guarantee 10):
// the test process is the producer (a runner with `worker: false`) over a JetStreamInbox on a
// nats-server of the test's own and a PostgresCheckpointStore; two worker processes
// (fixtures/busy-worker.ts) share both. `collect` batches the session's pending entries on the
// lease holder, `interrupt` reaches it by notification, a `stop` settles what waits behind it
// `stopped` — whichever worker holds the session, and the other never runs a turn of it
// (the tests: @signalyard/test-utils/busy-workers).
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import { signal } from '@signalyard/core';
import { JetStreamInbox } from '@signalyard/nats';
import { PostgresCheckpointStore } from '@signalyard/store-postgres';
import { busyWorkersSuite } from '@signalyard/test-utils/busy-workers';
import { describeNats, startNatsServer, type NatsServer } from '@signalyard/test-utils/nats';
import { DATABASE_URL, dropTablesAndEnd, uniqueTable } from '@signalyard/test-utils/postgres';
import { createRunner } from 'signalyard';

const LEASE_MS = 5000;
const tables: string[] = [];
let server: NatsServer;

busyWorkersSuite({
  title: 'whenBusy and stops across two worker processes on JetStream (PostgreSQL checkpoint store)',
  describe: describeNats,
  signal,
  script: fileURLToPath(new URL('./fixtures/busy-worker.ts', import.meta.url)),
  cwd: fileURLToPath(new URL('..', import.meta.url)),
  /** Generous: a cold start compiles the TypeScript sources of every package with tsx. */
  waitMs: 90_000,
  timeoutMs: 300_000,
  beforeAll: async () => {
    server = await startNatsServer();
  },
  afterAll: async () => {
    await server.stop();
    await dropTablesAndEnd(tables);
  },
  // A fresh stream and table, and the producer over them.
  setup: async () => {
    const stream = `BUSY_${randomBytes(4).toString('hex')}`;
    const table = uniqueTable('js_busy');
    tables.push(table);
    const inbox = new JetStreamInbox({ servers: server.url, stream, leaseMs: LEASE_MS, pollMs: 50 });
    const store = new PostgresCheckpointStore({ connectionString: DATABASE_URL, table, maxConnections: 2 });
    await store.migrate(); // the inbox needs no setup: its first use creates the stream
    const producer = createRunner({
      store,
      inbox,
      worker: false,
      agents: ['queue', 'collect', 'interrupt'].map((id) => ({ id, engine: () => Promise.resolve({}) })),
    });
    return {
      producer,
      args: [server.url, stream, DATABASE_URL, table],
      close: async () => {
        await producer.close();
        await inbox.close();
        await store.close();
      },
    };
  },
});
