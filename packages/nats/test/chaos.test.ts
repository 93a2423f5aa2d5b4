// The chaos test of inbox.md "Tests" on JetStream: 3 worker processes and a producer process
// share a nats-server of the test's own (a JetStreamInbox, file storage) and one PostgreSQL
// database (PostgresCheckpointStore and the effects tables, tables of this run only, dropped
// after); a random worker is killed with SIGKILL every 1.5 s for 20 s and restarted, then the
// workers drain the inbox, and the harness checks histories, effects and outcomes (see
// @signalyard/test-utils/chaos). The second run also kills the NATS server (SIGKILL) once mid-run
// and starts it again on the same store directory: nothing accepted is lost, nothing settled
// twice. Smaller runs: SIGNALYARD_CHAOS_SIGNALS=500 SIGNALYARD_CHAOS_CHAOS_MS=6000 … (chaosSizesFromEnv).
import { randomBytes } from 'node:crypto';
import { JetStreamInbox } from '@signalyard/nats';
import { PostgresCheckpointStore } from '@signalyard/store-postgres';
import { chaosSizesFromEnv, type ChaosSizes } from '@signalyard/test-utils/chaos';
import { runInboxChaos } from '@signalyard/test-utils/chaos-inbox';
import { describeNats, startNatsServer, type NatsServer } from '@signalyard/test-utils/nats';
import { DATABASE_URL, adminPool, dropTablesAndEnd, uniqueTable } from '@signalyard/test-utils/postgres';
import { createRunner } from 'signalyard';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { CHAOS_CONNECT, CHAOS_MAX_PENDING } from './fixtures/chaos-connect.js';
import { createEffects, dropEffects, openEffects } from '@signalyard/test-utils/chaos-effects';

const storeTables: string[] = [];
const effectsPrefixes: string[] = [];

// Minutes of five processes at full speed: run by `pnpm test:chaos` (SIGNALYARD_CHAOS=1), not by
// every `pnpm test`. Needs PostgreSQL as well as nats-server.
const describeChaos = process.env.SIGNALYARD_CHAOS === '1' ? describeNats : describe.skip;

/** One chaos run over a fresh stream, checkpoint table and effects tables on `server`; `disrupt` as the harness takes it. */
async function chaosRun(server: NatsServer, disrupt?: (sizes: ChaosSizes) => Promise<void>): Promise<void> {
  const sizes = chaosSizesFromEnv();
  const leaseMs = sizes.leaseMs ?? 2000;
  const stream = `CHAOS_${randomBytes(4).toString('hex')}`;
  const storeTable = uniqueTable('js_chaos_store');
  const effectsPrefix = uniqueTable('js_chaos_fx');
  storeTables.push(storeTable);
  effectsPrefixes.push(effectsPrefix);
  const inbox = new JetStreamInbox({
    servers: server.url,
    stream,
    leaseMs,
    maxPending: CHAOS_MAX_PENDING,
    connectOptions: CHAOS_CONNECT,
  });
  const store = new PostgresCheckpointStore({ connectionString: DATABASE_URL, table: storeTable, maxConnections: 2 });
  // Everything exists before any child starts: the children never provision nor migrate.
  await inbox.provision();
  await store.migrate();
  await createEffects(adminPool(), effectsPrefix);
  await runInboxChaos({
    // Settling an entry is about ten requests to the server besides the checkpoint save: on a
    // loaded machine the drain of 5,000 entries has taken over 200 s.
    drainTimeoutMs: 600_000,
    ...sizes,
    testUrl: import.meta.url,
    createRunner,
    inbox,
    store,
    effects: openEffects(DATABASE_URL, effectsPrefix),
    args: [server.url, stream, DATABASE_URL, storeTable, effectsPrefix],
    ...(disrupt !== undefined && { disrupt: () => disrupt(sizes) }),
  });
}

describeChaos('JetStreamInbox under chaos (separate OS processes, kill -9; PostgreSQL checkpoint store)', () => {
  let server: NatsServer;
  beforeAll(async () => {
    server = await startNatsServer();
  });
  // Inside the suite: skipped with it when there is no nats-server.
  afterAll(async () => {
    await server.stop();
    for (const prefix of effectsPrefixes) await dropEffects(adminPool(), prefix);
    await dropTablesAndEnd(storeTables);
  });

  it('settles every accepted signal exactly once, in order, whatever workers die', { timeout: 1_200_000 }, async () => {
    await chaosRun(server);
  });

  it(
    'and when the NATS server itself is killed (SIGKILL) and restarted once mid-run: nothing accepted lost, nothing settled twice',
    { timeout: 1_200_000 },
    async () => {
      await chaosRun(server, async (sizes) => {
        // A third into the kills: the workers hold leases and the producer is accepting.
        await new Promise((resolve) => setTimeout(resolve, (sizes.chaosMs ?? 20_000) / 3));
        await server.kill('SIGKILL');
        const downAt = Date.now();
        await server.restart();
        console.log(
          `chaos: nats-server killed (SIGKILL) and restarted, listening again after ${String(Date.now() - downAt)} ms`,
        );
      });
    },
  );
});
