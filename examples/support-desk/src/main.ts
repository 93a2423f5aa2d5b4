// `pnpm example`: the support desk. `--store sqlite:PATH` keeps sessions in a SQLite file, so a
// second run continues the first one's sessions.
import type { CheckpointStore } from '@signalyard/core';
import { SqliteCheckpointStore } from '@signalyard/store-sqlite';
import { runSupportDesk } from './support-desk.js';

const args = process.argv.slice(2);
const at = args.indexOf('--store');
const spec = at === -1 ? 'memory' : args[at + 1];
let store: CheckpointStore | undefined;
if (spec === undefined || (spec !== 'memory' && !spec.startsWith('sqlite:'))) {
  process.stderr.write(`support-desk: --store expects "memory" or "sqlite:PATH", got ${JSON.stringify(spec)}\n`);
  process.exit(2);
}
if (spec.startsWith('sqlite:')) store = new SqliteCheckpointStore({ path: spec.slice('sqlite:'.length) });
await runSupportDesk(store === undefined ? {} : { store });
await store?.close?.();
