// The order in which PostgresInbox statements lock rows: accept locks the session's `_keys` row,
// then its `_counters` shard; ack must take them in the same order, or an ack and an accept of a
// key whose counter shard the other holds deadlock (seen by the chaos run as accepts failing
// with 40P01). Checked without timing: the ack is held on the key's row by another transaction,
// and the counter shard must still be free.
import { PostgresInbox } from '@signalyard/store-postgres';
import { collect } from '@signalyard/test-utils';
import {
  DATABASE_URL,
  adminPool,
  describePostgres,
  dropTablesAndEnd,
  uniqueTable,
} from '@signalyard/test-utils/postgres';
import { afterAll, expect, it } from 'vitest';
import { inboxNames } from '../src/postgres-inbox-names.js';
import { settledShard } from '../src/postgres-inbox-names.js';
import { parseTableName, type TableName } from '../src/postgres-table-name.js';
import { dropInbox } from './inbox-support.js';

const table = uniqueTable('inboxlk');

describePostgres('PostgresInbox lock order', () => {
  // Inside the suite: skipped with it when there is no server.
  afterAll(async () => {
    await dropInbox(table);
    await dropTablesAndEnd([]);
  });

  it('ack takes the session key row before its counter shard, as accept does', { timeout: 60_000 }, async () => {
    const inbox = new PostgresInbox({ connectionString: DATABASE_URL, table, maxConnections: 2 });
    const n = inboxNames(parseTableName(table) as TableName);
    const holder = await adminPool().connect();
    const probe = await adminPool().connect();
    try {
      await inbox.migrate();
      await inbox.accept({ sessionKey: 'k', signal: { kind: 'user_message', payload: 'x' }, id: 'a' });
      const [lease] = await inbox.acquire('w', { leaseMs: 60_000, max: 1 });
      const [entry] = await collect(inbox.read(lease!));
      await holder.query('BEGIN');
      const { rows } = await holder.query<{ pid: number }>(
        `SELECT pg_backend_pid() AS pid FROM ${n.keys.sql} WHERE key = $1 FOR UPDATE`,
        ['k'],
      );
      const holderPid = rows[0]!.pid;
      const acking = inbox.ack(entry!);
      // Until the ack waits for the holder (a hang guard: nothing is timed).
      for (let i = 0; ; i++) {
        const blocked = await probe.query('SELECT 1 FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [
          holderPid,
        ]);
        if (blocked.rowCount !== null && blocked.rowCount > 0) break;
        if (i > 1000) throw new Error('the ack never waited for the key row');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      // The ack holds no lock on the key's counter shard (the one settles count off on) while it waits for the key's row.
      await probe.query('BEGIN');
      const shard = await probe.query(
        `SELECT shard FROM ${n.counters.sql} WHERE shard = ${settledShard('$1')} FOR UPDATE NOWAIT`,
        ['k'],
      );
      expect(shard.rowCount).toBe(1);
      await probe.query('ROLLBACK');
      await holder.query('ROLLBACK');
      await acking;
      expect(await inbox.pending()).toEqual([]);
    } finally {
      await probe.query('ROLLBACK').catch(() => undefined);
      await holder.query('ROLLBACK').catch(() => undefined);
      probe.release();
      holder.release();
      await inbox.close();
    }
  });
});
