// The chaos test of inbox.md "Tests" on SQLite: 3 worker processes and a producer process share
// one database file (SqliteInbox + SqliteCheckpointStore); a random worker is killed with SIGKILL
// every 1.5 s for 20 s and restarted, then the workers drain the inbox, and the harness checks
// histories, effects and outcomes (see @signalyard/test-utils/chaos). Smaller runs:
// SIGNALYARD_CHAOS_SIGNALS=500 SIGNALYARD_CHAOS_CHAOS_MS=6000 … (chaosSizesFromEnv). Run with
// `pnpm test:chaos`.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { SqliteCheckpointStore, SqliteInbox } from '@signalyard/store-sqlite';
import { chaosSizesFromEnv, runChaos } from '@signalyard/test-utils/chaos';
import { createRunner } from 'signalyard';
import { afterAll, describe, expect, it } from 'vitest';
import { openEffects } from './fixtures/chaos-effects.js';

const packageDir = fileURLToPath(new URL('..', import.meta.url));
const fixture = (name: string): string => fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
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
    const inbox = new SqliteInbox({ path });
    const store = new SqliteCheckpointStore({ path });
    const reader = createRunner({
      store,
      agents: [{ id: 'crew' }, { id: 'committer' }].map((a) => ({ ...a, engine: () => Promise.resolve({}) })),
    });
    try {
      const figures = await runChaos({
        ...chaosSizesFromEnv(),
        workerScript: fixture('chaos-worker.ts'),
        producerScript: fixture('chaos-producer.ts'),
        cwd: packageDir,
        args: [path, effectsPath],
        pending: async () => (await inbox.pending({ limit: 1_000_000 })).length,
        history: async (key) => (await reader.session(key))?.history ?? [],
        effects: (table) => Promise.resolve(effects.keys(table)),
        outcome: async (receiptId) => {
          const outcome = await inbox.outcome(receiptId, { timeoutMs: 5000 });
          return {
            status: outcome.status,
            ...(outcome.error === undefined ? {} : { error: { code: outcome.error.code } }),
          };
        },
      });
      expect(figures.signals).toBeGreaterThan(0);
    } finally {
      await reader.close();
      await inbox.close();
      await store.close();
      effects.close();
    }
  });
});
