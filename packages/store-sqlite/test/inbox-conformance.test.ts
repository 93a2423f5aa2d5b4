import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inboxConformance } from '@signalyard/core/testing';
import { SqliteInbox } from '@signalyard/store-sqlite';
import { afterAll, describe, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'signalyard-sqlite-inbox-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

let n = 0;

// A fresh file per case; a second SqliteInbox on it plays a second process (this process's
// inboxes on one file hear each other at once; tests/sqlite-inbox-processes.test.ts covers
// other processes, heard by polling).
inboxConformance(
  'SqliteInbox (file, WAL)',
  (limits) => {
    const path = join(dir, `inbox-${n++}.db`);
    return {
      inbox: new SqliteInbox({ path, pollMs: 10, ...limits }),
      another: () => new SqliteInbox({ path, pollMs: 10, ...limits }),
    };
  },
  { describe, it },
);

inboxConformance('SqliteInbox (:memory:)', (limits) => ({ inbox: new SqliteInbox({ path: ':memory:', ...limits }) }), {
  describe,
  it,
});
