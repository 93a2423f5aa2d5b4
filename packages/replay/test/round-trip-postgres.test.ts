// Round trip on PostgreSQL (replay.md "Tests"): the desk week run live on a PostgreSQL store →
// exportCassettes → replay with the same configuration → every session `same`, no tool run; a
// planted change detected at its turn and field.
import { PostgresCheckpointStore } from '@signalyard/store-postgres';
import { DATABASE_URL, describePostgres, dropTablesAndEnd, uniqueTable } from '@signalyard/test-utils/postgres';
import { afterAll, expect, it } from 'vitest';
import { exportCassettes, replay, type ReplayRunnerParts } from '../src/index.js';
import { desk, deskTools, liveModel, liveWeek, steppingClock, throwingTools, type DeskChanges } from './desk.js';

const tables: string[] = [];
afterAll(async () => {
  await dropTablesAndEnd(tables);
});

const today =
  (changes: DeskChanges = {}, tools = throwingTools()) =>
  (parts: ReplayRunnerParts) =>
    desk({ ...parts, tools: parts.tools(tools.tools) }, changes);

describePostgres('store → exportCassettes → replay (PostgreSQL)', () => {
  it('every session same with the same configuration; a moved marker diverges at turn 1', async () => {
    const table = uniqueTable('replay');
    tables.push(table);
    const store = new PostgresCheckpointStore({ connectionString: DATABASE_URL, table, maxConnections: 2 });
    try {
      await store.migrate();
      const runner = desk({ store, clock: steppingClock(), model: liveModel(), tools: deskTools().tools });
      await liveWeek(runner);
      await runner.close();
      const cassettes = await exportCassettes(store);
      expect(cassettes).toHaveLength(5);
      expect(cassettes.flatMap((c) => c.turns).every((t) => t.partial === undefined)).toBe(true);
      const tools = throwingTools();
      const report = await replay(cassettes, { runner: today({}, tools) });
      expect(report).toMatchObject({ same: 5, diverged: 0, failed: 0, partial: 0 });
      expect(tools.calls).toEqual([]);
      const renamed = await replay(cassettes, { runner: today({ marker: '[TO_PAYMENTS]' }) });
      const u2 = renamed.sessions.find((s) => s.sessionKey.endsWith(':u2'));
      expect(u2?.divergence?.turn).toBe(1);
      expect(u2?.divergence?.path).toMatch(/^handoffs\[0\]/);
    } finally {
      await store.close();
    }
  });
});
