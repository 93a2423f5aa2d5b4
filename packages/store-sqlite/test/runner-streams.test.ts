// Streams from any worker, resumable (inbox.md), over one SQLite file: the shared suite of
// @signalyard/test-utils/runner-streams (a producer runner streams what a worker runner applies,
// a reader resumes from an offset, a dead worker's turn is restarted by the next one), each runner
// over fresh handles on the test's file (as another process would open it).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scriptedModel } from '@signalyard/core/testing';
import { SqliteCheckpointStore, SqliteInbox } from '@signalyard/store-sqlite';
import { runnerStreamsSuite } from '@signalyard/test-utils/runner-streams';
import { createRunner } from 'signalyard';

const pollMs = 20;
let dir = '';
let files = 0;

runnerStreamsSuite({
  name: 'SqliteInbox',
  createRunner,
  scriptedModel,
  pollMs,
  leaseMs: 300,
  beforeAll: () => {
    dir = mkdtempSync(join(tmpdir(), 'signalyard-runner-streams-'));
  },
  afterAll: () => {
    rmSync(dir, { recursive: true, force: true });
  },
  storage: () => {
    const path = join(dir, `streams-${String(files++)}.db`);
    return Promise.resolve({
      inbox: () => new SqliteInbox({ path, pollMs }),
      store: () => new SqliteCheckpointStore({ path }),
    });
  },
});
