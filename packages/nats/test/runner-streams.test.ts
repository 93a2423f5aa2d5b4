// Streams from any worker, resumable (inbox.md), on JetStream: the shared suite of
// @signalyard/test-utils/runner-streams (a producer runner streams what a worker runner applies,
// a reader resumes from an offset, a dead worker's turn is restarted by the next one), each runner
// with a connection of its own to a nats-server of the test's own, and a PostgresCheckpointStore;
// leases expire on the server.
import { randomBytes } from 'node:crypto';
import { scriptedModel } from '@signalyard/core/testing';
import { JetStreamInbox } from '@signalyard/nats';
import { PostgresCheckpointStore } from '@signalyard/store-postgres';
import { describeNats, startNatsServer, type NatsServer } from '@signalyard/test-utils/nats';
import { DATABASE_URL, dropTablesAndEnd, uniqueTable } from '@signalyard/test-utils/postgres';
import { runnerStreamsSuite } from '@signalyard/test-utils/runner-streams';
import { createRunner } from 'signalyard';

const tables: string[] = [];
let server: NatsServer | undefined;

runnerStreamsSuite({
  name: 'JetStreamInbox',
  describe: describeNats,
  createRunner,
  scriptedModel,
  pollMs: 50,
  leaseMs: 1000,
  beforeAll: async () => {
    server = await startNatsServer();
  },
  afterAll: async () => {
    await server?.stop();
    await dropTablesAndEnd(tables);
  },
  // A stream of the test's own (created by the runners' first use of it), and a store table, migrated.
  storage: async () => {
    const table = uniqueTable('nats_streams');
    tables.push(table);
    const store = new PostgresCheckpointStore({ connectionString: DATABASE_URL, table, maxConnections: 1 });
    await store.migrate();
    await store.close();
    const stream = `STREAMS_${randomBytes(6).toString('hex')}`;
    const inbox = (): JetStreamInbox =>
      new JetStreamInbox({ servers: (server as NatsServer).url, stream, partitions: 4, pollMs: 50 });
    return {
      inbox,
      store: () => new PostgresCheckpointStore({ connectionString: DATABASE_URL, table, maxConnections: 2 }),
    };
  },
});
