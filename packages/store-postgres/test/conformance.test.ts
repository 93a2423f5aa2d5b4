import { checkpointStoreConformance } from '@signalyard/core/testing';
import { PostgresCheckpointStore } from '@signalyard/store-postgres';
import { Pool } from 'pg';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { DATABASE_URL, describePostgres, dropTablesAndEnd, uniqueTable } from '@signalyard/test-utils/postgres';

// One table per run (the suite uses unique key prefixes per test, so its tests share it).
const table = uniqueTable('conformance');
let shared: Pool | undefined;

describePostgres('PostgresCheckpointStore against a real server', () => {
  beforeAll(async () => {
    shared = new Pool({ connectionString: DATABASE_URL, max: 8 });
    await new PostgresCheckpointStore({ pool: shared, table }).migrate();
  });
  afterAll(async () => {
    await shared?.end();
    await dropTablesAndEnd([table]);
  });

  // A store on a shared pool: close() leaves the pool open for the next test.
  checkpointStoreConformance(
    'PostgresCheckpointStore (shared pool)',
    (opts) => new PostgresCheckpointStore({ pool: shared as Pool, table, ...opts }),
    { describe, it },
    { clock: true },
  );

  // A store that opens its own pool from the URL (and ends it on close); migrate() runs again each time.
  checkpointStoreConformance(
    'PostgresCheckpointStore (own pool from connectionString)',
    async (opts) => {
      const store = new PostgresCheckpointStore({ connectionString: DATABASE_URL, table, maxConnections: 4, ...opts });
      await store.migrate();
      return store;
    },
    { describe, it },
    { clock: true },
  );
});
