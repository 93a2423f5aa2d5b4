// The chaos test of inbox.md "Tests" on PostgreSQL: 3 worker processes and a producer process
// share one database (PostgresInbox + PostgresCheckpointStore, tables of this run only, dropped
// after); a random worker is killed with SIGKILL every 1.5 s for 20 s and restarted, then the
// workers drain the inbox, and the harness checks histories, effects (in PostgreSQL too) and
// outcomes (see @signalyard/test-utils/chaos). Smaller runs: SIGNALYARD_CHAOS_SIGNALS=500
// SIGNALYARD_CHAOS_CHAOS_MS=6000 … (chaosSizesFromEnv).
import { PostgresCheckpointStore, PostgresInbox } from '@signalyard/store-postgres';
import { chaosSizesFromEnv } from '@signalyard/test-utils/chaos';
import { runInboxChaos } from '@signalyard/test-utils/chaos-inbox';
import {
  DATABASE_URL,
  adminPool,
  describePostgres,
  dropTablesAndEnd,
  uniqueTable,
} from '@signalyard/test-utils/postgres';
import { createRunner } from 'signalyard';
import { afterAll, describe, it } from 'vitest';
import { createEffects, dropEffects, openEffects } from '@signalyard/test-utils/chaos-effects';
import { dropInbox } from './inbox-support.js';

const inboxTable = uniqueTable('chaos_inbox');
const storeTable = uniqueTable('chaos_store');
const effectsPrefix = uniqueTable('chaos_fx');

// A minute of four processes at full speed: run by `pnpm test:chaos` (SIGNALYARD_CHAOS=1), not by
// every `pnpm test`.
const describeChaos = process.env.SIGNALYARD_CHAOS === '1' ? describePostgres : describe.skip;

describeChaos('PostgresInbox under chaos (separate OS processes, kill -9)', () => {
  // Inside the suite: skipped with it when there is no server.
  afterAll(async () => {
    await dropInbox(inboxTable);
    await dropEffects(adminPool(), effectsPrefix);
    await dropTablesAndEnd([storeTable]);
  });

  it('settles every accepted signal exactly once, in order, whatever workers die', { timeout: 900_000 }, async () => {
    const inbox = new PostgresInbox({ connectionString: DATABASE_URL, table: inboxTable, maxConnections: 2 });
    const store = new PostgresCheckpointStore({ connectionString: DATABASE_URL, table: storeTable, maxConnections: 2 });
    // Every table exists before any child starts: the children never migrate.
    await inbox.migrate();
    await store.migrate();
    await createEffects(adminPool(), effectsPrefix);
    await runInboxChaos({
      ...chaosSizesFromEnv(),
      testUrl: import.meta.url,
      createRunner,
      inbox,
      store,
      effects: openEffects(DATABASE_URL, effectsPrefix),
      args: [DATABASE_URL, inboxTable, storeTable, effectsPrefix],
    });
  });
});
