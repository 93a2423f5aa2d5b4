// `pnpm example`: the support desk. `--store sqlite:PATH` keeps sessions in a SQLite file, so a
// second run continues the first one's sessions. `--inspect` then keeps a desk runner over the
// same store serving, with the inspector page attached: it prints the page's URL and serves until
// Ctrl-C (`--port N` picks the port; default 4319). `--workers N` (2 or more) tells a conversation
// settled by N worker processes through a SQLite inbox instead (src/workers.ts), with one worker
// killed mid-turn (in the `--store sqlite:PATH` file, else a temporary one).
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CheckpointStore } from '@signalyard/core';
import { MemoryCheckpointStore } from '@signalyard/core';
import { startInspector } from '@signalyard/inspector';
import { SqliteCheckpointStore } from '@signalyard/store-sqlite';
import { createDesk, deskModel } from './desk.js';
import { connectOrders } from './orders.js';
import { runSupportDesk } from './support-desk.js';
import { runWorkersStory } from './workers.js';

const args = process.argv.slice(2);
const valueOf = (flag: string): string | undefined => {
  const at = args.indexOf(flag);
  return at === -1 ? undefined : args[at + 1];
};
const fail = (message: string): never => {
  process.stderr.write(`support-desk: ${message}\n`);
  process.exit(2);
};

const spec = args.includes('--store') ? valueOf('--store') : 'memory';
if (spec === undefined || (spec !== 'memory' && !spec.startsWith('sqlite:')))
  fail(`--store expects "memory" or "sqlite:PATH", got ${JSON.stringify(spec)}`);
const port = args.includes('--port') ? Number(valueOf('--port')) : 4319;
if (!Number.isInteger(port) || port < 0 || port > 65535)
  fail(`--port expects a port number 0-65535, got ${JSON.stringify(valueOf('--port'))}`);

if (args.includes('--workers')) {
  // The desk's conversation settled by worker processes through a SQLite inbox (src/workers.ts).
  const workers = Number(valueOf('--workers'));
  if (!Number.isInteger(workers) || workers < 2)
    fail(`--workers expects a number of worker processes, 2 or more, got ${JSON.stringify(valueOf('--workers'))}`);
  const path = spec?.startsWith('sqlite:')
    ? spec.slice('sqlite:'.length)
    : join(mkdtempSync(join(tmpdir(), 'support-desk-')), 'desk.db');
  await runWorkersStory({ path, workers });
  process.exit(0);
}

const store: CheckpointStore = spec?.startsWith('sqlite:')
  ? new SqliteCheckpointStore({ path: spec.slice('sqlite:'.length) })
  : new MemoryCheckpointStore();
await runSupportDesk({ store });

if (args.includes('--inspect')) {
  // A desk runner over the sessions the script left, recording from its start, with the page attached.
  const orders = await connectOrders();
  const runner = createDesk(store, deskModel(), () => undefined, orders);
  const inspector = await startInspector({ runner, port });
  process.stdout.write(`\nInspector: ${inspector.url}\n(serving until Ctrl-C)\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  await inspector.close();
  await runner.close();
  await orders.close();
}
await store.close?.();
