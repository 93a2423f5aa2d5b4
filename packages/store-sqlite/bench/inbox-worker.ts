// The worker process of inbox.bench.ts's recovery figure: a Runner settling the SqliteInbox in
// the file argv[2] (leaseMs 2000, pollMs 100) whose engine never finishes a turn, so the
// session's lease is held when the parent kills this process with SIGKILL. It reports `turn`
// when the turn has started.
import { SqliteCheckpointStore, SqliteInbox } from '@signalyard/store-sqlite';
import { createRunner } from 'signalyard';

const [path] = process.argv.slice(2);
if (path === undefined || process.send === undefined)
  throw new Error('usage: started by inbox.bench.ts: inbox-worker.ts <db>');

const runner = createRunner({
  store: new SqliteCheckpointStore({ path }),
  inbox: new SqliteInbox({ path, pollMs: 100 }),
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
