// A worker process of `--workers N` (started by the web tier, see desk-workers.ts): leases
// sessions from the SQLite inbox and applies their turns on the desk's model.
//   node --conditions=@signalyard/source --import tsx src/worker.ts --db .data/web-chat.db [--lease-ms 5000]
import { defaultModel } from './desk.js';
import { serveDeskWorker } from './desk-workers.js';

serveDeskWorker(defaultModel().model);
