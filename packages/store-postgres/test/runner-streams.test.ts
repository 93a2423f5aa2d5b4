// Streams from any worker, resumable (inbox.md), over PostgreSQL: the shared suite of
// @signalyard/test-utils/runner-streams (a producer runner streams what a worker runner applies,
// a reader resumes from an offset, a dead worker's turn is restarted by the next one), each runner
// with inbox and store handles of its own, so every event crosses the server as a row and a
// NOTIFY; leases expire on the server's clock.
import { scriptedModel } from '@signalyard/core/testing';
import { PostgresCheckpointStore, PostgresInbox } from '@signalyard/store-postgres';
import { DATABASE_URL, describePostgres, dropTablesAndEnd, uniqueTable } from '@signalyard/test-utils/postgres';
import { runnerStreamsSuite } from '@signalyard/test-utils/runner-streams';
import { createRunner } from 'signalyard';
import { dropInbox } from './inbox-support.js';

const pollMs = 50;
const tables: { inbox: string; store: string }[] = [];

runnerStreamsSuite({
  name: 'PostgresInbox',
  describe: describePostgres,
  createRunner,
  scriptedModel,
  pollMs,
  leaseMs: 500,
  afterAll: async () => {
    for (const t of tables) await dropInbox(t.inbox);
    await dropTablesAndEnd(tables.map((t) => t.store));
  },
  // Fresh tables for one test, migrated.
  storage: async () => {
    const t = { inbox: uniqueTable('streams_inbox'), store: uniqueTable('streams_store') };
    tables.push(t);
    const inbox = new PostgresInbox({ connectionString: DATABASE_URL, table: t.inbox, maxConnections: 1 });
    const store = new PostgresCheckpointStore({ connectionString: DATABASE_URL, table: t.store, maxConnections: 1 });
    await inbox.migrate();
    await store.migrate();
    await inbox.close();
    await store.close();
    return {
      inbox: () => new PostgresInbox({ connectionString: DATABASE_URL, table: t.inbox, maxConnections: 3, pollMs }),
      store: () => new PostgresCheckpointStore({ connectionString: DATABASE_URL, table: t.store, maxConnections: 2 }),
    };
  },
});
