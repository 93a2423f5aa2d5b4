import { inboxConformance } from '@signalyard/core/testing';
import { PostgresInbox } from '@signalyard/store-postgres';
import { DATABASE_URL, describePostgres, dropTablesAndEnd, uniqueTable } from '@signalyard/test-utils/postgres';
import { Pool } from 'pg';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { dropInbox } from './inbox-support.js';

let shared: Pool | undefined;

describePostgres('PostgresInbox against a real server', () => {
  beforeAll(() => {
    shared = new Pool({ connectionString: DATABASE_URL, max: 10 });
  });
  afterAll(async () => {
    await shared?.end();
    await dropTablesAndEnd([]);
  });

  // Fresh tables per case; a second inbox over them plays a second process (its own LISTEN connection).
  inboxConformance(
    'PostgresInbox (shared pool)',
    async (limits) => {
      const table = uniqueTable('inbox');
      const inbox = new PostgresInbox({ pool: shared as Pool, table, pollMs: 100, ...limits });
      await inbox.migrate();
      return {
        inbox,
        another: () => new PostgresInbox({ pool: shared as Pool, table, pollMs: 100, ...limits }),
        cleanup: () => dropInbox(table),
      };
    },
    { describe, it },
  );

  inboxConformance(
    'PostgresInbox (own pool from connectionString, unprepared statements)',
    async (limits) => {
      const table = uniqueTable('inbox');
      const open = (): PostgresInbox =>
        new PostgresInbox({
          connectionString: DATABASE_URL,
          maxConnections: 4,
          table,
          pollMs: 100,
          preparedStatements: false,
          ...limits,
        });
      const inbox = open();
      await inbox.migrate();
      return { inbox, another: open, cleanup: () => dropInbox(table) };
    },
    { describe, it },
  );
});
