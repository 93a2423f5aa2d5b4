// One worker process of `--workers` mode: a Runner settling the inbox in the SQLite file argv[2]
// (worker id argv[3]). It tells its parent (over IPC) when a turn starts and when the tool runs.
import { SqliteCheckpointStore, SqliteInbox } from '@signalyard/store-sqlite';
import { createRunner } from 'signalyard';
import { courierAgent } from './workers-desk.js';

/** What a worker tells the story. */
export type WorkerReport =
  | { readonly type: 'ready'; readonly worker: string }
  | { readonly type: 'turn'; readonly worker: string; readonly sessionKey: string }
  | {
      readonly type: 'tool';
      readonly worker: string;
      readonly args: unknown;
      readonly idempotencyKey: string | undefined;
    };

const [path, worker] = process.argv.slice(2);
if (path === undefined || worker === undefined || process.send === undefined)
  throw new Error('usage: started by the support desk with an IPC channel: desk-worker.ts <db> <worker id>');
const report = (message: WorkerReport): void => {
  if (process.connected) process.send?.(message);
};

const store = new SqliteCheckpointStore({ path });
const inbox = new SqliteInbox({ path });
const runner = createRunner({
  store,
  inbox,
  // A short lease, so the story does not wait long for a killed worker's session.
  worker: { id: worker, leaseMs: 1500, pollMs: 100 },
  agents: [
    courierAgent((call) => {
      report({ type: 'tool', worker, ...call });
    }),
  ],
});
runner.on((event) => {
  if (event.type === 'turn_start') report({ type: 'turn', worker, sessionKey: event.sessionKey });
});
await runner.start();
report({ type: 'ready', worker });
process.on('message', (message) => {
  if ((message as { type?: string }).type !== 'close') return;
  void runner
    .close()
    .then(() => inbox.close())
    .then(() => store.close())
    .finally(() => {
      process.disconnect();
    });
});
