import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkpointStoreConformance } from '@signalyard/core/testing';
import { SqliteCheckpointStore } from '@signalyard/store-sqlite';
import { afterAll, describe, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'signalyard-sqlite-conformance-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

checkpointStoreConformance(
  'SqliteCheckpointStore (:memory:)',
  (opts) => new SqliteCheckpointStore({ path: ':memory:', ...opts }),
  { describe, it },
  { clock: true },
);

// Every test opens its own store on one shared file (the suite uses unique key prefixes), so
// the file is reopened many times with checkpoints already in it.
checkpointStoreConformance(
  'SqliteCheckpointStore (file, WAL)',
  (opts) => new SqliteCheckpointStore({ path: join(dir, 'conformance.db'), ...opts }),
  { describe, it },
  { clock: true },
);
