// `pnpm --filter @signalyard-examples/web-chat start`: the support desk in a browser.
// Options: --port N (default 4320), --db PATH (default .data/web-chat.db; ':memory:' for none),
// --workers N (default 0: this process applies the turns; N > 0: this process serves HTTP and
// accepts into a SQLite inbox in the db file, N worker processes apply — see desk-workers.ts),
// --lease-ms N (the workers' lease: how soon a killed worker's turn starts again elsewhere).
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import type { Runner } from 'signalyard';
import { defaultModel, deskRunner } from './desk.js';
import { deskWebTier, spawnDeskWorkers, type DeskWorkerProcess } from './desk-workers.js';
import { startWebChat } from './server.js';

const args = process.argv.slice(2);
const { values } = parseArgs({
  args: args[0] === '--' ? args.slice(1) : args, // `pnpm start -- --port 8080` passes the `--` on
  options: {
    port: { type: 'string', default: '4320' },
    db: { type: 'string', default: '.data/web-chat.db' },
    workers: { type: 'string', default: '0' },
    'lease-ms': { type: 'string', default: '5000' },
  },
});
const workerCount = Number(values.workers);
if (!Number.isInteger(workerCount) || workerCount < 0)
  throw new Error(`--workers: expected a whole number, got ${values.workers}`);
if (workerCount > 0 && values.db === ':memory:')
  throw new Error('--workers needs a db file the processes share, not :memory:');
if (values.db !== ':memory:') mkdirSync(dirname(values.db), { recursive: true });
const { model, name } = defaultModel();

let runner: Runner;
let workers: DeskWorkerProcess[] = [];
if (workerCount === 0) {
  runner = deskRunner({ dbPath: values.db, model });
} else {
  runner = deskWebTier({ dbPath: values.db, model });
  workers = spawnDeskWorkers({ count: workerCount, dbPath: values.db, leaseMs: Number(values['lease-ms']) });
  await Promise.all(workers.map((w) => w.ready));
}
const chat = await startWebChat({ runner, port: Number(values.port), resumable: workerCount > 0 });
console.log(`Signalyard web chat: ${chat.url}`);
console.log(`  reviewer ${chat.reviewUrl}   (approves or denies refunds over $100; keep it to yourself)`);
console.log(`  model    ${name}`);
console.log(`  sessions ${values.db}`);
if (workerCount > 0) {
  console.log(
    `  workers  ${workers.map((w) => `pid ${String(w.process.pid)}`).join(', ')}   (kill -9 one mid-reply: another takes the turn over)`,
  );
}
console.log('  try      "my invoice charged me twice", then "please refund $420"   (Ctrl-C to stop)');

const stop = (): void => {
  void chat
    .close()
    .then(() => Promise.all(workers.map((w) => w.stop())))
    .then(() => runner.close());
};
process.once('SIGINT', stop);
process.once('SIGTERM', stop);
