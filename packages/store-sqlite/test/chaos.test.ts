// The chaos test of inbox.md "Tests" on SQLite: 3 worker processes and a producer process share
// one database file (SqliteInbox + SqliteCheckpointStore); a random worker is killed with SIGKILL
// every 1.5 s for 20 s and restarted, then the workers drain the inbox, and the harness checks
// histories, effects and outcomes (see @signalyard/test-utils/chaos). Smaller runs:
// SIGNALYARD_CHAOS_SIGNALS=500 SIGNALYARD_CHAOS_CHAOS_MS=6000 … (chaosSizesFromEnv). Run with
// `pnpm test:chaos`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteCheckpointStore, SqliteInbox } from '@signalyard/store-sqlite';
import { chaosSizesFromEnv } from '@signalyard/test-utils/chaos';
import { runInboxChaos } from '@signalyard/test-utils/chaos-inbox';
import { createRunner } from 'signalyard';
import { afterAll, describe, it } from 'vitest';
import { openEffects } from './fixtures/chaos-effects.js';

const dir = mkdtempSync(join(tmpdir(), 'signalyard-sqlite-chaos-'));
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

// A minute of four processes at full speed: run by `pnpm test:chaos` (SIGNALYARD_CHAOS=1), not by
// every `pnpm test`.
const describeChaos = process.env.SIGNALYARD_CHAOS === '1' ? describe : describe.skip;

describeChaos('SqliteInbox under chaos (separate OS processes, kill -9)', () => {
  it('settles every accepted signal exactly once, in order, whatever workers die', { timeout: 900_000 }, async () => {
    const path = join(dir, 'chaos.db');
    const effectsPath = join(dir, 'effects.db');
    const effects = openEffects(effectsPath); // creates the tables before any worker starts
    await runInboxChaos({
      ...chaosSizesFromEnv(),
      testUrl: import.meta.url,
      createRunner,
      inbox: new SqliteInbox({ path }),
      store: new SqliteCheckpointStore({ path }),
      effects,
      args: [path, effectsPath],
    });
  });
});
