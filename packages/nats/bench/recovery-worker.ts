// The worker process of inbox.bench.ts's recovery figure (not a benchmark itself): a Runner
// settling a JetStreamInbox (stream argv[3] on the nats-server argv[2]; leaseMs 2,000, pollMs
// 100) over a PostgresCheckpointStore (database argv[4], table argv[5]) whose engine never
// finishes a turn, so the session's lease is held when the parent kills this process with
// SIGKILL. It reports `ready`, then `turn` when the turn has started. Imports the built packages.
import { JetStreamInbox } from '@signalyard/nats';
import { PostgresCheckpointStore } from '@signalyard/store-postgres';
import { createRunner } from 'signalyard';

const [servers, stream, url, table] = process.argv.slice(2);
if (servers === undefined || stream === undefined || url === undefined || table === undefined || !process.send)
  throw new Error('usage: started by inbox.bench.ts: recovery-worker.ts <nats url> <stream> <database url> <table>');

const runner = createRunner({
  store: new PostgresCheckpointStore({ connectionString: url, table, maxConnections: 2 }),
  inbox: new JetStreamInbox({ servers, stream, leaseMs: 2000, pollMs: 100 }),
  worker: { id: `bench-${String(process.pid)}`, leaseMs: 2000, pollMs: 100 },
  agents: [
    {
      id: 'main',
      engine: () => {
        process.send?.({ type: 'turn' });
        return new Promise(() => undefined);
      },
    },
  ],
});
await runner.start();
// Listening keeps the IPC channel, and so this process, alive (the worker's own timers are unref'd).
process.on('message', () => undefined);
process.send({ type: 'ready' });
